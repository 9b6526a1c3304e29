// The latency a forward adds to a send (docs/benchmarks.md, "Several daemons"): two daemons on one
// PostgreSQL database, an agent running on daemon A, and sends answered once their turn started,
// alternately sent to A (direct) and to B (forwarded to A). Between sends it waits for the turn to
// end, so every send starts a turn. Prints p50, p90 and p99 of both and their difference.
//   node bench/forward_latency.mjs AGENTSTREAM_BIN [SENDS]      (AGENTSTREAM_TEST_PG names a server)
import { TestEnv, call, sleep } from '../tests/lib/daemons.mjs';

const bin = process.argv[2];
const sends = Number(process.argv[3] || 300);
if (!bin) {
  console.error('usage: node bench/forward_latency.mjs AGENTSTREAM_BIN [SENDS]');
  process.exit(2);
}
const env = await TestEnv.create('forward');
const store = env.pgDatabase();
if (!store) {
  console.error('AGENTSTREAM_TEST_PG is not set');
  process.exit(2);
}
const serve = ['--scripted-chunk-ms', '0'];
const a = await env.daemon('a', bin, ['--store', store]).start(serve);
const b = await env.daemon('b', bin, ['--store', store]).start(serve);
const created = await call(a.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
const agent = created.json.id;

async function idle() {
  for (;;) {
    const r = await call(a.url, 'GET', `/v1/agents/${agent}`);
    if (r.json.status === 'idle' && !r.json.activeTurn) return;
    await sleep(2);
  }
}
const times = { direct: [], forwarded: [] };
for (let i = 0; i < sends * 2 + 20; ++i) {
  const forwarded = i % 2 === 1;
  const started = process.hrtime.bigint();
  const r = await call(forwarded ? b.url : a.url, 'POST', `/v1/agents/${agent}/messages`,
                       { text: `hello ${i}`, clientMessageId: `m${i}` });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 200 || !r.json.accepted) throw new Error(`send ${i}: ${r.text || r.error}`);
  if (i >= 20) times[forwarded ? 'forwarded' : 'direct'].push(ms);  // the first 20 warm up
  await idle();
}
const q = (list, p) => [...list].sort((x, y) => x - y)[Math.floor(p * (list.length - 1))];
const row = (name, list) =>
  `${name.padEnd(10)} ${q(list, 0.5).toFixed(2).padStart(8)} ${q(list, 0.9).toFixed(2).padStart(8)} ${
    q(list, 0.99).toFixed(2).padStart(8)}`;
console.log(`sends per path: ${sends}; latency of a send until its turn started (ms)`);
console.log(`${'path'.padEnd(10)} ${'p50'.padStart(8)} ${'p90'.padStart(8)} ${'p99'.padStart(8)}`);
console.log(row('direct', times.direct));
console.log(row('forwarded', times.forwarded));
console.log(`added by the forward: p50 ${(q(times.forwarded, 0.5) - q(times.direct, 0.5)).toFixed(2)} ms, ` +
            `p99 ${(q(times.forwarded, 0.99) - q(times.direct, 0.99)).toFixed(2)} ms`);
await env.close();
