// Daemon-free checks: cursors and offsets, the error of an HTTP answer, backoff bounds, and the
// replica's de-duplication and reconnect against a fake WebSocket.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {AgentstreamError, AgentstreamHttp, Backoff, ReplicaClient, compareCursors, cursorToOffset, errorFrom, offsetToCursor,
        parseCursor} from '../dist/index.js';

test('cursors and offsets', () => {
  assert.equal(cursorToOffset('1:19'), '0000000000000001_0000000000000019');
  assert.equal(offsetToCursor('0000000000000002_0000000000000007'), '2:7');
  assert.ok(compareCursors(parseCursor('2:1'), parseCursor('1:99')) > 0);
  assert.throws(() => parseCursor('x'));
});

test('errorFrom', () => {
  const e = errorFrom(404, '{"error":{"code":"not_found","message":"no session ses_x"}}');
  assert.ok(e instanceof AgentstreamError);
  assert.deepEqual([e.code, e.message, e.status, e.retryable], ['not_found', 'no session ses_x', 404, false]);
  const t = errorFrom(503, 'busy');
  assert.deepEqual([t.code, t.message, t.retryable], ['http_503', 'busy', true]);
});

test('backoff is bounded', () => {
  const b = new Backoff({minDelayMs: 100, maxDelayMs: 1000});
  const d = Array.from({length: 20}, () => b.next());
  assert.ok(d.every((x) => x >= 75 && x <= 1000), String(d));
});

// A WebSocket double: answers hello, agents.list, subscribe and send; `server` pushes frames.
class FakeSocket {
  static sockets = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    FakeSocket.sockets.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 1);
  }
  send(data) {
    const msg = JSON.parse(data);
    this.sent.push(msg);
    const reply = (m) => setTimeout(() => this.onmessage?.({data: JSON.stringify({...m, id: msg.id})}), 1);
    if (msg.type === 'hello') reply({type: 'server_info'});
    else if (msg.type === 'agents.list') reply({type: 'agents', agents: []});
    else if (msg.type === 'subscribe' && msg.agent === 'ses_none')
      reply({type: 'error', error: {code: 'not_found', message: 'no session ses_none'}});
    else if (msg.type === 'subscribe') reply({type: 'subscribed', agent: msg.agent, cursor: msg.cursor ?? '1:0'});
    else if (msg.type === 'send') reply({type: 'send.reply', agent: msg.agent, accepted: true, outcome: 'accepted'});
  }
  push(m) {
    this.onmessage?.({data: JSON.stringify(m)});
  }
  close() {
    if (this.readyState === 3) return;
    this.readyState = 3;
    setTimeout(() => this.onclose?.({code: 1006, reason: ''}), 1);
  }
}

const ev = (seq) => ({v: 1, session: 'ses_1', epoch: 1, seq, time: 0, kind: 'notice', payload: {}});
const frame = (seqs) => ({type: 'events', agent: 'ses_1', epoch: 1, from: `1:${seqs[0]}`, to: `1:${seqs.at(-1)}`,
                          events: seqs.map(ev)});

test('the replica drops duplicates, resubscribes from its cursor and resends unanswered prompts', async () => {
  FakeSocket.sockets = [];
  const rc = new ReplicaClient({url: 'ws://fake/ws', WebSocket: FakeSocket, minDelayMs: 5, maxDelayMs: 10}).start();
  await rc.waitConnected(2000);
  const r = rc.subscribe('ses_1', {cursor: '1:0', keepEvents: true});
  await r.waitFor((x) => x.state === 'live', 2000);
  const s1 = FakeSocket.sockets[0];
  s1.push(frame([1, 2, 3]));
  s1.push(frame([2, 3, 4])); // an overlap
  assert.deepEqual(r.events.map((e) => e.seq), [1, 2, 3, 4]);
  assert.equal(r.duplicatesDropped, 2);
  s1.close();
  await new Promise((res) => setTimeout(res, 2));
  const sent = rc.send('ses_1', {text: 'hi', clientMessageId: 'c1'});
  await rc.waitConnected(2000);
  await r.waitFor((x) => x.state === 'live', 2000);
  const s2 = FakeSocket.sockets.at(-1);
  assert.notEqual(s2, s1);
  assert.deepEqual(s2.sent.find((m) => m.type === 'subscribe').cursor, '1:4');
  assert.equal((await sent).outcome, 'accepted');
  assert.equal(s2.sent.filter((m) => m.type === 'send').length, 1);
  s2.push(frame([4, 5]));
  s2.push(frame([7])); // a gap: resubscribe from 1:5
  assert.deepEqual(r.events.map((e) => e.seq), [1, 2, 3, 4, 5]);
  await new Promise((res) => setTimeout(res, 10));
  assert.equal(s2.sent.filter((m) => m.type === 'subscribe').at(-1).cursor, '1:5');
  // A subscription the daemon refuses stops that replica, not the connection.
  const none = rc.subscribe('ses_none');
  await none.waitFor((x) => x.state === 'closed', 2000);
  assert.equal(none.error.code, 'not_found');
  assert.equal(FakeSocket.sockets.at(-1), s2);
  assert.ok(rc.connected);
  rc.close();
});

// A fetch double that records each request and answers from `answer(method, path)`; it is a
// plain function that fails when called with a `this` (a browser's fetch refuses any but the window).
function recordingFetch(answer) {
  const calls = [];
  const fn = function (url, init) {
    if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
    const u = new URL(url);
    const call = {method: init.method, path: u.pathname, query: Object.fromEntries(u.searchParams),
                  body: init.body ? JSON.parse(init.body) : undefined, auth: init.headers.authorization};
    calls.push(call);
    const [status, body] = answer(call);
    return Promise.resolve(new Response(body === undefined ? '' : JSON.stringify(body), {status}));
  };
  return {fn, calls};
}

test('the HTTP calls of worktrees, pairing, devices and notifications', async () => {
  const device = {id: 'dev_1', name: 'phone', createdMs: 1, lastSeenMs: 2, userAgent: '', revoked: false, revokedMs: 0,
                  current: true};
  const settings = {webPush: null, ntfy: null, kinds: {permission: true}, previews: false, minTurnMs: 30000};
  const {fn, calls} = recordingFetch(({method, path}) => {
    if (path === '/v1/agents/ses_1/diff') return [200, {agent: 'ses_1', files: []}];
    if (path === '/v1/worktrees') return [200, {worktrees: [{agent: 'ses_1'}]}];
    if (path === '/v1/whoami') return [200, {principal: 'device', device}];
    if (path === '/v1/pairings') return [201, {code: 'asp_x', url: 'http://h/#pair=asp_x', expiresMs: 9}];
    if (path === '/v1/pairings/exchange') return [200, {token: 'asd_x', device}];
    if (path === '/v1/devices') return [200, {devices: [device]}];
    if (path === '/v1/devices/dev_1') return [200, {...device, name: method === 'PATCH' ? 'tablet' : 'phone'}];
    if (path === '/v1/devices/self/notifications') return [200, settings];
    if (path === '/v1/notifications/vapid') return [200, {publicKey: 'BPk'}];
    return [404, {error: {code: 'not_found', message: path}}];
  });
  const http = new AgentstreamHttp({baseUrl: 'http://h/', token: 'tok', fetch: fn});
  assert.deepEqual(await http.diff('ses_1', {against: 'HEAD'}), {agent: 'ses_1', files: []});
  assert.deepEqual((await http.worktrees()).map((w) => w.agent), ['ses_1']);
  assert.equal((await http.whoami()).principal, 'device');
  assert.equal((await http.createPairing({name: 'phone'})).code, 'asp_x'); // a 201 answer
  assert.equal((await http.exchangePairing('asp_x')).token, 'asd_x');
  assert.deepEqual((await http.listDevices()).map((d) => d.id), ['dev_1']);
  assert.equal((await http.renameDevice('dev_1', 'tablet')).name, 'tablet');
  assert.equal((await http.revokeDevice('dev_1')).id, 'dev_1');
  assert.deepEqual(await http.notificationSettings('self'), settings);
  assert.deepEqual(await http.setNotificationSettings('self', {previews: true}), settings);
  assert.equal((await http.vapidKey()).publicKey, 'BPk');
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    'GET /v1/agents/ses_1/diff', 'GET /v1/worktrees', 'GET /v1/whoami', 'POST /v1/pairings', 'POST /v1/pairings/exchange',
    'GET /v1/devices', 'PATCH /v1/devices/dev_1', 'DELETE /v1/devices/dev_1', 'GET /v1/devices/self/notifications',
    'PUT /v1/devices/self/notifications', 'GET /v1/notifications/vapid',
  ]);
  assert.deepEqual(calls[0].query, {against: 'HEAD'});
  assert.deepEqual(calls[3].body, {name: 'phone'});
  assert.deepEqual(calls[4].body, {code: 'asp_x'});
  assert.deepEqual(calls[6].body, {name: 'tablet'});
  assert.deepEqual(calls[9].body, {previews: true});
  assert.ok(calls.every((c) => c.auth === 'Bearer tok'));
});

test('a pairing exchange is never retried; an idempotent read is', async () => {
  let n = 0;
  const {fn, calls} = recordingFetch(() => (++n <= 2 ? [503, {error: {code: 'unavailable', message: 'busy'}}] : [200, {devices: []}]));
  const http = new AgentstreamHttp({baseUrl: 'http://h', fetch: fn, retryMinDelayMs: 1, retryMaxDelayMs: 2});
  await assert.rejects(http.exchangePairing('asp_x'), (e) => e instanceof AgentstreamError && e.status === 503);
  assert.equal(calls.length, 1);
  assert.deepEqual(await http.listDevices(), []); // a 503, then the answer
  assert.equal(calls.length, 3);
  assert.equal(calls[0].auth, undefined); // no token, no Authorization
});

test('a git action posts its body to its path, once, and answers the outcome', async () => {
  const result = {agent: 'ses_1', cursor: '1:9', action: 'commit', outcome: 'committed', branch: 'agentstream/ses_1',
                  commit: '1a2b3c4d5e6f7a8b', message: 'Fix it', files: []};
  let busy = false;
  const {fn, calls} = recordingFetch(({path}) => {
    if (busy) return [409, {error: {code: 'conflict', message: 'the agent is in a turn'}}];
    if (path === '/v1/agents/ses_1/git/commit') return [200, result];
    if (path === '/v1/agents/ses_1/git/discard') return [503, {error: {code: 'unavailable', message: 'busy'}}];
    if (path === '/v1/agents/ses_1/git/pr') {
      return [200, {agent: 'ses_1', cursor: '1:10', action: 'pr', outcome: 'opened', branch: 'agentstream/ses_1',
                    commit: '1a2b3c4d5e6f7a8b', target: 'main', files: [], url: 'https://github.com/o/r/pull/7'}];
    }
    return [200, {...result, action: 'merge', outcome: 'fast-forward', target: 'main'}];
  });
  const http = new AgentstreamHttp({baseUrl: 'http://h', fetch: fn, retryMinDelayMs: 1, retryMaxDelayMs: 2});
  assert.deepEqual(await http.gitAction('ses_1', 'commit', {message: 'Fix it'}), result);
  assert.equal((await http.gitAction('ses_1', 'merge', {into: 'main', noFastForward: true})).outcome, 'fast-forward');
  await http.gitAction('ses_1', 'push');
  const pr = await http.gitAction('ses_1', 'pr', {title: 'Fix it', body: 'Why', base: 'main', remote: 'origin'});
  assert.equal(pr.outcome, 'opened');
  assert.equal(pr.url, 'https://github.com/o/r/pull/7');
  // Not retried: a lost answer may have acted.
  await assert.rejects(http.gitAction('ses_1', 'discard'), (e) => e.status === 503);
  busy = true;
  await assert.rejects(http.gitAction('ses_1', 'commit'),
                       (e) => e instanceof AgentstreamError && e.code === 'conflict' && e.status === 409);
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    'POST /v1/agents/ses_1/git/commit', 'POST /v1/agents/ses_1/git/merge', 'POST /v1/agents/ses_1/git/push',
    'POST /v1/agents/ses_1/git/pr', 'POST /v1/agents/ses_1/git/discard', 'POST /v1/agents/ses_1/git/commit',
  ]);
  assert.deepEqual(calls.map((c) => c.body), [{message: 'Fix it'}, {into: 'main', noFastForward: true}, {},
                                              {title: 'Fix it', body: 'Why', base: 'main', remote: 'origin'}, {}, {}]);
});

test('the schedule calls: their paths, bodies and query; reads and pause/resume retried, create and delete never', async () => {
  const schedule = {id: 'nightly', cron: '0 2 * * *', timezone: 'UTC', agent: 'ses_1', prompt: 'Run the tests', missed: 'skip',
                    paused: false, createdMs: 1, lastTick: null, nextTick: '2026-12-07T02:00:00Z', pendingTick: null,
                    leaseOwner: ''};
  const firing = {tick: '2026-12-06T02:00:00Z', outcome: 'fired', recordedMs: 2, agent: 'ses_1',
                  clientMessageId: 'schedule:nightly:2026-12-06T02:00:00Z', turnId: 'turn_1', turnOutcome: 'completed'};
  let unavailable = 0;
  const {fn, calls} = recordingFetch(({method, path}) => {
    if (unavailable > 0) {
      unavailable--;
      return [503, {error: {code: 'unavailable', message: 'the store is busy'}}];
    }
    if (path === '/v1/schedules' && method === 'GET') return [200, {schedules: [schedule]}];
    if (path === '/v1/schedules' && method === 'POST') return [201, schedule];
    if (path === '/v1/schedules/nightly' && method === 'GET') return [200, {...schedule, firings: [firing]}];
    if (path === '/v1/schedules/nightly/pause') return [200, {...schedule, paused: true, nextTick: null}];
    if (path === '/v1/schedules/nightly/resume') return [200, schedule];
    if (path === '/v1/schedules/nightly' && method === 'DELETE') return [200, {ok: true}];
    return [404, {error: {code: 'not_found', message: `no schedule ${path}`}}];
  });
  const http = new AgentstreamHttp({baseUrl: 'http://h', fetch: fn, retryMinDelayMs: 1, retryMaxDelayMs: 2});
  assert.deepEqual(await http.listSchedules(), [schedule]);
  const definition = {id: 'nightly', cron: '0 2 * * *', agent: 'ses_1', prompt: 'Run the tests'};
  assert.deepEqual(await http.createSchedule(definition), schedule); // a 201 answer
  assert.deepEqual((await http.showSchedule('nightly', {firings: 5})).firings, [firing]);
  await http.showSchedule('nightly');
  assert.equal((await http.pauseSchedule('nightly')).nextTick, null);
  assert.equal((await http.resumeSchedule('nightly')).paused, false);
  assert.equal(await http.deleteSchedule('nightly'), undefined);
  const missing = await http.showSchedule('gone').catch((e) => e);
  assert.deepEqual([missing.code, missing.status], ['not_found', 404]);
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    'GET /v1/schedules', 'POST /v1/schedules', 'GET /v1/schedules/nightly', 'GET /v1/schedules/nightly',
    'POST /v1/schedules/nightly/pause', 'POST /v1/schedules/nightly/resume', 'DELETE /v1/schedules/nightly',
    'GET /v1/schedules/gone',
  ]);
  assert.deepEqual(calls[1].body, definition);
  assert.deepEqual(calls[2].query, {firings: '5'});
  assert.deepEqual(calls[3].query, {});
  assert.deepEqual(calls[4].body, {});

  // A 503: the reads and pause are retried, a create and a delete are not.
  calls.length = 0;
  unavailable = 1;
  assert.equal((await http.listSchedules()).length, 1);
  unavailable = 1;
  assert.equal((await http.pauseSchedule('nightly')).paused, true);
  unavailable = 1;
  await assert.rejects(http.createSchedule(definition), (e) => e instanceof AgentstreamError && e.status === 503);
  unavailable = 1;
  await assert.rejects(http.deleteSchedule('nightly'), (e) => e.status === 503);
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    'GET /v1/schedules', 'GET /v1/schedules', 'POST /v1/schedules/nightly/pause', 'POST /v1/schedules/nightly/pause',
    'POST /v1/schedules', 'DELETE /v1/schedules/nightly',
  ]);
});
