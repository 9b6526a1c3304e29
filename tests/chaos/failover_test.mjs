// Three daemons on a PostgreSQL primary with a synchronous standby (tools/pg_test_pair.sh), one
// libpq multi-host URL (target_session_attrs=read-write) for all of them, clients driving
// scripted agents through random daemons, live followers, a durable webhook consumer and Durable
// Stream producers; meanwhile, cycle after cycle, the primary is killed with SIGKILL (postmaster
// and every server process at once), the standby is promoted (pg_ctl promote, as Patroni does)
// and the old primary is rebuilt as the new synchronous standby. One more cycle (the third) is a
// partition instead of a kill: the primary stays up but goes silent for the daemons (packets
// dropped, no reset, no FIN), the standby is promoted while the old primary still runs, the old
// primary is fenced (stopped, as Patroni stops a leader that lost its lock) and only then is the
// link back, and it is rebuilt as the standby. The daemons reach each server over TCP, across a
// veth pair into a network namespace of the test's own per server, where a TCP bridge forwards to
// that server's Unix socket (as tests/chaos/silent_partition_test.mjs does for one server); the
// partition takes the namespace's end of the primary's pair down, so the daemons' kernels keep
// retransmitting into a link that drops everything, and their connections break by the timeouts
// of docs/operations.md ("Limits"), not by a reset. A proxy that stops forwarding would not show
// this: its kernel would acknowledge every byte. No daemon is restarted or told anything.
// Afterwards (docs/operations.md, "High availability"):
//   - `agentstream check` on the database: dense seqs, one terminal per turn, no event of a
//     stale ownership generation, no stuck status;
//   - every acknowledged send appears exactly once as a user message, an unacknowledged one at
//     most once; every acknowledged producer append exactly once in its stream, in order;
//   - every follower saw every event of its agent once, in order; the consumer delivered every
//     event of every agent in order; every daemon reports the status a replay of the log gives;
//   - every daemon logged at start that its store has a synchronous standby (store.replication).
// It prints the window of unavailability of each failover (a probe producer appending every
// 25 ms: the first failed append after the kill to the first acknowledged one after it) for
// docs/benchmarks.md, and that of the partition apart.
//
//   node tests/chaos/failover_test.mjs AGENTSTREAM_BIN
// Needs the PostgreSQL 15 server binaries, root (the servers run as `postgres`) and `ip netns`
// (iproute2); exits 77, skipped, without them. Environment: AGENTSTREAM_FAILOVER_CYCLES (default 5),
// AGENTSTREAM_FAILOVER_AGENTS (default 3).
import { TestEnv, call, fail, pick, sleep } from '../lib/daemons.mjs';
import {
  checkAgentLog, checkSends, followAgent, percentile, readStream, settleAgents, waitForDeliveries,
  waitForFollowers, webhookSink,
} from '../lib/fleet_checks.mjs';
import { openSilentLink } from '../lib/silent_link.mjs';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node failover_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const CYCLES = Number(process.env.AGENTSTREAM_FAILOVER_CYCLES || 5);
const AGENTS = Number(process.env.AGENTSTREAM_FAILOVER_AGENTS || 3);
const skip = (why) => {
  console.log(`SKIPPED: ${why}`);
  process.exit(77);
};
if (process.getuid() !== 0) skip('the servers run as the postgres user, which needs root');
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
try {
  ip('netns', 'list');
} catch {
  skip('`ip netns` is not available (iproute2)');
}
const pgBin = (() => {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    return '/usr/lib/postgresql/15/bin';
  }
})();
for (const tool of ['initdb', 'pg_ctl', 'pg_basebackup'])
  if (!fs.existsSync(path.join(pgBin, tool))) skip(`no ${tool} in ${pgBin}`);

const started = Date.now();
const pairTool = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../tools/pg_test_pair.sh');
const execFileAsync = promisify(execFile);
const env = await TestEnv.create('failover');
// Beside the test's directory, not in it: the servers run as `postgres`, who cannot enter it.
const pairDir = fs.mkdtempSync(path.join(path.dirname(env.dir), 'agentstream-pair.'));
fs.chmodSync(pairDir, 0o755);
const pair = async (...args) =>
  (await execFileAsync(pairTool, [args[0], pairDir, ...args.slice(1)],
                      { encoding: 'utf8', env: { ...process.env, FSYNC: 'off' } })).stdout.trim();
env.atClose(() => {
  execFileSync(pairTool, ['stop', pairDir], { stdio: 'ignore' });
  if (process.env.E2E_KEEP !== '1') fs.rmSync(pairDir, { recursive: true, force: true });
});
const direct = await pair('start');  // over the servers' Unix sockets: for `agentstream check`

// ---- each server behind a link of its own: a veth pair into a namespace, a TCP bridge there ----
const tag = (process.pid % 46656).toString(36);  // names of at most 15 bytes, unique per run
// Second octets 150 to 199: apart from silent_partition_test's (200 to 249).
const subnet = `10.${150 + (process.pid % 50)}.${(process.pid >> 6) % 250}`;
const links = {};  // node -> {ns, nsEnd, address, port}
async function link(node, index) {
  const ns = `asf-${tag}${node}`;
  const hostEnd = `asf${tag}${node}h`;
  const nsEnd = `asf${tag}${node}n`;
  const base = index * 4;  // a /30 per node
  const address = `${subnet}.${base + 2}`;
  const port = await openSilentLink(env, {
    ns, hostEnd, nsEnd, hostAddress: `${subnet}.${base + 1}`, nsAddress: address,
    socketPath: path.join(pairDir, node, '.s.PGSQL.5432'),
  });
  links[node] = { ns, nsEnd, address, port };
}
await link('a', 0);
await link('b', 1);
const store = `postgresql://postgres@${links.a.address}:${links.a.port},${links.b.address}:${
  links.b.port}/agentstream?target_session_attrs=read-write`;
const setLink = (node, state) => ip('-n', links[node].ns, 'link', 'set', links[node].nsEnd, state);
console.log(`failover: pair up in ${Date.now() - started} ms: ${store}`);

// Leases long enough for a failover to leave them in place most of the time (and for the
// sanitizer builds); the window of a failover is a few hundred milliseconds to seconds.
const SERVE = ['--scripted-chunk-ms', '15', '--owner-ttl-ms', '6000', '--owner-renew-ms', '1000',
               '--long-poll-ms', '1000'];
const daemons = ['a', 'b', 'c'].map((n) => env.daemon(n, bin, ['--store', store]));
await Promise.all(daemons.map((d) => d.start(SERVE)));
const anyUrl = () => pick(daemons).url;

// ---- a durable webhook consumer of every session ----
const sink = await webhookSink();
const { delivered, keys } = sink;
{
  const r = await call(anyUrl(), 'POST', '/v1/consumers', {
    id: 'failover-hook',
    sink: { kind: 'webhook', url: sink.url,
            secret: 'failover-secret-1' },
    coalesce: false, retry: { maxAttempts: 1000, initialBackoffMs: 50, maxBackoffMs: 500 } });
  if (r.status !== 200 && r.status !== 201) fail(`consumer: ${r.status} ${r.text || r.error}`);
}

// ---- agents, clients and followers ----
const agents = [];
for (let i = 0; i < AGENTS; ++i) {
  const r = await call(anyUrl(), 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir,
                                                         title: `failover ${i}` });
  if (r.status !== 200) fail(`create: ${r.status} ${r.text || r.error}`);
  agents.push(r.json.id);
}
const acked = new Map();  // clientMessageId -> outcome
const unacked = new Set();
let stopping = false;
let sends = 0;

async function send(agent, cmid, text) {
  // The same id again until answered: a failover may take seconds.
  for (let attempt = 0; attempt < 100; ++attempt) {
    const r = await call(anyUrl(), 'POST', `/v1/agents/${agent}/messages`,
                         { text, clientMessageId: cmid, whileRunning: 'queue' }, 20000);
    if (r.status === 200) {
      acked.set(cmid, r.json.outcome);
      unacked.delete(cmid);
      return;
    }
    unacked.add(cmid);
    if (stopping && attempt > 20) return;
    await sleep(100 + Math.random() * 100);
  }
}

async function worker(agent, index) {
  let n = 0;
  while (!stopping) {
    const cmid = `c-${index}-${n++}`;
    const ask = Math.random() < 0.2;
    ++sends;
    await send(agent, cmid, `${ask ? 'permission ' : ''}prompt ${cmid}`);
    const r = await call(anyUrl(), 'GET', `/v1/agents/${agent}`, undefined, 10000);
    for (const p of (r.json && r.json.permissions) || [])
      await call(anyUrl(), 'POST', `/v1/agents/${agent}/permissions/${p.requestId}`,
                 { decision: 'allow' }, 10000);
    await sleep(50 + Math.random() * 150);
  }
}

const followed = new Map();  // agent -> [{seq, kind, payload}]
let following = true;
async function follower(agent) {
  const seen = [];
  followed.set(agent, seen);
  await followAgent(anyUrl, agent, seen, () => following);
}

// ---- Durable Stream producers (generic streams): each append retried with its seq ----
const produced = new Map();  // stream -> highest acknowledged producer seq
const attempts = [];  // the probe's appends: {at, ok}
async function producer(name, everyMs, probe) {
  const target = `/v1/stream/failover/${name}`;
  for (;;) {
    const r = await call(anyUrl(), 'PUT', target, undefined, 5000,
                         { 'content-type': 'application/json' });
    if (r.status === 201 || r.status === 200) break;
    await sleep(100);
  }
  let seq = 0;
  while (!stopping) {
    const at = Date.now();
    const r = await call(anyUrl(), 'POST', target, [{ producer: name, seq }], 5000, {
      'content-type': 'application/json', 'producer-id': name, 'producer-epoch': '0',
      'producer-seq': String(seq) });
    const ok = r.status === 200 || r.status === 204;
    if (probe) attempts.push({ at, done: Date.now(), ok });
    if (ok) {
      produced.set(name, seq);
      ++seq;
    } else if (r.status && r.status < 500 && r.status !== 408 && r.status !== 429) {
      fail(`producer ${name}: seq ${seq} refused: ${r.status} ${r.text}`);
    }
    await sleep(everyMs);
  }
}

const workers = agents.map((a, i) => worker(a, i));
const followers = agents.map((a) => follower(a));
const producers = [producer('p1', 40, false), producer('p2', 40, false), producer('probe', 25, true)];

// ---- the failover loop ----
// A kill: the primary is gone at once (its connections reset).
async function killCycle(cycle) {
  const at = Date.now();
  const killed = await pair('kill-primary');
  const killedAt = Date.now();
  const promoted = await pair('promote');
  const promotedAt = Date.now();
  await sleep(200 + Math.random() * 300);
  const rebuildAt = Date.now();
  await pair('rebuild');
  kills.push({ at, promotedAt, partition: false });
  console.log(`failover: cycle ${cycle}: killed ${killed} in ${killedAt - at} ms, promoted ${
    promoted} in ${promotedAt - killedAt} ms, rebuilt in ${Date.now() - rebuildAt} ms; ${
    sends} sends, ${acked.size} acked`);
}
// A partition: the primary keeps running but the daemons' packets to it are dropped. The
// standby is promoted while the old primary still runs (two servers take writes, only one of
// them reachable); the old primary is fenced before its link is back, so no daemon writes to it
// after the promotion, then rebuilt. The daemons are told nothing: their connections to the old
// primary break by their own timeouts.
async function partitionCycle(cycle) {
  const at = Date.now();
  const cut = fs.readFileSync(path.join(pairDir, 'primary'), 'utf8').trim();
  setLink(cut, 'down');
  await sleep(1500 + Math.random() * 1000);  // the daemons' work on the old primary hangs
  if (!(await pair('status')).split('\n').includes(`primary ${cut}`))
    fail(`the primary ${cut} did not keep running while cut off`);
  const promoted = await pair('promote');
  const promotedAt = Date.now();
  await pair('fence');
  setLink(cut, 'up');
  const healedAt = Date.now();
  const rebuildAt = Date.now();
  await pair('rebuild');
  kills.push({ at, promotedAt, partition: true });
  console.log(`failover: cycle ${cycle}: partitioned ${cut} for ${healedAt - at} ms, promoted ${
    promoted} after ${promotedAt - at} ms, fenced ${cut}, rebuilt in ${Date.now() - rebuildAt} ms; ${
    sends} sends, ${acked.size} acked`);
}
const kills = [];
const PARTITION_CYCLE = Math.min(3, CYCLES + 1);
for (let cycle = 1; cycle <= CYCLES + 1; ++cycle) {
  await sleep(300 + Math.random() * 700);
  await (cycle === PARTITION_CYCLE ? partitionCycle(cycle) : killCycle(cycle));
}
await sleep(500);

// ---- quiesce ----
stopping = true;
await Promise.all([...workers, ...producers]);
const readAll = (target) => readStream(anyUrl, target);
const events = (agent) => readAll(`/v1/agents/${agent}/events`);
await settleAgents(anyUrl, agents, 30000);
await waitForFollowers(agents, followed, events, 20000);
following = false;
await Promise.all(followers);
await waitForDeliveries(agents, delivered, events, 30000);
sink.close();

// ---- checks ----
try {
  execFileSync(bin, ['--store', direct, 'check', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
} catch (error) {
  fail(`agentstream check:\n${error.stdout}${error.stderr}`);
}
const counts = new Map();
for (const agent of agents)
  await checkAgentLog(agent, await events(agent),
                      { seen: followed.get(agent), delivered, reporters: daemons, counts });
checkSends(acked, unacked, counts);
// Each daemon said at start that it runs on a synchronous standby (store.replication).
for (const d of daemons) {
  const said = fs.readFileSync(d.logFile, 'utf8');
  if (!/store\.replication setup=synchronous/.test(said))
    fail(`${d.name} did not log store.replication setup=synchronous`);
}
let appends = 0;
for (const [name, last] of produced) {
  const items = await readAll(`/v1/stream/failover/${name}`);
  // Every acknowledged seq once, in order; an unacknowledged last one may have landed.
  items.forEach((item, i) => {
    if (item.seq !== i) fail(`stream ${name}: item ${i} holds seq ${item.seq}`);
  });
  if (items.length !== last + 1 && items.length !== last + 2)
    fail(`stream ${name}: ${items.length} items for ${last + 1} acknowledged appends`);
  appends += last + 1;
}

// ---- the window of each failover, as the probe producer saw it ----
const windows = [];
const partitionWindows = [];
for (const k of kills) {
  // During a partition an append hangs rather than fails: it counts from when it was sent.
  const failed = attempts.find((a) => a.at >= k.at - 100 && !a.ok);
  if (!failed) continue;  // no append failed: the window fell between two appends
  const recovered = attempts.find((a) => a.at > failed.at && a.ok);
  if (recovered) (k.partition ? partitionWindows : windows).push(recovered.done - failed.at);
}
const promotions = kills.filter((k) => !k.partition).map((k) => k.promotedAt - k.at);
console.log(`failover: unavailable per failover (first failed to first acknowledged append): n=${
  windows.length} p50=${percentile(windows, 0.5)} ms p99=${percentile(windows, 0.99)} ms max=${
  Math.max(...windows)} ms; kill to promoted p50=${percentile(promotions, 0.5)} ms`);
console.log(`failover: unavailable in the partition (first failed append, from when it was sent, to the first acknowledged one): ${
  partitionWindows.join(', ') || 'none measured'} ms`);
console.log(`failover: ${CYCLES} failovers and 1 partition, ${agents.length} agents, ${sends} sends, ${
  acked.size} acknowledged (each once), ${unacked.size} unacknowledged, ${appends} producer appends, ${
  keys.size} consumer deliveries, ${Date.now() - started} ms: ok`);
await env.close();
process.exit(0);
