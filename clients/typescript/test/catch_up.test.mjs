// Daemon-free checks of catchUpPages, the paging shared by AgentstreamHttp.timelinePages and the
// web page's sync engine, against a scripted page source.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {catchUpPages} from '../dist/index.js';

const page = (endCursor, hasNewer, extra = {}) => ({endCursor, hasNewer, reset: false, items: [], ...extra});

// Answers each fetch from `answers` (keyed "direction cursor") and records the fetches.
function source(answers) {
  const asked = [];
  const fetch = async (direction, cursor) => {
    const key = cursor === undefined ? direction : `${direction} ${cursor}`;
    asked.push(key);
    const a = answers[key];
    if (a instanceof Error) throw a;
    if (!a) throw new Error(`unexpected fetch ${key}`);
    return a;
  };
  return {fetch, asked};
}

async function all(it) {
  const out = [];
  for await (const p of it) out.push(p.endCursor);
  return out;
}

test('without a cursor: the tail page only', async () => {
  const {fetch, asked} = source({tail: page('1:9', false)});
  assert.deepEqual(await all(catchUpPages(fetch)), ['1:9']);
  assert.deepEqual(asked, ['tail']);
});

test('with a cursor: after pages, each from the last end, until hasNewer is false', async () => {
  const {fetch, asked} = source({'after 1:2': page('1:5', true), 'after 1:5': page('1:8', true), 'after 1:8': page('1:9', false)});
  assert.deepEqual(await all(catchUpPages(fetch, '1:2')), ['1:5', '1:8', '1:9']);
  assert.deepEqual(asked, ['after 1:2', 'after 1:5', 'after 1:8']);
});

test('a reset page is yielded and paging goes on from its end; a page that does not move ends it', async () => {
  const {fetch, asked} = source({'after 1:7': page('2:3', true, {reset: true}), 'after 2:3': page('2:3', true)});
  assert.deepEqual(await all(catchUpPages(fetch, '1:7')), ['2:3', '2:3']);
  assert.deepEqual(asked, ['after 1:7', 'after 2:3']);
});

test("a fetch's failure is thrown; stopping the iteration fetches nothing more", async () => {
  const failing = source({'after 1:2': page('1:5', true), 'after 1:5': new Error('lost')});
  const got = [];
  await assert.rejects(async () => {
    for await (const p of catchUpPages(failing.fetch, '1:2')) got.push(p.endCursor);
  }, /lost/);
  assert.deepEqual(got, ['1:5']);
  const stopped = source({'after 1:2': page('1:5', true), 'after 1:5': page('1:6', false)});
  for await (const _ of catchUpPages(stopped.fetch, '1:2')) break;
  assert.deepEqual(stopped.asked, ['after 1:2']);
});
