// Daemon-free checks: cursors and offsets, the error of an HTTP answer, backoff bounds, and the
// replica's de-duplication and reconnect against a fake WebSocket.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {AgentstreamError, Backoff, ReplicaClient, compareCursors, cursorToOffset, errorFrom, offsetToCursor, parseCursor}
  from '../dist/index.js';

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
