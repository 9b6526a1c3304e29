// Measures, in headless Chromium: (1) the time from opening the page until a session's tail
// row is shown, (2) scrolling up: the time from scrolling the pane to its top until the older
// page is in, ten times, and the frames meanwhile, (3) frames while a reply streams into the open
// pane, with the page's own work
// per frame (renders, style recalculations, layouts, script time: Chrome's Performance metrics),
// which a loaded machine does not inflate the way it inflates dropped frames.
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
// Each frame also records the page's render count so far (window.agentstream.renderStats,
// absent in older builds of the page).
const startFrames = () =>
  page.evaluate(() => {
    const w = window;
    w.__frames = [];
    w.__renders = [];
    const count = () => {
      const r = w.agentstream?.renderStats;
      return r ? [r.app, r.list] : null;
    };
    const tick = (t) => {
      w.__frames.push(t);
      w.__renders.push(count());
      if (w.__frames.length < 100000) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
// Renders between two frames, of the whole page (App) and of the timeline list (one pane open:
// a list render without an App render is a second pass in that frame).
const renderStats = async () => {
  const r = await page.evaluate(() => window.__renders);
  if (!r.length || !r[0]) return 'renders per frame: not counted by this build';
  const app = r.slice(1).map((v, i) => v[0] - r[i][0]);
  const list = r.slice(1).map((v, i) => v[1] - r[i][1]);
  const passes = list.map((n, i) => Math.max(n, app[i]));
  return (
    `render passes per frame: max ${Math.max(0, ...passes)}, frames with more than one: ${passes.filter((n) => n > 1).length} ` +
    `of ${passes.filter((n) => n > 0).length} frames rendered (${app.reduce((a, b) => a + b, 0)} page renders, ${list.reduce((a, b) => a + b, 0)} list renders)`
  );
};
const cdp = await page.context().newCDPSession(page);
await cdp.send('Performance.enable');
const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
// Scrolling up through the history, one `before` page at a time.
const timeline = `[data-testid="pane"][data-agent="${agent}"] [data-testid="timeline"]`;
await startFrames();
const scrolls = [];
for (let i = 0; i < 10; i++) {
  const height = await page.$eval(timeline, (el) => el.scrollHeight);
  const t0 = Date.now();
  await page.$eval(timeline, (el) => {
    el.scrollTop = 0;
  });
  await page.waitForFunction(([sel, h]) => document.querySelector(sel).scrollHeight > h, [timeline, height], { timeout: 10000 });
  scrolls.push(Date.now() - t0);
}
const sortedScrolls = [...scrolls].sort((a, b) => a - b);
console.log(
  `scrolling up: older page in after median ${sortedScrolls[4]} ms, max ${sortedScrolls[9]} ms (10 pages); ${await frameStats()}`,
);

// Back to the bottom, where the list follows the tail: the streamed rows below are then in the
// DOM and on screen (after the scrolling above they would be far below the viewport, not
// rendered at all by the virtualized list).
await page.$eval(timeline, (el) => {
  el.scrollTop = el.scrollHeight;
});
await page.waitForTimeout(500);
await page.$eval(timeline, (el) => {
  el.scrollTop = el.scrollHeight;
});
// Baseline: the same page, nothing streaming (the machine's own noise). The frame loop the
// scrolling started goes on; its records start again here.
await page.evaluate(() => {
  window.__frames = [];
  window.__renders = [];
});
const i0 = await metrics();
await page.waitForTimeout(5000);
const i1 = await metrics();
const work = (a, b) => {
  const d = (name) => b[name] - a[name];
  return (
    `style recalcs ${d('RecalcStyleCount')}, layouts ${d('LayoutCount')} (${(d('LayoutDuration') * 1000).toFixed(0)} ms), ` +
    `script ${(d('ScriptDuration') * 1000).toFixed(0)} ms, all tasks ${(d('TaskDuration') * 1000).toFixed(0)} ms`
  );
};
console.log(`idle: ${await frameStats()}; the page's own work in 5 s: ${await renderStats()}; ${work(i0, i1)}`);

// Streaming: the same frame loop while replies stream into the open pane.
await page.evaluate(() => {
  window.__frames = [];
  window.__renders = [];
  window.__long = [];
  new PerformanceObserver((list) => window.__long.push(...list.getEntries().map((e) => e.duration))).observe({
    type: 'longtask',
  });
});
const before = Number((await api('GET', `/v1/agents/${agent}`)).cursor.split(':')[1]);
const m0 = await metrics();
for (let i = 0; i < 6; i++)
  await api('POST', `/v1/agents/${agent}/messages`, {
    text: `stream ${Date.now()} ${i}`,
    clientMessageId: `m-${Date.now()}-${i}`,
    whileRunning: 'queue',
  });
await page.waitForTimeout(5000);
const m1 = await metrics();
const after = Number((await api('GET', `/v1/agents/${agent}`)).cursor.split(':')[1]);
const long = await page.evaluate(() => window.__long);
console.log(
  `streaming: ${after - before} events in 5 s; ${await frameStats()}; ` +
    `main-thread tasks over 50 ms: ${long.length} (longest ${Math.round(Math.max(0, ...long))} ms)`,
);
console.log(`streaming, the page's own work in 5 s: ${await renderStats()}; ${work(m0, m1)}`);

// A long Markdown reply: the scripted agent quotes the prompt, so a prompt of 120 Markdown
// blocks (paragraphs, lists, highlighted code; about 20 KB) streams back as one long message,
// rendered block by block while it grows.
const blocks = [];
for (let i = 0; i < 40; i++)
  blocks.push(
    `## Step ${i}\n\nThe **parser** reads \`input ${i}\` and [links](https://example.com/${i}) it.`,
    `- first item ${i}\n- second item with *emphasis*\n- third`,
    '```ts\n' + `export function step${i}(s: string): number {\n  return Number(s) + ${i}; // step ${i}\n}` + '\n```',
  );
const longText = `\n\n${blocks.join('\n\n')}`;
// First the queued prompts of the streaming phase end.
for (let i = 0; i < 300 && (await api('GET', `/v1/agents/${agent}`)).status !== 'idle'; i++)
  await new Promise((r) => setTimeout(r, 100));
await page.evaluate(() => {
  window.__frames = [];
  window.__renders = [];
  window.__long = [];
});
const l0 = await metrics();
await api('POST', `/v1/agents/${agent}/messages`, { text: longText, clientMessageId: `md-${Date.now()}`, whileRunning: 'queue' });
await page.waitForTimeout(5000);
const l1 = await metrics();
const longMd = await page.evaluate(() => window.__long);
const onScreen = await page.$eval(timeline, (el) => el.scrollHeight - el.scrollTop - el.clientHeight < 24);
const shownLong = await page
  .locator(`[data-testid="pane"][data-agent="${agent}"] [data-testid="assistant-message"][data-finished="true"] pre.md-code`)
  .filter({ hasText: 'step39' })
  .count();
console.log(
  `long Markdown reply (${longText.length} chars, 120 blocks, ${shownLong ? 'streamed and shown' : 'NOT shown'} within the 5 s, ${onScreen ? 'the list at its bottom' : 'the list NOT at its bottom'}): ${await frameStats()}; ` +
    `main-thread tasks over 50 ms: ${longMd.length} (longest ${Math.round(Math.max(0, ...longMd))} ms); ${work(l0, l1)}`,
);
await browser.close();
