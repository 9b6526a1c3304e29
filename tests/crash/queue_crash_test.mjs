// Acknowledged prompts survive kill -9: a daemon on its SQLite store gets bursts of prompts for
// one agent (most of them answered "queued"), and is killed with SIGKILL at a random moment of
// each burst, then started again on its data directory. At the end every acknowledged
// clientMessageId appears exactly once as a user message, in the order the daemon acknowledged
// queued ones, and an unacknowledged one at most once; `agentstream check` is clean.
//   node tests/crash/queue_crash_test.mjs AGENTSTREAM_BIN
// Environment: AGENTSTREAM_CRASH_CYCLES (default 20), AGENTSTREAM_QUEUE_BURST (default 20).
import { TestEnv, call, fail, sleep } from '../lib/daemons.mjs';
import { execFileSync } from 'node:child_process';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node queue_crash_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const CYCLES = Math.max(20, Number(process.env.AGENTSTREAM_CRASH_CYCLES || 20));
const BURST = Number(process.env.AGENTSTREAM_QUEUE_BURST || 20);
const serve = ['--scripted-chunk-ms', '10'];

const env = await TestEnv.create('queue-crash');
const daemon = env.daemon('d', bin);
await daemon.start(serve);
const created = await call(daemon.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
if (created.status !== 200) fail(`create: ${created.text || created.error}`);
const agent = created.json.id;

const acked = new Map();  // clientMessageId -> outcome
const sent = new Set();
for (let cycle = 0; cycle < CYCLES; ++cycle) {
  const url = daemon.url;
  const burst = [];
  for (let i = 0; i < BURST; ++i) {
    const cmid = `q${cycle}-${i}`;
    sent.add(cmid);
    burst.push(call(url, 'POST', `/v1/agents/${agent}/messages`,
                    { text: `prompt ${cmid}`, clientMessageId: cmid }, 10000)
      .then((r) => { if (r.status === 200) acked.set(cmid, r.json.outcome); }));
  }
  await sleep(Math.random() * 400);
  await daemon.kill('SIGKILL');
  await Promise.all(burst);
  await daemon.start(serve);
}

// Everything acknowledged runs: wait until the agent is idle with nothing queued.
const deadline = Date.now() + 120000;
for (;;) {
  if (Date.now() > deadline) fail('the agent did not settle');
  const r = await call(daemon.url, 'GET', `/v1/agents/${agent}`);
  if (r.status === 200 && r.json.status !== 'running' && r.json.queue.length === 0 &&
      !r.json.activeTurn)
    break;
  await sleep(100);
}
const events = [];
let offset = '-1';
for (;;) {
  const r = await call(daemon.url, 'GET', `/v1/agents/${agent}/events?offset=${offset}`);
  if (r.status !== 200) fail(`read: ${r.status} ${r.text || r.error}`);
  events.push(...r.json);
  offset = r.headers.get('stream-next-offset');
  if (r.headers.get('stream-up-to-date')) break;
}
const counts = new Map();
for (const e of events)
  if (e.kind === 'user.message')
    counts.set(e.payload.clientMessageId, (counts.get(e.payload.clientMessageId) || 0) + 1);
let queued = 0;
for (const [cmid, outcome] of acked) {
  if (outcome === 'queued') ++queued;
  if (counts.get(cmid) !== 1)
    fail(`acknowledged ${cmid} (${outcome}) appears ${counts.get(cmid) || 0} times`);
}
for (const [cmid, n] of counts) {
  if (!sent.has(cmid)) fail(`${cmid} was never sent`);
  if (n > 1) fail(`${cmid} appears ${n} times`);
}
try {
  execFileSync(bin, ['--data', daemon.dataDir, 'check'], { stdio: ['ignore', 'pipe', 'pipe'] });
} catch (error) {
  fail(`agentstream check:\n${error.stdout}${error.stderr}`);
}
console.log(`queue crash: ${CYCLES} kill -9 cycles, ${sent.size} sends, ${acked.size} acknowledged ` +
            `(${queued} queued), each once; ${counts.size} recorded`);
await env.close();
process.exit(0);
