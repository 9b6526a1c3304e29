// Daemon-free checks of Submissions (src/submissions.ts): a fake channel holds each request until
// the test answers it, and a manual timer steps the retry delays.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {AgentstreamError, Submissions} from '../dist/index.js';

class FakeChannel {
  connected = false;
  held = [];
  request(msg) {
    if (!this.connected) return Promise.reject(new AgentstreamError('disconnected', 'not connected'));
    return new Promise((resolve, reject) => this.held.push({msg, resolve, reject}));
  }
  // Drops the connection: every request in flight rejects `disconnected`.
  drop() {
    this.connected = false;
    for (const h of this.held.splice(0)) h.reject(new AgentstreamError('disconnected', 'the connection was lost'));
  }
}

class ManualTimer {
  timers = new Set();
  setTimeout(fn, ms) {
    const t = {fn, ms};
    this.timers.add(t);
    return t;
  }
  clearTimeout(t) {
    this.timers.delete(t);
  }
  fireAll() {
    const due = [...this.timers];
    this.timers.clear();
    for (const t of due) t.fn();
  }
}

const settle = () => new Promise((r) => setImmediate(r));

function setup(opts = {}) {
  const ch = new FakeChannel();
  const timer = new ManualTimer();
  const subs = new Submissions(ch, {timer, ...opts});
  const states = [];
  subs.onChange((s) => states.push(`${s.clientMessageId}:${s.state}:${s.attempts}`));
  return {ch, timer, subs, states};
}

test('a send lost with the connection goes again with the same id; the answer settles it', async () => {
  const {ch, subs, states} = setup();
  const p = subs.submit('ses_1', {text: 'hi', clientMessageId: 'c1', whileRunning: 'queue'});
  assert.deepEqual(ch.held, []); // not connected: it waits
  ch.connected = true;
  subs.connectionUp();
  assert.deepEqual(ch.held[0].msg, {type: 'send', agent: 'ses_1', clientMessageId: 'c1', text: 'hi', whileRunning: 'queue'});
  ch.drop();
  subs.connectionLost();
  await settle();
  ch.connected = true;
  subs.connectionUp();
  assert.equal(ch.held.length, 1);
  assert.equal(ch.held[0].msg.clientMessageId, 'c1');
  ch.held[0].resolve({type: 'send.reply', id: 7, accepted: true, outcome: 'duplicate', turnId: 'turn_1'});
  const r = await p;
  assert.deepEqual(r, {accepted: true, outcome: 'duplicate', turnId: 'turn_1', clientMessageId: 'c1'});
  assert.deepEqual(states, ['c1:waiting:0', 'c1:sending:1', 'c1:waiting:1', 'c1:sending:2', 'c1:acknowledged:2']);
  assert.equal(subs.size, 0);
});

test('no second send after the answer; the same id while unanswered joins the first', async () => {
  const {ch, subs} = setup();
  ch.connected = true;
  const a = subs.submit('ses_1', {text: 'x', clientMessageId: 'c2'});
  const b = subs.submit('ses_1', {text: 'x', clientMessageId: 'c2'});
  assert.equal(ch.held.length, 1);
  ch.held.shift().resolve({type: 'send.reply', accepted: true, outcome: 'accepted', turnId: 't'});
  assert.equal((await a).outcome, 'accepted');
  assert.equal((await b).turnId, 't');
  ch.drop();
  subs.connectionLost();
  ch.connected = true;
  subs.connectionUp();
  assert.equal(ch.held.length, 0);
});

test('retryable errors are retried after the backoff, at most maxAttempts times', async () => {
  const {ch, timer, subs, states} = setup({maxAttempts: 3});
  ch.connected = true;
  const failed = assert.rejects(subs.submit('ses_1', {text: 'x', clientMessageId: 'c3'}),
                                 (e) => e instanceof AgentstreamError && e.code === 'unavailable');
  for (let i = 0; i < 3; i++) {
    assert.equal(ch.held.length, 1, `attempt ${i + 1}`);
    ch.held.shift().reject(new AgentstreamError('unavailable', 'restarting'));
    await settle();
    if (i < 2) {
      assert.ok([...timer.timers].every((t) => t.ms >= 187 && t.ms <= 5000));
      timer.fireAll();
    }
  }
  await failed;
  assert.equal(states.at(-1), 'c3:failed:3');
  assert.equal(timer.timers.size, 0);
  assert.equal(subs.size, 0);
});

test('a daemon error fails at once; close aborts the rest; past maxUnanswered is refused', async () => {
  const {ch, subs} = setup({maxUnanswered: 2});
  ch.connected = true;
  const bad = subs.submit('ses_x', 'hi');
  ch.held.shift().reject(new AgentstreamError('not_found', 'no agent'));
  await assert.rejects(bad, (e) => e.code === 'not_found');
  const w1 = subs.submit('ses_1', 'a');
  const w2 = subs.submit('ses_1', 'b');
  await assert.rejects(subs.submit('ses_1', 'c'), (e) => e.code === 'resource_exhausted');
  assert.match(ch.held[0].msg.clientMessageId, /^msg_/);
  subs.close();
  await assert.rejects(w1, (e) => e.code === 'aborted');
  await assert.rejects(w2, (e) => e.code === 'aborted');
  ch.held[0].resolve({type: 'send.reply', accepted: true, outcome: 'accepted'}); // too late: ignored
  assert.equal(subs.size, 0);
});
