import { describe, expect, it } from 'vitest';
import { AgentTimeline } from '../src/core/timeline';
import { FakeSession, rng, writeTurn } from './fake_daemon';

function strip(i: any) {
  const { ...rest } = i;
  return rest;
}

describe('AgentTimeline', () => {
  it('first open shows the tail page, then applies live events once each', () => {
    const s = new FakeSession();
    for (let n = 1; n <= 5; n++) writeTurn(s, n);
    const tl = new AgentTimeline(s.id);
    tl.applyPage(s.page('tail', undefined, 4), 'tail');
    expect(tl.cursor).toBe(`1:${s.tail}`);
    expect(tl.hasOlder).toBe(true);
    expect(tl.itemCount()).toBe(4);
    const from = s.tail;
    writeTurn(s, 6);
    const live = s.events.filter((e) => e.seq > from);
    // Delivered twice (a replay overlapping the live path): applied once.
    tl.applyEvents(1, live.slice(0, 5));
    const r = tl.applyEvents(1, live);
    expect(r.gap).toBe(false);
    expect(tl.cursor).toBe(`1:${s.tail}`);
    const want = s.project().find((i) => i.key === 'a:m6')!;
    expect(tl.getItem('a:m6')).toEqual(want);
    expect(r.acks).toEqual([]); // c6 was already acked by the first delivery
  });

  it('detects a gap instead of applying past it', () => {
    const s = new FakeSession();
    writeTurn(s, 1);
    const tl = new AgentTimeline(s.id);
    tl.applyPage(s.page('tail', undefined, 50, 3), 'tail');
    const r = tl.applyEvents(1, s.events.slice(5));
    expect(r.gap).toBe(true);
    expect(tl.cursor).toBe('1:3');
  });

  it('keeps the streaming assistant message in the head lane only', () => {
    const s = new FakeSession();
    s.append('turn.started', { origin: 'foreground', clientMessageId: 'c1' }, 't1');
    s.append('user.message', { messageId: 'u1', clientMessageId: 'c1', text: 'hi', attachments: [] }, 't1');
    s.append('assistant.message.start', { messageId: 'm1' }, 't1');
    s.append('assistant.message.delta', { messageId: 'm1', text: 'Hel' }, 't1');
    const tl = new AgentTimeline(s.id);
    tl.applyPage(s.page('tail', undefined, 50), 'tail');
    let lanes = tl.lanes();
    expect(lanes.head?.item.text).toBe('Hel');
    expect(lanes.rows.map((r) => r.id)).not.toContain(lanes.head!.id);
    const e = s.append('assistant.message.end', { messageId: 'm1' }, 't1');
    tl.applyEvents(1, [e]);
    lanes = tl.lanes();
    expect(lanes.head).toBeNull();
    expect(lanes.rows.at(-1)!.item.key).toBe('a:m1');
  });

  it('replaces a live prefix with the projected item instead of appending to it', () => {
    const s = new FakeSession();
    s.append('turn.started', { origin: 'foreground' }, 't1');
    const tl = new AgentTimeline(s.id);
    tl.applyPage(s.page('tail', undefined, 50), 'tail');
    s.append('assistant.message.start', { messageId: 'm1' }, 't1');
    s.append('assistant.message.delta', { messageId: 'm1', text: 'Hel' }, 't1');
    tl.applyEvents(1, s.events.slice(1));
    s.append('assistant.message.delta', { messageId: 'm1', text: 'lo' }, 't1');
    // A catch-up page (state as of the tail) overlaps the live prefix.
    tl.applyPage(s.page('after', '1:2', 50), 'after');
    expect(tl.getItem('a:m1')!.text).toBe('Hello');
    // The live path delivering the same delta later changes nothing.
    tl.applyEvents(1, s.events.slice(3));
    expect(tl.getItem('a:m1')!.text).toBe('Hello');
    expect(tl.lanes().head!.item.text).toBe('Hello');
  });

  it('keeps the live item when a late page is behind it, and merges a partial overlap', () => {
    const s = new FakeSession();
    s.append('turn.started', { origin: 'foreground' }, 't1');
    s.append('tool_call.start', { callId: 'x', name: 'Bash', input: {} }, 't1');
    const tl = new AgentTimeline(s.id);
    tl.applyPage(s.page('tail', undefined, 50), 'tail');
    const stale = s.page('after', '1:1', 50); // built now, arrives later
    s.append('tool_call.output', { callId: 'x', text: 'out', truncated: false }, 't1');
    s.append('tool_call.end', { callId: 'x', status: 'completed', output: 'out', truncated: false }, 't1');
    tl.applyEvents(1, s.events.slice(2));
    tl.applyPage(stale, 'after');
    expect(tl.getItem('t:x')!.state).toBe('completed');
    expect(tl.getItem('t:x')).toEqual(s.project().find((i) => i.key === 't:x'));
  });

  it('a newer epoch resets: unacknowledged local rows survive, acknowledged omitted ones go', () => {
    const s = new FakeSession();
    writeTurn(s, 1, 'c1');
    const tl = new AgentTimeline(s.id);
    tl.addLocal({ localId: 'L1', clientMessageId: 'c1', text: 'prompt 1', attachments: [], createdAt: 1, acked: false });
    tl.addLocal({ localId: 'L2', clientMessageId: 'c2', text: 'pending', attachments: [], createdAt: 2, acked: false });
    tl.applyPage(s.page('tail', undefined, 50), 'tail');
    expect(tl.localRow('c1')!.acked).toBe(true);
    expect(tl.lanes().rows.find((r) => r.id === 'L1')).toBeDefined();
    // Rewind to before the first user message: epoch 2 without c1.
    s.epoch = 2;
    s.events = [];
    s.append('session.rewound', { fromEpoch: 1, toEpoch: 2, toSeq: 1 });
    tl.resetTo(s.page('tail', undefined, 50));
    expect(tl.epoch).toBe(2);
    expect(tl.localRow('c1')).toBeUndefined();
    expect(tl.lanes().pending.map((r) => r.id)).toEqual(['L2']);
  });

  it('a submitted row keeps its identity and content and takes the canonical slot', () => {
    const s = new FakeSession();
    writeTurn(s, 1);
    const tl = new AgentTimeline(s.id);
    tl.applyPage(s.page('tail', undefined, 50), 'tail');
    const img = { kind: 'image', mimeType: 'image/png', data: 'AAAA' };
    tl.addLocal({ localId: 'L9', clientMessageId: 'c9', text: 'look', attachments: [img], createdAt: 5, acked: false });
    expect(tl.lanes().pending.map((r) => r.id)).toEqual(['L9']);
    const from = s.tail;
    s.append('turn.started', { origin: 'foreground', clientMessageId: 'c9' }, 't9');
    s.append('user.message', { messageId: 'u9', clientMessageId: 'c9', text: 'look', attachments: [] }, 't9');
    const r = tl.applyEvents(
      1,
      s.events.filter((e) => e.seq > from),
    );
    expect(r.acks).toEqual(['c9']);
    const lanes = tl.lanes();
    expect(lanes.pending).toEqual([]);
    const row = lanes.rows.find((x) => x.id === 'L9')!;
    expect(row.item.attachments).toEqual([img]);
    expect(row.item.seqStart).toBe(from + 2);
    expect(lanes.rows.filter((x) => x.item.clientMessageId === 'c9')).toHaveLength(1);
  });

  it('randomized interleavings of live events and pages converge to the projection', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const rand = rng(seed);
      const s = new FakeSession();
      const turns = 3 + Math.floor(rand() * 6);
      for (let n = 1; n <= turns; n++) writeTurn(s, n, `c${n}`, 1 + Math.floor(rand() * 5));
      const total = s.tail;
      const t0 = 1 + Math.floor(rand() * (total - 1));
      const tl = new AgentTimeline(s.id);
      const limit = 1 + Math.floor(rand() * 6);
      tl.applyPage(s.page('tail', undefined, limit, t0), 'tail');
      let delivered = t0; // the live path's position (may replay what the client has)
      const inflight: { page: ReturnType<FakeSession['page']>; dir: 'after' | 'before' }[] = [];
      for (let step = 0; step < 200 && (tl.cursorSeq < total || inflight.length); step++) {
        const r = rand();
        if (r < 0.4 && delivered < total) {
          const from = Math.max(0, delivered - Math.floor(rand() * 3)); // overlap: duplicates
          const n = 1 + Math.floor(rand() * 4);
          const batch = s.events.filter((e) => e.seq > from && e.seq <= Math.min(total, from + n));
          const res = tl.applyEvents(1, batch);
          if (res.refetchAfter) inflight.push({ page: s.page('after', res.refetchAfter, 2), dir: 'after' });
          if (res.gap) delivered = tl.cursorSeq;
          else delivered = Math.max(delivered, batch.at(-1)?.seq ?? delivered);
        } else if (r < 0.65) {
          // Built at a daemon tail at least as far as the client's cursor; may arrive late.
          const at = tl.cursorSeq + Math.floor(rand() * (total - tl.cursorSeq + 1));
          inflight.push({ page: s.page('after', tl.cursor!, 1 + Math.floor(rand() * 4), at), dir: 'after' });
        } else if (r < 0.75 && tl.hasOlder && tl.olderCursor) {
          const at = tl.cursorSeq + Math.floor(rand() * (total - tl.cursorSeq + 1));
          inflight.push({ page: s.page('before', tl.olderCursor, 1 + Math.floor(rand() * 4), at), dir: 'before' });
        } else if (inflight.length) {
          const i = Math.floor(rand() * inflight.length);
          const [{ page, dir }] = inflight.splice(i, 1);
          tl.applyPage(page, dir);
        }
      }
      // Drain: the live path replays from the client's cursor (the subscribe contract).
      const last = tl.applyEvents(
        1,
        s.events.filter((e) => e.seq > tl.cursorSeq),
      );
      if (last.refetchAfter) inflight.push({ page: s.page('after', last.refetchAfter, 2), dir: 'after' });
      while (inflight.length) {
        const { page, dir } = inflight.splice(Math.floor(rand() * inflight.length), 1)[0];
        const res = tl.applyPage(page, dir);
        void res;
      }
      expect(tl.cursorSeq).toBe(total);
      const want = new Map(s.project().map((i) => [i.key, i]));
      const lanes = tl.lanes();
      const shown = [...lanes.rows, ...(lanes.head ? [lanes.head] : [])];
      const ids = shown.map((r) => r.id);
      expect(new Set(ids).size, `seed ${seed}: a row twice`).toBe(ids.length);
      for (const row of shown) expect(strip(row.item), `seed ${seed} ${row.item.key}`).toEqual(want.get(row.item.key));
      // Contiguous from the oldest loaded item to the tail.
      const oldest = Math.min(...shown.map((r) => r.item.seqStart));
      const expected = [...want.values()].filter((i) => i.seqStart >= oldest).map((i) => i.key);
      expect(
        shown.map((r) => r.item.key),
        `seed ${seed}`,
      ).toEqual(expected);
    }
  });
});
