// Notification latency and throughput (docs/benchmarks.md, "Notifications"): from an event's
// commit (its `time` in the log) to the push service decrypting the message (web-push-testing,
// tests/peers), and notifications per second sustained. DEVICES paired devices, each with a Web
// Push subscription and only `permission` switched on; AGENTS scripted agents spread over the
// daemons each ask a permission ROUNDS times (all agents at once, answered once every push
// arrived), so that each round is a burst of AGENTS x DEVICES notifications.
//   node bench/notify_latency.mjs AGENTSTREAM_BIN [DAEMONS=1] [AGENTS=20] [ROUNDS=10] [DEVICES=1]
// One daemon runs on SQLite; three on one PostgreSQL database (AGENTSTREAM_TEST_PG).
import { TestEnv, call, sleep, until } from '../tests/lib/daemons.mjs';
import { PushService, pairDevice } from '../tests/notify/push_service.mjs';

const [bin, daemonsArg = '1', agentsArg = '20', roundsArg = '10', devicesArg = '1'] =
  process.argv.slice(2);
if (!bin) {
  console.error('usage: node bench/notify_latency.mjs AGENTSTREAM_BIN [DAEMONS] [AGENTS] [ROUNDS] [DEVICES]');
  process.exit(2);
}
const count = Number(daemonsArg);
const agentsN = Number(agentsArg);
const rounds = Number(roundsArg);
const devicesN = Number(devicesArg);
const env = await TestEnv.create('notify-bench');
// With a token, so that a device token names a device (without one, loopback is the owner).
const token = 'owner-secret-for-the-notify-bench';
const owner = { authorization: `Bearer ${token}` };
const asOwner = (url, method, target, body) => call(url, method, target, body, 30000, owner);
async function readEvents(url, id) {
  const out = [];
  let offset = '-1';
  for (;;) {
    const r = await asOwner(url, 'GET', `/v1/agents/${id}/events?offset=${offset}`);
    out.push(...r.json);
    offset = r.headers.get('stream-next-offset');
    if (r.headers.get('stream-up-to-date')) return out;
  }
}
let store = [];
if (count > 1) {
  const url = env.pgDatabase();
  if (!url) {
    console.error('AGENTSTREAM_TEST_PG is not set (needed for several daemons)');
    process.exit(2);
  }
  store = ['--store', await url];
}
const push = await PushService.start();
env.atClose(() => push.close());
const daemons = [];
for (let i = 0; i < count; ++i) {
  daemons.push(await env.daemon(`d${i}`, bin, store).start(['--scripted-chunk-ms', '0',
                                                            '--push-allow-http', '--token', token]));
}
const main = daemons[0];
const key = (await asOwner(main.url, 'GET', '/v1/notifications/vapid')).json.publicKey;
const kinds = { permission: true, turnFailed: false, turnFinished: false, autonomousFinished: false,
                queueWaiting: false };
for (let i = 0; i < devicesN; ++i) {
  const { auth } = await pairDevice(main.url, `bench ${i}`, owner);
  const sub = await push.subscribe(key);
  const put = await call(main.url, 'PUT', '/v1/devices/self/notifications',
                         { webPush: sub.json, kinds }, 15000, auth);
  if (put.status !== 200) throw new Error(`settings: ${put.text}`);
}

const agents = [];
for (let i = 0; i < agentsN; ++i) {
  const d = daemons[i % count];
  const r = await asOwner(d.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
  agents.push({ url: d.url, id: r.json.id });
}
let sent = 0;
const roundEnds = [];  // push.arrivals.length at the end of each round
const started = Date.now();
for (let round = 0; round < rounds; ++round) {
  await Promise.all(agents.map((a) => asOwner(a.url, 'POST', `/v1/agents/${a.id}/messages`,
                                           { text: `round ${round}, with permission`,
                                             clientMessageId: `r${round}` })));
  sent += agents.length * devicesN;
  await until(`round ${round}'s pushes`, () => push.arrivals.length >= sent, 120000);
  roundEnds.push(push.arrivals.length);
  await Promise.all(agents.map(async (a) => {
    const events = await readEvents(a.url, a.id);
    const perm = events.reverse().find((e) => e.kind === 'permission.requested');
    await asOwner(a.url, 'POST', `/v1/agents/${a.id}/permissions/${perm.payload.requestId}`,
               { decision: 'allow', optionId: 'allow_once' });
  }));
}
const elapsed = (Date.now() - started) / 1000;
await sleep(1000);
// Commit times from the log.
const committed = new Map();
for (const a of agents) {
  for (const e of await readEvents(a.url, a.id))
    if (e.kind === 'permission.requested') committed.set(`${a.id} ${e.epoch}:${e.seq}`, e.time);
}
const commitOf = (m) => committed.get(`${m.payload.agent} ${m.payload.cursor}`);
const latencies = push.arrivals.map((m) => m.at - commitOf(m))
  .filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
// The notification path's own rate: each round's pushes over the time from its first commit to
// its last push (the turns, prompts and answers between rounds left out).
let burstMs = 0;
let burstPushes = 0;
for (let r = 0, from = 0; r < roundEnds.length; from = roundEnds[r++]) {
  const burst = push.arrivals.slice(from, roundEnds[r]);
  const first = Math.min(...burst.map(commitOf).filter(Number.isFinite));
  burstMs += Math.max(...burst.map((m) => m.at)) - first;
  burstPushes += burst.length;
}
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
console.log(JSON.stringify({
  daemons: count, agents: agentsN, rounds, devices: devicesN, notifications: push.arrivals.length,
  duplicates: push.arrivals.length -
    devicesN * new Set(push.arrivals.map((m) => `${m.payload.agent} ${m.payload.cursor}`)).size,
  p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: latencies.at(-1),
  per_second: Math.round(push.arrivals.length / elapsed),
  burst_per_second: Math.round(burstPushes / (burstMs / 1000)),
}));
await env.close();
process.exit(0);
