// Takeover time after SIGKILL of an owner (docs/benchmarks.md, "Several daemons"): two daemons on
// one PostgreSQL database with the default lease (10 s, renewed every 3 s) unless told otherwise;
// each round starts AGENTS agents on daemon A, each in a long turn, kills A with SIGKILL, and
// measures for every agent the time until daemon B's grant (the ownership history) and until B
// reports it no longer running (its turn ended owner_lost). A is restarted between rounds.
//   node bench/takeover_time.mjs AGENTSTREAM_BIN [ROUNDS] [AGENTS] [TTL_MS] [RENEW_MS]
import { TestEnv, call, sleep } from '../tests/lib/daemons.mjs';

const [bin, rounds = '5', count = '4', ttl = '10000', renew = '3000'] = process.argv.slice(2);
if (!bin) {
  console.error('usage: node bench/takeover_time.mjs AGENTSTREAM_BIN [ROUNDS] [AGENTS] [TTL_MS] [RENEW_MS]');
  process.exit(2);
}
const env = await TestEnv.create('takeover');
const store = env.pgDatabase();
if (!store) {
  console.error('AGENTSTREAM_TEST_PG is not set');
  process.exit(2);
}
const serve = ['--scripted-chunk-ms', '200', '--owner-ttl-ms', ttl, '--owner-renew-ms', renew];
const a = env.daemon('a', bin, ['--store', store]);
const b = env.daemon('b', bin, ['--store', store]);
await a.start(serve);
await b.start(serve);
const granted = [];
const settled = [];
for (let round = 0; round < Number(rounds); ++round) {
  const agents = [];
  for (let i = 0; i < Number(count); ++i) {
    const r = await call(a.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
    agents.push(r.json.id);
    await call(a.url, 'POST', `/v1/agents/${r.json.id}/messages`,
               { text: `long ${'x'.repeat(2000)}`, clientMessageId: `r${round}-${i}` });
  }
  await sleep(Math.random() * Number(renew));  // anywhere in A's renewal period
  const aId = a.id();
  const killedAt = Date.now();
  await a.kill('SIGKILL');
  const pending = new Set(agents);
  const notRunning = new Set(agents);
  while (pending.size || notRunning.size) {
    for (const agent of [...pending]) {
      const rows = env.psql(store, `SELECT owner, granted_ms FROM owner_history WHERE session='${
        agent}' ORDER BY generation DESC LIMIT 1`);
      if (rows.length && rows[0][0] !== aId) {
        granted.push(Number(rows[0][1]) - killedAt);
        pending.delete(agent);
      }
    }
    for (const agent of [...notRunning]) {
      const r = await call(b.url, 'GET', `/v1/agents/${agent}`);
      if (r.status === 200 && r.json.status !== 'running') {
        settled.push(Date.now() - killedAt);
        notRunning.delete(agent);
      }
    }
    await sleep(20);
  }
  await a.start(serve);
}
const q = (list, p) => [...list].sort((x, y) => x - y)[Math.floor(p * (list.length - 1))];
console.log(`ttl ${ttl} ms, renewal every ${renew} ms; ${granted.length} agents over ${rounds} rounds`);
console.log(`kill -9 to the takeover grant:      p50 ${q(granted, 0.5)} ms, p99 ${q(granted, 0.99)} ms, max ${Math.max(...granted)} ms`);
console.log(`kill -9 to status settled on B:     p50 ${q(settled, 0.5)} ms, p99 ${q(settled, 0.99)} ms, max ${Math.max(...settled)} ms`);
await env.close();
