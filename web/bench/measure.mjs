// Measures, in headless Chromium: (1) the time from opening the page until a session's tail
// row is shown, (2) frames while a reply streams into the open pane.
// Usage: node measure.mjs URL AGENT_ID  (CHROMIUM defaults to /usr/bin/chromium)
import { chromium } from '@playwright/test';

const [url, agent] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
const api = async (method, path, body) => {
  const res = await fetch(url + path, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
};
const snap = await api('GET', `/v1/agents/${agent}`);
const tail = await api('GET', `/v1/agents/${agent}/timeline?direction=tail&limit=1`);
const lastKey = tail.items.at(-1).key;

const runs = [];
const loads = [];
for (let i = 0; i < 5; i++) {
  const tLoad = Date.now();
  await page.goto(url);
  await page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`).waitFor();
  const t0 = Date.now();
  await page.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-open`).click();
  await page.locator(`[data-testid="pane"][data-agent="${agent}"] [data-key="${lastKey}"]`).waitFor();
  runs.push(Date.now() - t0);
  loads.push(Date.now() - tLoad);
}
runs.sort((a, b) => a - b);
loads.sort((a, b) => a - b);
console.log(
  `session: ${snap.cursor.split(':')[1]} events; click to tail shown: median ${runs[2]} ms, max ${runs[4]} ms; ` +
    `page load + click to tail shown: median ${loads[2]} ms, max ${loads[4]} ms (5 runs)`,
);

// Frames over 5 s: p50 / p99 / max interval and frames dropped at 60 fps.
const frameStats = async () => {
  const frames = await page.evaluate(() => window.__frames);
  const gaps = frames.slice(1).map((t, i) => t - frames[i]);
  const seconds = (frames.at(-1) - frames[0]) / 1000;
  const dropped = gaps.reduce((n, g) => n + Math.max(0, Math.round(g / (1000 / 60)) - 1), 0);
  gaps.sort((a, b) => a - b);
  return (
    `${(frames.length / seconds).toFixed(1)} frames/s; frame interval p50 ${gaps[Math.floor(gaps.length / 2)].toFixed(1)} ms, ` +
    `p99 ${gaps[Math.floor(gaps.length * 0.99)].toFixed(1)} ms, max ${gaps.at(-1).toFixed(1)} ms; dropped frames at 60 fps: ${dropped}`
  );
};
const startFrames = () =>
  page.evaluate(() => {
    const w = window;
    w.__frames = [];
    const tick = (t) => {
      w.__frames.push(t);
      if (w.__frames.length < 100000) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
// Baseline: the same page, nothing streaming (the machine's own noise).
await startFrames();
await page.waitForTimeout(5000);
console.log(`idle: ${await frameStats()}`);

// Streaming: the same frame loop while replies stream into the open pane.
await page.evaluate(() => {
  window.__frames = [];
  window.__long = [];
  new PerformanceObserver((list) => window.__long.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
});
const before = Number((await api('GET', `/v1/agents/${agent}`)).cursor.split(':')[1]);
for (let i = 0; i < 6; i++)
  await api('POST', `/v1/agents/${agent}/messages`, { text: `stream ${Date.now()} ${i}`, clientMessageId: `m-${Date.now()}-${i}`, whileRunning: 'queue' });
await page.waitForTimeout(5000);
const after = Number((await api('GET', `/v1/agents/${agent}`)).cursor.split(':')[1]);
const long = await page.evaluate(() => window.__long);
console.log(
  `streaming: ${after - before} events in 5 s; ${await frameStats()}; ` +
    `main-thread tasks over 50 ms: ${long.length} (longest ${Math.round(Math.max(0, ...long))} ms)`,
);
await browser.close();
