// Three daemons sharing one PostgreSQL store (AGENTSTREAM_TEST_PG) and one paired device: every
// daemon serves the same VAPID key (the store's shared secret); an agent on each daemon asks a
// permission, and each notification is sent once (one lease per notification lane), decrypted
// by web-push-testing (push_service.mjs). Skipped without the test cluster or web-push-testing.
import { TestEnv, call, check, sleep, until } from '../lib/daemons.mjs';
import { PushService, pairDevice, webPushTestingInstalled } from './push_service.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node notify_cluster_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
if (!webPushTestingInstalled()) {
  console.error('SKIP: web-push-testing is not installed in tests/peers (tools/setup.sh)');
  process.exit(77);
}
const env = await TestEnv.create('notify-cluster');
const store = await env.pgDatabase();
if (!store) {
  console.error('SKIP: AGENTSTREAM_TEST_PG is not set');
  process.exit(77);
}
const push = await PushService.start();
env.atClose(() => push.close());
const daemons = ['a', 'b', 'c'].map((n) => env.daemon(n, bin, ['--store', store]));
// With a token, so that a device token names a device (without one, loopback is the owner).
const ownerToken = 'owner-secret-for-the-cluster-test';
const owner = { authorization: `Bearer ${ownerToken}` };
for (const d of daemons) {
  await d.start(['--scripted-chunk-ms', '2', '--push-allow-http', '--token', ownerToken]);
}
const asOwner = (d, method, target, body) => call(d.url, method, target, body, 15000, owner);
async function readEvents(url, id) {
  const out = [];
  let offset = '-1';
  for (;;) {
    const r = await call(url, 'GET', `/v1/agents/${id}/events?offset=${offset}`, undefined, 15000, owner);
    check(r.status === 200, `events: ${r.status} ${r.text || r.error}`);
    out.push(...r.json);
    offset = r.headers.get('stream-next-offset');
    if (r.headers.get('stream-up-to-date')) return out;
  }
}
const [a, b, c] = daemons;

const keys = [];
for (const d of daemons) keys.push((await asOwner(d, 'GET', '/v1/notifications/vapid')).json?.publicKey);
check(keys[0] && keys.every((k) => k === keys[0]), `one VAPID key for the store: ${keys.join(' ')}`);

const { auth } = await pairDevice(a.url, 'phone', owner);
const sub = await push.subscribe(keys[0]);
const put = await call(c.url, 'PUT', '/v1/devices/self/notifications',
                       { webPush: sub.json, kinds: { turnFinished: false } }, 15000, auth);
check(put.status === 200, `settings: ${put.status} ${put.text}`);

// An agent on each daemon, each asking a permission.
const agents = [];
for (const d of daemons) {
  const r = await asOwner(d, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
  check(r.status === 201 || r.status === 200, `create on ${d.name}: ${r.status} ${r.text}`);
  agents.push({ daemon: d, id: r.json.id });
}
for (const [i, ag] of agents.entries()) {
  const s = await asOwner(ag.daemon, 'POST', `/v1/agents/${ag.id}/messages`,
                          { text: 'touch it, with permission', clientMessageId: `c${i}` });
  check(s.status === 200 || s.status === 202, `send: ${s.status} ${s.text}`);
}
const cursors = new Map();
for (const ag of agents) {
  const perm = await until(`permission of ${ag.id}`, async () =>
    (await readEvents(ag.daemon.url, ag.id)).find((e) => e.kind === 'permission.requested'));
  cursors.set(ag.id, `${perm.epoch}:${perm.seq}`);
}
await until('three pushes', () => push.messages(sub.clientHash).length >= 3, 30000);
await sleep(2000);  // anything sent twice would arrive by now
const got = push.messages(sub.clientHash);
check(got.length === 3, `each notification once: ${JSON.stringify(got)}`);
for (const ag of agents) {
  const mine = got.filter((m) => m.agent === ag.id);
  check(mine.length === 1 && mine[0].kind === 'permission' && mine[0].cursor === cursors.get(ag.id),
        `the push of ${ag.id}: ${JSON.stringify(mine)}`);
}
check(push.requests.length === 3, `requests to the push service: ${push.requests.length}`);

console.log('PASS notify_cluster');
await env.close();
process.exit(0);
