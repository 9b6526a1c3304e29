// The WebSocket replica against a real daemon: a subscription from a cursor that replays and
// continues live across a kill -9 and a restart on the same data directory and port (every
// event once and in order, checked against a full read of the log), a prompt sent while
// disconnected recorded once, a prompt whose answer the kill lost recorded once, and a
// permission answered.
import assert from 'node:assert/strict';
import {after, before, describe, test} from 'node:test';
import {WebSocket} from 'ws';

import {AgentstreamHttp, ReplicaClient, readAllEvents} from '../dist/index.js';
import {Daemon, SKIP, key, sleep, until, within} from './harness.mjs';

describe('WebSocket replica', {skip: SKIP, timeout: 60000}, () => {
  let daemon;
  let http;
  let rc;
  before(async () => {
    daemon = await new Daemon({chunkMs: 10}).start();
    http = new AgentstreamHttp({baseUrl: daemon.baseUrl, retries: 20, retryMaxDelayMs: 500});
  });
  after(async () => {
    rc?.close();
    await daemon?.stop();
  });

  const settled = (id) => until(async () => {
    const a = await http.getAgent(id);
    return (a.status === 'idle' || a.status === 'error') && a.activeTurn === null && a.queue.length === 0 && a;
  }, `${id} without a turn`, 30000);
  const userMessages = (events, cmid) =>
    events.filter((e) => e.kind === 'user.message' && e.payload.clientMessageId === cmid).length;

  test('replay then live, across kill -9 and a restart, with submissions', async () => {
    const a = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    rc = new ReplicaClient({baseUrl: daemon.baseUrl, WebSocket, minDelayMs: 50, maxDelayMs: 400}).start();
    await rc.waitConnected(10000);
    const replica = rc.subscribe(a.id, {cursor: '1:0', keepEvents: true});
    const batches = [];
    replica.onEvents((b) => batches.push(b));
    const statuses = [];
    replica.onStatus((s) => statuses.push(s.status));

    const r1 = await rc.send(a.id, {text: 'first prompt', clientMessageId: 'r1'});
    assert.equal(r1.outcome, 'accepted');
    await replica.waitFor((r) => r.events.some((e) => e.kind === 'assistant.message.delta'), 20000, 'the first deltas');
    await daemon.kill9();
    await until(() => !rc.connected, 'the replica to notice the kill', 10000, 5);

    // Sent while disconnected: goes once the daemon is back.
    const p2 = rc.send(a.id, {text: 'second prompt, sent while the daemon is down', clientMessageId: 'r2'});
    assert.equal(rc.unsettledSubmissions, 1);
    await sleep(300);
    await daemon.start();
    const r2 = await within(p2, 30000, 'the submission after the restart');
    assert.ok(['accepted', 'queued'].includes(r2.outcome), JSON.stringify(r2));
    assert.equal(rc.unsettledSubmissions, 0);
    await settled(a.id);

    // Sent, then the daemon killed at once: its answer (maybe its recording) is lost; it is sent
    // again with the same id after the restart and recorded once either way.
    const p3 = rc.send(a.id, {text: 'third prompt, its answer lost', clientMessageId: 'r3'});
    await daemon.kill9();
    await sleep(200);
    await daemon.start();
    const r3 = await within(p3, 30000, 'the lost submission');
    assert.ok(['accepted', 'queued', 'duplicate'].includes(r3.outcome), JSON.stringify(r3));
    await settled(a.id);

    // A retry of a known id is a duplicate, never a second prompt.
    const again = await rc.send(a.id, {text: 'first prompt', clientMessageId: 'r1'});
    assert.equal(again.outcome, 'duplicate');

    const log = await readAllEvents(http, a.id);
    const tail = key(log.events.at(-1));
    await replica.waitFor((r) => r.cursor === tail, 20000, `the replica at the tail ${tail}`);
    await sleep(200);
    assert.ok(rc.connects >= 3, `reconnected (${rc.connects} connects)`);
    assert.deepEqual(replica.events.map(key), log.events.map(key), 'every event once and in order');
    assert.deepEqual(replica.events, log.events);
    assert.deepEqual(batches.flatMap((b) => b.events).map(key), log.events.map(key));
    for (const cmid of ['r1', 'r2', 'r3']) assert.equal(userMessages(log.events, cmid), 1, `one user message ${cmid}`);
    assert.ok(log.events.some((e) => e.kind === 'turn.failed' && e.payload.code === 'daemon_restarted'));
    assert.ok(statuses.length > 0, 'agent.status notices');
    assert.equal(replica.state, 'live');
  });

  test('a permission answered over the WebSocket, and a rewind reset', async () => {
    rc ??= new ReplicaClient({baseUrl: daemon.baseUrl, WebSocket}).start();
    await rc.waitConnected(10000);
    const a = await rc.createAgent({provider: 'scripted', cwd: '/tmp'});
    const replica = rc.subscribe(a.id, {keepEvents: true});
    await replica.waitFor((r) => r.state === 'live', 10000, 'live');
    // From the tail: the create's cursor, or later (the runtime's capabilities.changed may follow it).
    assert.ok(Number(replica.cursor.split(':')[1]) >= Number(a.cursor.split(':')[1]), `${replica.cursor} ${a.cursor}`);
    await rc.send(a.id, 'please ask permission');
    // (A snapshot may list the permission while its status still says `running`; wait for both.)
    const asking = await rc.waitForAgent(a.id, (x) => x.permissions.length > 0 && x.status === 'permission', 20000);
    await rc.replyPermission(a.id, asking.permissions[0].requestId, {decision: 'allow'});
    await rc.waitForAgent(a.id, (x) => x.status === 'idle' && x.activeTurn === null, 20000);
    await replica.waitFor((r) => r.events.some((e) => e.kind === 'permission.resolved'), 10000, 'permission.resolved');
    const err = await rc.replyPermission(a.id, asking.permissions[0].requestId, {decision: 'deny'}).catch((e) => e);
    assert.equal(err.code, 'not_found');

    const page = await rc.timeline(a.id, {direction: 'tail', limit: 5});
    assert.equal(page.epoch, 1);

    const resets = [];
    replica.onReset((r) => resets.push(r));
    await rc.rewind(a.id, '1:4');
    await replica.waitFor(() => resets.length > 0, 10000, 'the reset');
    assert.equal(resets[0].epoch, 2);
    assert.ok(replica.events.every((e) => e.epoch === 2), 'the old epoch was dropped');
    const sent = await rc.send(a.id, 'after the rewind');
    await replica.waitFor((r) => r.events.some((e) => e.kind === 'turn.completed' && e.turn === sent.turnId), 20000,
                          'the turn after the rewind');
    await rc.waitForAgent(a.id, (x) => x.status === 'idle' && x.activeTurn === null, 20000);
    const log = await readAllEvents(http, a.id);
    await replica.waitFor((r) => r.cursor === key(log.events.at(-1)), 10000, 'the tail');
    // After a reset, delivery continues after the page's end cursor.
    const from = Number(resets[0].page.endCursor.split(':')[1]);
    assert.deepEqual(replica.events.map(key), log.events.filter((e) => e.seq > from).map(key));
  });
});
