// queueWaiting end to end (docs/notifications.md, "Kinds"): a claude agent (the real CLI from
// tests/peers, offline against tests/model_server) runs a slow turn with a second prompt queued
// behind it; the daemon is killed (-9) and restarted with a claude program that does not exist,
// so its recovery fails the turn and cannot start the runtime that would run the queue: the
// paired device gets one queueWaiting push, decrypted by web-push-testing, at the fatal error's
// cursor.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TestEnv, call, check, sleep, until } from '../lib/daemons.mjs';
import { PushService, pairDevice, webPushTestingInstalled } from './push_service.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node notify_queue_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const claude = new URL('../peers/node_modules/.bin/claude', import.meta.url).pathname;
if (!webPushTestingInstalled() || !fs.existsSync(claude)) {
  console.error('SKIP: web-push-testing or the claude CLI is not installed in tests/peers');
  process.exit(77);
}
const env = await TestEnv.create('notify-queue');
const push = await PushService.start();
env.atClose(() => push.close());

const model = spawn('node', [new URL('../model_server/server.mjs', import.meta.url).pathname],
                    { stdio: ['pipe', 'pipe', 'inherit'] });
env.track(model);
const modelPort = await new Promise((resolve, reject) => {
  let seen = '';
  model.stdout.on('data', (c) => {
    seen += c;
    const m = seen.match(/listening (\d+)/);
    if (m) resolve(Number(m[1]));
  });
  model.once('exit', () => reject(new Error('the model server exited')));
});
const home = path.join(env.dir, 'home');
const work = path.join(env.dir, 'work');
fs.mkdirSync(home);
fs.mkdirSync(work);
// The daemon's environment is the claude CLI's.
Object.assign(process.env, {
  HOME: home, ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}`,
  ANTHROPIC_API_KEY: 'sk-ant-offline-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', IS_SANDBOX: '1' });

const ownerToken = 'owner-secret-for-the-queue-test';
const owner = { authorization: `Bearer ${ownerToken}` };
const daemon = env.daemon('d', bin);
const serve = (program) => ['--push-allow-http', '--token', ownerToken, '--claude-program', program];
await daemon.start(serve(claude));
const asOwner = (method, target, body) => call(daemon.url, method, target, body, 30000, owner);

const device = await pairDevice(daemon.url, 'phone', owner);
const key = (await asOwner('GET', '/v1/notifications/vapid')).json.publicKey;
const sub = await push.subscribe(key);
const kinds = { permission: false, turnFailed: false, turnFinished: false,
                autonomousFinished: false, queueWaiting: true };
const put = await call(daemon.url, 'PUT', '/v1/devices/self/notifications',
                       { webPush: sub.json, kinds }, 15000, device.auth);
check(put.status === 200, `settings: ${put.status} ${put.text}`);

const created = await asOwner('POST', '/v1/agents',
                              { provider: 'claude', cwd: work, mode: 'bypassPermissions' });
check(created.status === 201 || created.status === 200, `create: ${created.status} ${created.text}`);
const agent = created.json.id;
const first = await asOwner('POST', `/v1/agents/${agent}/messages`,
                            { text: '[slow 200]', clientMessageId: 'c1' });
check(first.status === 200 && first.json.accepted, `first: ${first.status} ${first.text}`);
const second = await asOwner('POST', `/v1/agents/${agent}/messages`,
                             { text: 'and then the docs', clientMessageId: 'c2', whileRunning: 'queue' });
check(second.status === 200 && second.json.outcome === 'queued', `second: ${second.status} ${second.text}`);

await daemon.kill('SIGKILL');
await daemon.start(serve(path.join(env.dir, 'no-such-claude')));
async function readEvents() {
  const events = [];
  let offset = '-1';
  for (;;) {
    const r = await asOwner('GET', `/v1/agents/${agent}/events?offset=${offset}`);
    check(r.status === 200, `events: ${r.status} ${r.text || r.error}`);
    events.push(...r.json);
    offset = r.headers.get('stream-next-offset');
    if (r.headers.get('stream-up-to-date')) return events;
  }
}
let events = [];
const stalled = await until('a fatal error in the log', async () => {
  events = await readEvents();
  return events.filter((e) => e.kind === 'error' && e.payload.fatal).at(-1);
}, 60000).catch(() => null);
const got = await until('the queueWaiting push', () => push.messages(sub.clientHash)[0], 20000);
check(got.kind === 'queueWaiting' && got.agent === agent &&
      got.cursor === `${stalled.epoch}:${stalled.seq}` && got.body === 'Idle with 1 prompt waiting',
      `queueWaiting: ${JSON.stringify(got)}`);
await sleep(1000);
check(push.messages(sub.clientHash).length === 1, `one push: ${JSON.stringify(push.messages(sub.clientHash))}`);

console.log('PASS notify_queue');
await env.close();
process.exit(0);
