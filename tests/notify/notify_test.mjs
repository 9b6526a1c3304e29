// Notifications end to end (docs/notifications.md), one daemon on SQLite with the scripted agent,
// web-push-testing as the push service and browser (push_service.mjs), a paired device:
//   - a permission and a finished turn arrive decrypted, with the agent, the event's cursor, the
//     agent's Topic and high urgency for a permission; bad settings are refused and change nothing;
//   - a visible client focused on the agent (a WebSocket sending heartbeats) means no push; hidden,
//     or gone (the WebSocket closed), a push;
//   - a 429 with Retry-After: 2 is honoured (the next attempt at least 2 s later);
//   - kill -9 of the daemon while the push service holds the request unanswered (it never
//     accepted it), then a restart: the permission arrives exactly once, and the turn the restart
//     failed arrives as turnFailed;
//   - a 410 removes the subscription from the device's settings;
//   - ntfy: the publish request (path = topic, Title, Priority, Click, body);
//   - a background task's autonomous turn arrives as autonomousFinished; a foreground turn
//     shorter than minTurnMs does not;
//   - a revoked device gets nothing more.
import { TestEnv, call, check, sleep, until } from '../lib/daemons.mjs';
import { NtfyReceiver, PushService, pairDevice, topicFor, webPushTestingInstalled }
  from './push_service.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node notify_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
if (!webPushTestingInstalled()) {
  console.error('SKIP: web-push-testing is not installed in tests/peers (tools/setup.sh)');
  process.exit(77);
}

const env = await TestEnv.create('notify');
const push = await PushService.start();
const ntfy = await NtfyReceiver.start();
env.atClose(() => { push.close(); ntfy.close(); });
const daemon = env.daemon('d', bin);
const publicUrl = 'http://localhost:7600';  // ntfy's Click links into it
// With a token, so that a device token names a device (without one, loopback is the owner).
const ownerToken = 'owner-secret-for-the-notify-test';
const owner = { authorization: `Bearer ${ownerToken}` };
const serveArgs = ['--scripted-chunk-ms', '2', '--push-allow-http', '--public-url', publicUrl,
                   '--token', ownerToken];
await daemon.start(serveArgs);

// ---- a paired device ----
const device = await pairDevice(daemon.url, 'phone', owner);
const asOwner = (method, target, body) => call(daemon.url, method, target, body, 15000, owner);
const deviceId = device.id;
const asDevice = (method, target, body) => call(daemon.url, method, target, body, 15000, device.auth);

const vapid = await asDevice('GET', '/v1/notifications/vapid');
check(vapid.status === 200 && /^[A-Za-z0-9_-]{87}$/.test(vapid.json.publicKey),
      `vapid: ${vapid.status} ${vapid.text}`);
let sub = await push.subscribe(vapid.json.publicKey);

// Settings: strict, and a refusal changes nothing.
const defaults = await asDevice('GET', '/v1/devices/self/notifications');
check(defaults.status === 200 && defaults.json.webPush === null && defaults.json.kinds.permission === true &&
      defaults.json.minTurnMs === 30000 && defaults.json.previews === false, `defaults: ${defaults.text}`);
const settings = { webPush: sub.json, minTurnMs: 0, previews: true };
let r = await asDevice('PUT', '/v1/devices/self/notifications', { ...settings, extra: 1 });
check(r.status === 400 && r.text.includes('extra'), `unknown member: ${r.status} ${r.text}`);
r = await asDevice('PUT', '/v1/devices/self/notifications',
                   { webPush: { ...sub.json, endpoint: sub.json.endpoint.replace('http:', 'ftp:') } });
check(r.status === 400 && r.text.includes('webPush'), `bad endpoint: ${r.status} ${r.text}`);
check((await asDevice('GET', '/v1/devices/self/notifications')).json.webPush === null,
      'a refused PUT changed the settings');
r = await asDevice('PUT', `/v1/devices/dev_someone_else/notifications`, settings);
check(r.status === 403, `another device's settings: ${r.status} ${r.text}`);
r = await asDevice('PUT', `/v1/devices/${deviceId}/notifications`, settings);
check(r.status === 200 && r.json.webPush.endpoint === sub.json.endpoint, `put: ${r.status} ${r.text}`);
r = await asOwner('GET', '/v1/consumers');
check(r.json.consumers.some((c) => c.id === `notify.${deviceId}`), 'the device has its consumer');

// ---- helpers ----
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
const agentRes = await asOwner('POST', '/v1/agents',
                            { provider: 'scripted', cwd: env.dir, title: 'Notify me' });
check(agentRes.status === 201 || agentRes.status === 200, `create: ${agentRes.status} ${agentRes.text}`);
const agent = agentRes.json.id;
let prompts = 0;

async function send(id, text) {
  const s = await asOwner('POST', `/v1/agents/${id}/messages`,
                       { text, clientMessageId: `c${++prompts}` });
  check(s.status === 200 || s.status === 202, `send: ${s.status} ${s.text}`);
}
// The newest event of `kind` after `after` events, once it is in the log.
async function event(id, kind, after = 0) {
  return until(`${kind} of ${id}`, async () => {
    const events = await readEvents(daemon.url, id);
    return events.slice(after).reverse().find((e) => e.kind === kind);
  });
}
const cursorOf = (e) => `${e.epoch}:${e.seq}`;
async function allow(id, permission) {
  const a = await asOwner('POST',
                       `/v1/agents/${id}/permissions/${permission.payload.requestId}`,
                       { decision: 'allow', optionId: 'allow_once' });
  check(a.status === 200, `permission reply: ${a.status} ${a.text}`);
}
async function received(n, what) {
  return until(what, () => (push.messages(sub.clientHash).length >= n ? push.messages(sub.clientHash) : null),
               20000);
}
const eventCount = async (id) => (await readEvents(daemon.url, id)).length;

// ---- a permission, then the finished turn ----
await send(agent, 'touch a file, with permission');
const perm1 = await event(agent, 'permission.requested');
let got = await received(1, 'the permission push');
check(got[0].kind === 'permission' && got[0].agent === agent && got[0].cursor === cursorOf(perm1) &&
      got[0].title === 'Notify me' && got[0].url === `/#agent=${agent}&cursor=${cursorOf(perm1)}`,
      `permission payload: ${JSON.stringify(got[0])}`);
check(got[0].body.startsWith('Needs your permission') && got[0].body.length <= 22 + 2 + 120 + 3,
      `body: ${got[0].body}`);
const pushed = push.requests;  // (the decrypted message may be stored before the 201 is sent)
check(pushed.length === 1 && pushed[0].headers.topic === topicFor(agent) &&
      pushed[0].headers.urgency === 'high' && pushed[0].headers['content-encoding'] === 'aes128gcm',
      `push headers: ${JSON.stringify(pushed[0]?.headers)}`);
await allow(agent, perm1);
const done1 = await event(agent, 'turn.completed');
got = await received(2, 'the finished-turn push');
check(got[1].kind === 'turnFinished' && got[1].cursor === cursorOf(done1), `finished: ${JSON.stringify(got[1])}`);

// ---- presence: a visible client on the agent holds notifications back ----
const ws = new WebSocket(`${daemon.url.replace('http:', 'ws:')}/ws?token=${ownerToken}`);
await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
const oks = [];
ws.onmessage = (m) => { const msg = JSON.parse(m.data); if (msg.type === 'ok') oks.push(msg.id); };
async function heartbeat(id, visible) {
  ws.send(JSON.stringify({ type: 'heartbeat', id, focusedAgent: agent, visible, deviceType: 'desktop' }));
  await until(`heartbeat ${id}`, () => oks.includes(id));
}
await heartbeat('h1', true);
let before = await eventCount(agent);
await send(agent, 'again, with permission');
const perm2 = await event(agent, 'permission.requested', before);
// The consumer moved past it (its position) without a push.
await until('the held-back permission consumed', async () => {
  const c = await asOwner('GET', `/v1/consumers/notify.${deviceId}`);
  const lane = c.json?.sessions?.find((s) => s.session === agent);
  const [e, q] = (lane?.position || '0:0').split(':').map(Number);
  return e > perm2.epoch || (e === perm2.epoch && q >= perm2.seq);
});
await sleep(500);
check(push.messages(sub.clientHash).length === 2, 'a push about an agent a visible client shows');
await heartbeat('h2', false);  // hidden: the end of this turn is pushed
await allow(agent, perm2);
const done2 = await event(agent, 'turn.completed', before);
got = await received(3, 'the push once hidden');
check(got[2].kind === 'turnFinished' && got[2].cursor === cursorOf(done2), `hidden: ${JSON.stringify(got[2])}`);
// Visible again, then the page goes away: closing the WebSocket drops its presence row.
await heartbeat('h3', true);
const closed = new Promise((resolve) => { ws.onclose = resolve; });
ws.close();
await closed;
await sleep(200);
before = await eventCount(agent);
await send(agent, 'once more, with permission');
const permGone = await event(agent, 'permission.requested', before);
got = await received(4, 'the push once the page is gone');
check(got[3].kind === 'permission' && got[3].cursor === cursorOf(permGone),
      `gone: ${JSON.stringify(got[3])}`);
await allow(agent, permGone);
await received(5, 'its finished turn');

// ---- 429 with Retry-After ----
push.plan.push({ status: 429, retryAfter: '2' });
before = await eventCount(agent);
await send(agent, 'a third, with permission');
const perm3 = await event(agent, 'permission.requested', before);
got = await received(6, 'the push after a 429');
check(got[5].cursor === cursorOf(perm3), `after 429: ${JSON.stringify(got[5])}`);
const refused = push.requests.find((q) => q.answered === 429);
const accepted = push.requests.at(-1);
check(accepted.at - refused.at >= 2000, `Retry-After not honoured: ${accepted.at - refused.at} ms`);
await allow(agent, perm3);
await received(7, 'the third finished turn');

// ---- kill -9 between the event and the push ----
push.plan.push('hold');
before = await eventCount(agent);
const held = push.requests.length;
await send(agent, 'a fourth, with permission');
const perm4 = await event(agent, 'permission.requested', before);
await until('the push service holding the request', () => push.held.length === 1);
await daemon.kill('SIGKILL');
push.release();  // the held request was never accepted
await daemon.start(serveArgs);
got = await received(8, 'the permission push after the restart');
await until('the failed turn after the restart', () => push.messages(sub.clientHash).length >= 9);
await sleep(1500);
got = push.messages(sub.clientHash);
const forPerm4 = got.filter((m) => m.cursor === cursorOf(perm4));
check(forPerm4.length === 1 && forPerm4[0].kind === 'permission', `after kill -9: ${JSON.stringify(got.slice(7))}`);
const failed = got.filter((m) => m.kind === 'turnFailed');
check(failed.length === 1 && failed[0].agent === agent, `turnFailed: ${JSON.stringify(failed)}`);
check(got.length === 9, `exactly the two expected pushes after the restart: ${JSON.stringify(got.slice(7))}`);
check(push.requests.length - held === 3, `requests since the hold: ${push.requests.length - held}`);

// ---- 410: the subscription is removed ----
push.expire(sub.clientHash);
before = await eventCount(agent);
await send(agent, 'a fifth, with permission');
await event(agent, 'permission.requested', before);
await until('the gone subscription removed', async () =>
  (await asDevice('GET', '/v1/devices/self/notifications')).json.webPush === null);
check(push.requests.some((q) => q.answered === 410), 'the push service answered 410');

// ---- ntfy ----
r = await asDevice('PUT', '/v1/devices/self/notifications',
                   { ntfy: { url: ntfy.url, topic: 'agents-e2e' }, minTurnMs: 0 });
check(r.status === 200, `ntfy settings: ${r.status} ${r.text}`);
const perm5 = await event(agent, 'permission.requested');
before = await eventCount(agent);
await allow(agent, perm5);
const done5 = await event(agent, 'turn.completed', before);
await until('the ntfy publish', () => ntfy.published.length >= 1);
const pub = ntfy.published[0];
check(pub.method === 'POST' && pub.path === '/agents-e2e' && pub.headers.title === 'Notify me' &&
      pub.headers.priority === '3' && pub.body.startsWith('Finished after') &&
      pub.headers.click === `${publicUrl}/#agent=${agent}&cursor=${cursorOf(done5)}`,
      `ntfy: ${JSON.stringify(pub)}`);

// ---- a revoked device gets nothing more ----
sub = await push.subscribe(vapid.json.publicKey);
r = await asDevice('PUT', '/v1/devices/self/notifications', { webPush: sub.json });
check(r.status === 200, `resubscribe: ${r.status}`);

// ---- a background turn (the scripted agent's [background] task wakes it 200 ms later) ----
// minTurnMs is back to 30 s: the short foreground turn is not pushed, the autonomous one is.
before = await eventCount(agent);
await send(agent, '[background] build it');
const woke = await until('the autonomous turn', async () => {
  const events = (await readEvents(daemon.url, agent)).slice(before);
  const started = events.find((e) => e.kind === 'turn.started' && e.payload.origin === 'autonomous');
  return started && events.find((e) => e.kind === 'turn.completed' && e.turn === started.turn);
});
got = await until('the autonomous push', () => push.messages(sub.clientHash)[0]);
check(got.kind === 'autonomousFinished' && got.agent === agent && got.cursor === cursorOf(woke),
      `autonomous: ${JSON.stringify(got)}`);
await sleep(500);
check(push.messages(sub.clientHash).length === 1, 'a short foreground turn was pushed');
r = await asOwner('DELETE', `/v1/devices/${deviceId}`);
check(r.status === 200 && r.json.revoked === true, `revoke: ${r.status} ${r.text}`);
await until('the revoked device\'s consumer deleted', async () => {
  const list = await asOwner('GET', '/v1/consumers');
  if (list.status !== 200) console.error(`consumers: ${list.status} ${list.text || list.error}`);
  return list.status === 200 && !list.json.consumers.some((c) => c.id === `notify.${deviceId}`);
});
const published = ntfy.published.length;
const pushedBefore = push.messages(sub.clientHash).length;
before = await eventCount(agent);
await send(agent, 'a sixth, with permission');
const perm6 = await event(agent, 'permission.requested', before);
await sleep(2000);
check(push.messages(sub.clientHash).length === pushedBefore && ntfy.published.length === published,
      'a revoked device was notified');
check((await asDevice('GET', '/v1/devices/self/notifications')).status === 401,
      'a revoked device is refused');
void perm6;

console.log('PASS notify');
await env.close();
process.exit(0);
