// Daemon-free checks of the socket layer (Connection) against sockets the test opens, answers
// and closes by hand: replies by id, pushed messages, fire-and-forget sends, the connect timeout,
// connect failures with their reason, the handshake, and the request bounds.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {AgentstreamError, CONNECTION_DEFAULTS, Connection} from '../dist/index.js';

// A socket that does nothing by itself: the test calls open(), reply(), push() and drop().
class HandSocket {
  static made = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    this.closes = [];
    HandSocket.made.push(this);
  }
  send(data) {
    this.sent.push(JSON.parse(data));
  }
  close(code, reason) {
    this.closes.push([code, reason]);
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  reply(i, m) {
    this.onmessage?.({data: JSON.stringify({...m, id: this.sent[i].id})});
  }
  push(m) {
    this.onmessage?.({data: JSON.stringify(m)});
  }
  drop() {
    this.readyState = 3;
    this.onclose?.({code: 1006, reason: ''});
  }
}

const tick = (ms = 0) => new Promise((res) => setTimeout(res, ms));
const until = async (pred, what) => {
  for (let i = 0; i < 400 && !pred(); i++) await tick(5);
  assert.ok(pred(), what);
};
const make = (opts = {}) =>
    new Connection({url: 'ws://fake/ws', WebSocket: HandSocket, minDelayMs: 5, maxDelayMs: 10, ...opts});

test('the defaults are the documented ones', () => {
  assert.deepEqual({...CONNECTION_DEFAULTS}, {minDelayMs: 250, maxDelayMs: 5000, connectTimeoutMs: 8000,
                                             requestTimeoutMs: 30000, maxPendingRequests: 1024});
});

test('requests are matched to replies by id; other messages are pushed; send carries no id', async () => {
  HandSocket.made = [];
  const c = make().start();
  const pushed = [];
  const states = [];
  c.onMessage((m) => pushed.push(m));
  c.onConnection((x) => states.push(x));
  await assert.rejects(c.request({type: 'hello'}), (e) => e instanceof AgentstreamError && e.code === 'disconnected');
  assert.equal(c.send({type: 'heartbeat'}), false); // not open: nothing sent
  const s = HandSocket.made[0];
  s.open();
  assert.deepEqual([c.connected, c.open, states], [true, true, [true]]);
  const a = c.request({type: 'hello'});
  const b = c.request({type: 'model.set', agent: 'ses_1', model: 'm2'});
  assert.equal(c.send({type: 'heartbeat', visible: true}), true);
  assert.deepEqual(s.sent.map((m) => m.type), ['hello', 'model.set', 'heartbeat']);
  assert.notEqual(s.sent[0].id, s.sent[1].id);
  assert.equal(s.sent[2].id, undefined);
  s.reply(1, {type: 'error', error: {code: 'invalid_argument', message: 'no m2'}}); // out of order
  s.reply(0, {type: 'server_info', version: 'x'});
  s.push({type: 'agent.status', agent: {id: 'ses_1'}});
  s.push({type: 'events', id: 'r999', agent: 'ses_1'}); // an id no request has: pushed
  assert.equal((await a).version, 'x');
  await assert.rejects(b, (e) => e.code === 'invalid_argument' && e.message === 'no m2');
  assert.deepEqual(pushed.map((m) => m.type), ['agent.status', 'events']);
  c.close();
  assert.deepEqual(states, [true, false]);
});

test('a socket that never opens is given up after connectTimeoutMs, reported, and made again', async () => {
  HandSocket.made = [];
  const c = make({connectTimeoutMs: 30}).start();
  const failures = [];
  c.onConnectFailed((e) => failures.push(e.code));
  await tick(15);
  assert.deepEqual(failures, []);
  await until(() => failures.length === 1, 'the attempt was given up');
  assert.deepEqual(failures, ['timeout']);
  assert.equal(HandSocket.made[0].closes.length, 1);
  HandSocket.made[0].onclose?.({code: 1006}); // a late close of the abandoned socket counts nothing
  assert.deepEqual(failures, ['timeout']);
  await until(() => HandSocket.made.length === 2, 'a new socket');
  HandSocket.made[1].drop(); // refused at once
  assert.deepEqual(failures, ['timeout', 'disconnected']);
  await until(() => HandSocket.made.length === 3, 'another socket');
  HandSocket.made[2].open();
  assert.ok(c.connected);
  await tick(50);
  assert.ok(c.connected, 'an open socket is never timed out');
  assert.equal(c.connects, 3);
  c.close();
});

test('the handshake runs before connected; its failure is a failed attempt, retried', async () => {
  HandSocket.made = [];
  let attempt = 0;
  const c = make({
    handshake: async (conn) => {
      attempt++;
      const r = await conn.request({type: 'hello'});
      if (attempt === 1) throw new AgentstreamError('unavailable', 'not yet');
      assert.equal(r.type, 'server_info');
    },
  }).start();
  const failures = [];
  const states = [];
  c.onConnectFailed((e) => failures.push(e.code));
  c.onConnection((x) => states.push(x));
  const s1 = HandSocket.made[0];
  s1.open();
  assert.deepEqual([c.open, c.connected], [true, false]); // the handshake is under way
  s1.reply(0, {type: 'server_info'});
  await until(() => failures.length === 1, 'the handshake failed');
  assert.deepEqual(failures, ['unavailable']);
  assert.deepEqual(s1.closes, [[4000, 'handshake failed']]);
  assert.deepEqual(states, []);
  await until(() => HandSocket.made.length === 2, 'a new socket');
  const s2 = HandSocket.made[1];
  s2.open();
  s2.reply(0, {type: 'server_info'});
  await until(() => c.connected, 'connected after the handshake');
  assert.deepEqual(states, [true]);
  s2.drop();
  assert.deepEqual(states, [true, false]);
  assert.equal(failures.length, 1, 'a lost connection is no failed attempt');
  c.close();
});

test('a request unanswered in time fails with timeout; too many in flight fail at once; a lost socket fails the rest', async () => {
  HandSocket.made = [];
  const c = make({maxPendingRequests: 2, requestTimeoutMs: 20}).start();
  HandSocket.made[0].open();
  const slow = c.request({type: 'hello'});
  const other = c.request({type: 'search', q: 'x'}, 1000);
  await assert.rejects(c.request({type: 'hello'}), (e) => e.code === 'too_many_requests');
  assert.equal(HandSocket.made[0].sent.length, 2, 'the refused request was not sent');
  await assert.rejects(slow, (e) => e.code === 'timeout');
  HandSocket.made[0].drop();
  await assert.rejects(other, (e) => e.code === 'disconnected');
  c.close();
});

test('close stops reconnecting; start begins again', async () => {
  HandSocket.made = [];
  const c = make().start();
  const failures = [];
  c.onConnectFailed((e) => failures.push(e.code));
  HandSocket.made[0].open();
  c.close();
  assert.deepEqual(HandSocket.made[0].closes, [[1000, 'client closed']]);
  await tick(40);
  assert.equal(HandSocket.made.length, 1);
  assert.deepEqual(failures, []);
  c.start();
  assert.equal(HandSocket.made.length, 2);
  c.close();
});

test('with no global WebSocket, loadWebSocket gives one; without it the connection stops with no_websocket', async () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');
  delete globalThis.WebSocket;
  try {
    HandSocket.made = [];
    const loaded = new Connection({url: 'ws://fake/ws', loadWebSocket: async () => HandSocket}).start();
    await until(() => HandSocket.made.length === 1, 'the loaded constructor was used');
    loaded.close();

    const none = new Connection({url: 'ws://fake/ws'}).start();
    const failures = [];
    none.onConnectFailed((e) => failures.push(e.code));
    await until(() => failures.length === 1, 'reported');
    assert.deepEqual(failures, ['no_websocket']);
    assert.equal(none.fatal.code, 'no_websocket');
    await tick(20);
    assert.equal(none.connects, 0);
  } finally {
    if (saved) Object.defineProperty(globalThis, 'WebSocket', saved);
  }
});
