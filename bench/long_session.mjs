// One daemon restart on a long session (docs/benchmarks.md, "Sessions of any length"; run by
// bench/long_session.sh). Starts `BIN --data DATA [--store URL] serve --listen 127.0.0.1:0` on the
// session gen_long_session wrote, reads the port the daemon printed, and measures, one step after
// the other on that one daemon:
//   ready_ms       process start to the first 200 of GET /healthz
//   tail_ms        GET /v1/agents/ID/timeline?direction=tail&limit=50 (the first page: the
//                  daemon builds its timeline index of the session)
//   before_ms      a `before` page of 50 with a cursor in the middle of the session
//   prompt_ms      POST /v1/agents/ID/messages (what `agentstream send` does) until the reply
//                  says "accepted" (the turn started and the provider took the prompt; the agent
//                  is loaded from the log first)
//   peak_rss_mib   the daemon's VmHWM (/proc/PID/status) once that turn has ended
//                  (pages_rss_mib: its VmHWM after the two pages, before the prompt;
//                  anon_mib: its RssAnon then, the heap without the pages of the SQLite file
//                  that its readers map, which VmHWM counts)
// then stops the daemon with SIGTERM. Prints the figures as one JSON line; exits 1 when a step
// fails (the daemon's output is in DATA/../daemon.log).
//   node bench/long_session.mjs BIN DATA SESSION EVENTS [STORE_URL] [CLIENT_MESSAGE_ID]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { call, sleep } from '../tests/lib/daemons.mjs';

const [bin, data, session, eventsText, store = '', clientId = 'bench-first'] =
  process.argv.slice(2);
if (!bin || !data || !session || !eventsText) {
  console.error('usage: node bench/long_session.mjs BIN DATA SESSION EVENTS [STORE_URL] [CLIENT_MESSAGE_ID]');
  process.exit(2);
}
const events = Number(eventsText);
const kStepTimeoutMs = 600000;  // one HTTP step; a 10,000,000-event session needs tens of seconds

function fail(message) {
  console.error(`long_session: ${message}`);
  process.exit(1);
}

function vmKib(pid, field) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) : 0;
}

// The daemon, and the URL it printed; rejects when it exits first or takes over 10 minutes.
function startDaemon(startedAt) {
  const args = ['--data', data, ...(store ? ['--store', store] : []), 'serve', '--listen',
                '127.0.0.1:0'];
  const log = fs.openSync(path.join(path.dirname(data), 'daemon.log'), 'a');
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', log] });
  fs.closeSync(log);
  process.on('exit', () => proc.exitCode === null && proc.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error('the daemon did not serve within 600 s')), kStepTimeoutMs);
    proc.stdout.on('data', (chunk) => {
      seen += chunk.toString();
      const m = seen.match(/^agentstream: serving on (http:\/\/[^\s]+)/m);
      if (m) {
        clearTimeout(timer);
        proc.stdout.resume();
        resolve({ proc, url: m[1], servingMs: performance.now() - startedAt });
      }
    });
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited (${code ?? signal}) before serving`));
    });
  });
}

async function timed(what, method, target, body, check) {
  const start = performance.now();
  const r = await call(url, method, target, body, kStepTimeoutMs);
  const ms = performance.now() - start;
  if (r.error || r.status !== 200 || !check(r.json)) fail(`${what}: ${r.error || `${r.status} ${r.text}`}`);
  return { ms, json: r.json };
}

// fetch() sets itself up on its first call (tens of ms): not the daemon's time, so spent on a
// throw-away local server before the clock starts.
async function warmUpFetch() {
  const server = http.createServer((req, res) => res.end('ok'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await call(`http://127.0.0.1:${server.address().port}`, 'GET', '/', undefined, 5000);
  await new Promise((resolve) => server.close(resolve));
}

await warmUpFetch();
const startedAt = performance.now();
const daemon = await startDaemon(startedAt).catch((e) => fail(e.message));
const url = daemon.url;
for (let attempt = 0; ; ++attempt) {
  const r = await call(url, 'GET', '/healthz', undefined, 5000);
  if (r.status === 200) break;
  if (attempt >= 2000) fail(`/healthz: ${r.error || r.status}`);
  await sleep(5);
}
const readyMs = performance.now() - startedAt;

const agent = `/v1/agents/${session}`;
const tail = await timed('tail page', 'GET', `${agent}/timeline?direction=tail&limit=50`, undefined,
                         (j) => j && j.items.length > 0 && j.tail >= events);
const middle = `1:${Math.floor(events / 2)}`;
const before = await timed('before page', 'GET', `${agent}/timeline?direction=before&cursor=${middle}&limit=50`,
                           undefined, (j) => j && j.items.length > 0);
const pagesPeakKib = vmKib(daemon.proc.pid, 'VmHWM');
const prompt = await timed('first prompt', 'POST', `${agent}/messages`,
                           { text: 'One more: run the whole suite.', clientMessageId: clientId },
                           (j) => j && j.outcome === 'accepted');
// The turn the prompt started runs to its end before the peak is read.
for (let waited = 0; ; waited += 20) {
  const r = await call(url, 'GET', agent, undefined, 5000);
  if (r.status === 200 && r.json.status === 'idle' && !r.json.activeTurn) break;
  if (waited > 120000) fail(`the turn did not end: ${r.error || r.text}`);
  await sleep(20);
}
const peakKib = vmKib(daemon.proc.pid, 'VmHWM');
const rssKib = vmKib(daemon.proc.pid, 'VmRSS');
const anonKib = vmKib(daemon.proc.pid, 'RssAnon');
const exited = new Promise((resolve) => daemon.proc.once('exit', resolve));
daemon.proc.kill('SIGTERM');
await exited;
console.log(JSON.stringify({
  events,
  serving_ms: Number(daemon.servingMs.toFixed(1)),
  ready_ms: Number(readyMs.toFixed(1)),
  tail_ms: Number(tail.ms.toFixed(1)),
  before_ms: Number(before.ms.toFixed(1)),
  prompt_ms: Number(prompt.ms.toFixed(1)),
  peak_rss_mib: Number((peakKib / 1024).toFixed(1)),
  pages_rss_mib: Number((pagesPeakKib / 1024).toFixed(1)),
  rss_after_mib: Number((rssKib / 1024).toFixed(1)),
  anon_mib: Number((anonKib / 1024).toFixed(1)),
  tail_items: tail.json.items.length,
  before_items: before.json.items.length,
}));
