// The time to show the "needs you" inbox at 390 x 844 (a phone), in headless Chromium:
// (1) cold: a new browser context each run (no service worker, no HTTP cache, nothing in
//     localStorage), from navigation start until the inbox lists every agent waiting for
//     permission; (2) warm: a second load in the same context, the service worker controlling it
//     (the shell from its cache); (3) offline: that context offline, until the inbox shows the
//     stale list.
// The daemon gets AGENTS scripted agents, WAITING of them asked for permission.
// Usage: node bench/inbox_cold.mjs URL [AGENTS=20] [WAITING=5] [RUNS=7]
import { chromium } from '@playwright/test';
import { daemonApi } from './api.mjs';

const [url, agentsArg = '20', waitingArg = '5', runsArg = '7'] = process.argv.slice(2);
if (!url) {
  console.error('usage: node bench/inbox_cold.mjs URL [AGENTS] [WAITING] [RUNS]');
  process.exit(2);
}
const [agents, waiting, runs] = [Number(agentsArg), Number(waitingArg), Number(runsArg)];
const api = daemonApi(url);

const ids = [];
for (let i = 0; i < agents; i++)
  ids.push((await api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: `bench ${i}` })).id);
for (const id of ids.slice(0, waiting))
  await api('POST', `/v1/agents/${id}/messages`, { text: 'needs permission please', clientMessageId: `bench-${id}` });
for (;;) {
  const list = await api('GET', '/v1/agents');
  const n = (list.agents ?? list).filter((a) => a.status === 'permission').length;
  if (n >= waiting) break;
  await new Promise((r) => setTimeout(r, 100));
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const shown = (page) =>
  page
    .locator('[data-testid="inbox-entry"][data-kind="permission"]')
    .nth(waiting - 1)
    .waitFor();
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]} ms, max ${s.at(-1)} ms`;
};
const cold = [];
const warm = [];
const offline = [];
for (let i = 0; i < runs; i++) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  let t0 = Date.now();
  await page.goto(url);
  await shown(page);
  cold.push(Date.now() - t0);
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.waitForFunction(
    () => (JSON.parse(localStorage.getItem('agentstream.agents') ?? '{"agents":[]}').agents ?? []).length > 0,
  );
  t0 = Date.now();
  await page.reload();
  await shown(page);
  warm.push(Date.now() - t0);
  await context.setOffline(true);
  t0 = Date.now();
  await page.reload();
  await page.getByTestId('inbox').getByTestId('stale').waitFor();
  offline.push(Date.now() - t0);
  await context.close();
}
await browser.close();
console.log(`${agents} agents, ${waiting} waiting for permission; ${runs} runs at 390x844`);
console.log(`cold start to inbox shown: ${stat(cold)}`);
console.log(`warm (service worker) reload to inbox shown: ${stat(warm)}`);
console.log(`offline reload to the stale inbox: ${stat(offline)}`);
