// A daemon whose PostgreSQL server goes silent: its packets are dropped with no reset and no
// FIN, as in a network partition or when the server's host loses power. A proxy that closes its
// connections (the partition step of chaos_test.mjs) cannot show this: its kernel acknowledges
// every byte. Here daemon p reaches the database across a veth pair into a network namespace of
// the test's own (a TCP bridge there forwards to the server's Unix socket), and the cut takes the
// namespace's end of the pair down, so p's kernel keeps retransmitting into a link that drops
// everything. Daemon a reaches the database directly. Checked, with the connection timeouts of
// docs/operations.md ("Limits"):
//   - a send through p during the cut is answered (503), in seconds, instead of hanging;
//   - p reports its failed renewals (or heartbeat), stops the agent's runtime by itself, and stays
//     up;
//   - a read through p during the cut is answered (503), in seconds;
//   - a takes the agent over, and the turn p left open ends once, with one terminal;
//   - after the link comes back, p works again: a send through it is accepted, it creates and
//     runs an agent of its own, p and a serve the same log, and `agentstream check` finds the
//     database sound.
//
//   node tests/chaos/silent_partition_test.mjs AGENTSTREAM_BIN   (AGENTSTREAM_TEST_PG names the
//   server; needs root for `ip netns`; exits 77, skipped, without either)
import {
  TestEnv, call, check, fail, formatPgUrl, parsePgUrl, pgEndpoint, readEvents, sleep, until,
} from '../lib/daemons.mjs';
import { openSilentLink } from '../lib/silent_link.mjs';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node silent_partition_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
const skip = (why) => {
  console.log(`SKIPPED: ${why}`);
  process.exit(77);
};
if (!process.env.AGENTSTREAM_TEST_PG) skip('AGENTSTREAM_TEST_PG is not set');
if (process.getuid() !== 0) skip('a network namespace needs root');
try {
  ip('netns', 'list');
} catch {
  skip('`ip netns` is not available (iproute2)');
}

const env = await TestEnv.create('silent');
const store = env.pgDatabase();

// ---- the namespace, its veth pair, and the bridge to the server inside it ----
const tag = (process.pid % 46656).toString(36);  // names of at most 15 bytes, unique per run
const ns = `as-${tag}`;
const hostEnd = `as${tag}h`;
const nsEnd = `as${tag}n`;
const subnet = `10.${200 + (process.pid % 50)}.${(process.pid >> 6) % 250}`;
const bridgePort = await openSilentLink(env, {
  ns, hostEnd, nsEnd, hostAddress: `${subnet}.1`, nsAddress: `${subnet}.2`,
  socketPath: pgEndpoint(store).path,
});
const viaLink = parsePgUrl(store);
viaLink.hostport = `${subnet}.2:${bridgePort}`;
viaLink.params.delete('host');
viaLink.params.delete('port');

// Leases of 4 s renewed every second: p stops a runtime one renewal period before its lease may
// expire (docs/operations.md, "Failures").
const SERVE = ['--scripted-chunk-ms', '15', '--owner-ttl-ms', '4000', '--owner-renew-ms', '1000'];
const a = env.daemon('a', bin, ['--store', store]);
const p = env.daemon('p', bin, ['--store', formatPgUrl(viaLink)]);
await a.start(SERVE);
await p.start(SERVE);
const pId = p.id();
const lastOwner = async (agent) => {
  const rows = await env.psqlAsync(store, `SELECT owner FROM owner_history WHERE session='${
    agent}' ORDER BY generation DESC LIMIT 1`);
  return rows.length ? rows[0][0] : '';
};

// ---- p runs an agent whose turn waits for a permission reply ----
const created = await call(p.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
check(created.status === 200, `create on p: ${created.status} ${created.text || created.error}`);
const agent = created.json.id;
const sent = await call(p.url, 'POST', `/v1/agents/${agent}/messages`,
                        { text: 'this needs permission', clientMessageId: 'before' });
check(sent.status === 200, `send on p: ${sent.status} ${sent.text || sent.error}`);
await until('p running the turn', async () => {
  const r = await call(p.url, 'GET', `/v1/agents/${agent}`);
  return r.status === 200 && r.json.loaded && r.json.status === 'permission';
}, 15000);
check(await lastOwner(agent) === pId, 'p does not hold the agent it created');

// ---- the cut ----
const cutAt = Date.now();
ip('-n', ns, 'link', 'set', nsEnd, 'down');
console.log('silent partition: cut');

// A send through p: p holds the agent but cannot reach the database. Without connection
// timeouts it would wait for the kernel's TCP timeout (about 15 minutes).
const during = await call(p.url, 'POST', `/v1/agents/${agent}/messages`,
                          { text: 'during the cut', clientMessageId: 'during' }, 60000);
const answeredMs = Date.now() - cutAt;
if (during.error) fail(`the send through p during the cut got no answer: ${during.error}`);
console.log(`silent partition: p answered a send ${during.status} after ${answeredMs} ms`);
check(during.status === 503, `the send through p during the cut: ${during.status} ${during.text}`);

const health = await call(p.url, 'GET', '/healthz', undefined, 5000);
check(!health.error, `p's /healthz during the cut: ${health.error}`);

const takenBy = await until('another daemon taking the agent over', async () => {
  const owner = await lastOwner(agent);
  return owner && owner !== pId ? owner : '';
}, 60000);
check(takenBy === a.id(), `the agent was taken by ${takenBy}, not a`);
console.log(`silent partition: a took the agent over ${Date.now() - cutAt} ms after the cut`);

const pLog = () => fs.readFileSync(p.logFile, 'utf8');
// A renewal that broke while its COMMIT was on the wire waits for that commit's outcome, which
// is looked up for up to 60 s (docs/operations.md, "Limits") before it is reported as failed.
// A round of the lease keeper renews, then writes the daemon's heartbeat: when the cut falls
// between the two, the heartbeat is what fails, and by the time it does the runtime has stopped
// by itself (ownership.fenced), so the next rounds have no lease left to renew. Either failure is
// the report of a round that could not reach the database.
await until('p logging a failed renewal or heartbeat',
  () => /ownership\.renew_failed|daemon\.heartbeat_failed/.test(pLog()), 90000);
await until('p stopping the runtime', () => pLog().includes('ownership.fenced'), 30000);
check(p.running(), 'p exited during the cut');
// A read through p, now that p no longer runs the agent: from the database, which is silent.
const readAt = Date.now();
const read = await call(p.url, 'GET', `/v1/agents/${agent}/events?offset=-1`, undefined, 60000);
if (read.error) fail(`a read through p during the cut got no answer: ${read.error}`);
console.log(`silent partition: p answered a read ${read.status} after ${Date.now() - readAt} ms`);
check(read.status === 503, `the read through p during the cut: ${read.status} ${read.text}`);

// ---- the link comes back ----
ip('-n', ns, 'link', 'set', nsEnd, 'up');
console.log('silent partition: healed');
const after = await until('a send through p after the cut', async () => {
  const r = await call(p.url, 'POST', `/v1/agents/${agent}/messages`,
                       { text: 'after the cut', clientMessageId: 'after' }, 20000);
  return r.status === 200 ? r : null;
}, 90000);
check(after.json && after.json.outcome, `the send after the cut: ${after.text}`);
const settled = await until('the agent idle again', async () => {
  const r = await call(a.url, 'GET', `/v1/agents/${agent}`);
  return r.status === 200 && r.json.status === 'idle' ? r : null;
}, 60000);
check(settled.json.status === 'idle', 'the agent did not settle');

// p writes again: an agent of its own, with a turn.
const fresh = await until('an agent created on p after the cut', async () => {
  const r = await call(p.url, 'POST', '/v1/agents',
                       { provider: 'scripted', cwd: env.dir, clientRequestId: 'after-cut' });
  return r.status === 200 ? r : null;
}, 60000);
const own = await call(p.url, 'POST', `/v1/agents/${fresh.json.id}/messages`,
                       { text: 'hello again', clientMessageId: 'fresh' });
check(own.status === 200, `a send to p's new agent: ${own.status} ${own.text || own.error}`);
check(await lastOwner(fresh.json.id) === pId, 'p does not hold the agent it created after the cut');
await until('p\'s new agent idle', async () => {
  const r = await call(p.url, 'GET', `/v1/agents/${fresh.json.id}`);
  return r.status === 200 && r.json.status === 'idle';
}, 60000);

// ---- checks ----
const viaA = await readEvents(a.url, agent);
const viaP = await readEvents(p.url, agent);
check(JSON.stringify(viaA) === JSON.stringify(viaP), 'p and a serve different logs of the agent');
const started = viaA.filter((e) => e.kind === 'turn.started').map((e) => e.turn);
const ended = viaA.filter((e) => ['turn.completed', 'turn.failed', 'turn.canceled'].includes(e.kind));
check(started.length >= 2, `${started.length} turns started`);
for (const turn of started) {
  const n = ended.filter((e) => e.turn === turn).length;
  check(n === 1, `turn ${turn} has ${n} terminals`);
}
const prompts = viaA.filter((e) => e.kind === 'user.message').map((e) => e.payload.clientMessageId);
check(prompts.filter((id) => id === 'before').length === 1, 'the first send is not in the log once');
check(prompts.filter((id) => id === 'after').length === 1, 'the send after the cut is not in the log once');
check(prompts.filter((id) => id === 'during').length <= 1, 'the refused send is in the log twice');
try {
  execFileSync(bin, ['--store', store, 'check', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
} catch (error) {
  fail(`agentstream check:\n${error.stdout}${error.stderr}`);
}
console.log('silent partition: ok');
await env.close();
