// Three daemons sharing one PostgreSQL store (AGENTSTREAM_TEST_PG) and one paired device: every
// daemon serves the same VAPID key (the store's shared secret); an agent on each daemon asks a
// permission, and each notification is sent once (one lease per notification lane), decrypted
// by web-push-testing (push_service.mjs). Skipped without the test cluster or web-push-testing.
import { TestEnv, call, check, readEvents, sleep, until } from '../lib/daemons.mjs';
import { PushService, webPushTestingInstalled } from './push_service.mjs';

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
for (const d of daemons) await d.start(['--scripted-chunk-ms', '2', '--push-allow-http']);
const [a, b, c] = daemons;

const keys = [];
for (const d of daemons) keys.push((await call(d.url, 'GET', '/v1/notifications/vapid')).json?.publicKey);
check(keys[0] && keys.every((k) => k === keys[0]), `one VAPID key for the store: ${keys.join(' ')}`);

const pairing = await call(a.url, 'POST', '/v1/pairings', { name: 'phone' });
if (pairing.status === 404) {  // a build without the pairing routes (docs/remote.md)
  console.error('SKIP: this daemon has no POST /v1/pairings');
  process.exit(77);
}
check(pairing.status === 201, `pairing: ${pairing.status} ${pairing.text || pairing.error}`);
const exchanged = await call(b.url, 'POST', '/v1/pairings/exchange', { code: pairing.json.code });
check(exchanged.status === 201, `exchange: ${exchanged.status} ${exchanged.text}`);
const auth = { authorization: `Bearer ${exchanged.json.token}` };
const sub = await push.subscribe(keys[0]);
const put = await call(c.url, 'PUT', '/v1/devices/self/notifications',
                       { webPush: sub.json, kinds: { turnFinished: false } }, 15000, auth);
check(put.status === 200, `settings: ${put.status} ${put.text}`);

// An agent on each daemon, each asking a permission.
const agents = [];
for (const d of daemons) {
  const r = await call(d.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
  check(r.status === 201 || r.status === 200, `create on ${d.name}: ${r.status} ${r.text}`);
  agents.push({ daemon: d, id: r.json.id });
}
for (const [i, ag] of agents.entries()) {
  const s = await call(ag.daemon.url, 'POST', `/v1/agents/${ag.id}/messages`,
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
