// The Durable Stream follower against a real daemon: every event exactly once and in order
// across a kill -9 of the daemon and a restart on the same data directory and port, checked
// against a full read of the log afterwards; and a rewind surfaced as a reset.
import assert from 'node:assert/strict';
import {after, before, describe, test} from 'node:test';

import {AgentstreamHttp, followEvents, readAllEvents} from '../dist/index.js';
import {Daemon, SKIP, key, sleep, until, within} from './harness.mjs';

describe('event follower', {skip: SKIP, timeout: 60000}, () => {
  let daemon;
  let http;
  before(async () => {
    // Chunks 10 ms apart: a turn streams for a while, so the kill lands in the middle of one.
    daemon = await new Daemon({chunkMs: 10}).start();
    http = new AgentstreamHttp({baseUrl: daemon.baseUrl, retries: 20, retryMaxDelayMs: 500});
  });
  after(async () => daemon?.stop());

  const idle = (id) => until(async () => {
    const a = await http.getAgent(id);
    // After a kill -9 mid-turn the turn failed (daemon_restarted): status `error`, no turn.
    return (a.status === 'idle' || a.status === 'error') && a.activeTurn === null && a;
  }, `${id} without a turn`, 30000);

  test('every event once, in order, across kill -9 and a restart', async () => {
    const a = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    const ctl = new AbortController();
    const follower = followEvents(http, a.id, {signal: ctl.signal, minDelayMs: 50, maxDelayMs: 500, maxFailures: 200});
    const got = [];
    const items = [];
    const reading = (async () => {
      for await (const item of follower) {
        items.push(item.type);
        if (item.type === 'event') got.push(item.event);
      }
    })();

    await http.send(a.id, {text: 'first prompt', clientMessageId: 'f1'});
    // Kill in the middle of the turn's stream, once some of it was delivered.
    await until(() => got.some((e) => e.kind === 'assistant.message.delta'), 'the first deltas', 20000, 5);
    await daemon.kill9();
    const before = got.length;
    await sleep(300); // the follower fails and backs off meanwhile
    await daemon.start();
    await idle(a.id);
    await http.send(a.id, {text: 'second prompt', clientMessageId: 'f2'});
    await idle(a.id);

    const log = await readAllEvents(http, a.id);
    await within(until(() => got.length >= log.events.length, 'the follower at the tail', 20000), 25000, 'catch-up');
    await sleep(200); // nothing more may arrive
    ctl.abort();
    await within(reading, 5000, 'the follower to end');

    assert.ok(before > 0 && before < log.events.length, `the kill fell inside the stream (${before}/${log.events.length})`);
    assert.deepEqual(got.map(key), log.events.map(key), 'every event once and in order');
    assert.deepEqual(got, log.events);
    assert.equal(new Set(got.map(key)).size, got.length);
    assert.ok(got.some((e) => e.kind === 'user.message' && e.payload.clientMessageId === 'f2'));
    assert.ok(!items.includes('reset'));
    assert.ok(got.some((e) => e.kind === 'turn.failed' && e.payload.code === 'daemon_restarted'));
  });

  test('a rewind while following is surfaced as a reset', async () => {
    const a = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    await http.send(a.id, 'a prompt');
    await idle(a.id);
    const first = await readAllEvents(http, a.id);
    const ctl = new AbortController();
    const items = [];
    const follower = followEvents(http, a.id, {offset: first.offset, signal: ctl.signal, upToDate: true});
    const reading = (async () => {
      for await (const item of follower) items.push(item);
    })();
    await until(() => items.some((i) => i.type === 'up-to-date'), 'up to date');
    await http.rewind(a.id, '1:4');
    await until(() => items.some((i) => i.type === 'reset'), 'the reset', 20000);
    const log = await readAllEvents(http, a.id);
    await until(() => items.filter((i) => i.type === 'event').length >= log.events.length, 'the new epoch', 20000);
    ctl.abort();
    await within(reading, 5000, 'the follower to end');
    const afterReset = items.slice(items.findIndex((i) => i.type === 'reset') + 1).filter((i) => i.type === 'event');
    assert.deepEqual(afterReset.map((i) => key(i.event)), log.events.map(key));
    assert.ok(log.events.every((e) => e.epoch === 2));
    assert.equal(follower.cursor, key(log.events.at(-1)));

    // A follower started from an offset of the replaced epoch gets the reset first.
    const late = followEvents(http, a.id, {offset: first.offset, upToDate: true});
    const seen = [];
    for await (const item of late) {
      seen.push(item);
      if (item.type === 'up-to-date') break;
    }
    assert.equal(seen[0].type, 'reset');
    assert.deepEqual(seen.filter((i) => i.type === 'event').map((i) => key(i.event)), log.events.map(key));
  });
});
