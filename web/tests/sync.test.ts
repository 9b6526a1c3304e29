import { describe, expect, it } from 'vitest';
import { SyncEngine, type Clock } from '../src/core/sync';
import { AgentstreamError } from '@agentstream/client';
import { FakeSession, FakeTransport, settle, writeTurn } from './fake_daemon';

class ManualClock implements Clock {
  t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  now() {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number) {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(id: number) {
    this.timers.delete(id);
  }
  advance(ms: number) {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, v]) => v.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
}

const agent = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  provider: 'scripted',
  cwd: '/tmp',
  title: '',
  model: '',
  mode: 'default',
  status: 'idle',
  activeTurn: null,
  cursor: '1:0',
  queue: [],
  permissions: [],
  createdAt: 0,
  forkedFrom: null,
  loaded: true,
  closed: false,
  ...extra,
});

// Answers hello / agents.list / timeline.fetch / subscribe from a FakeSession.
async function serve(t: FakeTransport, s: FakeSession, opts: { hold?: string[] } = {}) {
  for (let i = 0; i < 50; i++) {
    await settle();
    const h = t.held.find((x) => !(opts.hold ?? []).includes(x.msg.type));
    if (!h) break;
    t.held.splice(t.held.indexOf(h), 1);
    const m = h.msg;
    if (m.type === 'hello') h.resolve({ type: 'server_info', features: { selectiveAgentTimeline: true } });
    else if (m.type === 'agents.list') h.resolve({ type: 'agents', agents: [agent(s.id)] });
    else if (m.type === 'timeline.fetch') h.resolve({ type: 'timeline', page: s.page(m.direction, m.cursor, m.limit) });
    else if (m.type === 'subscribe') h.resolve({ type: 'subscribed', cursor: m.cursor });
    else if (m.type === 'unsubscribe') h.resolve({ type: 'ok' });
    else if (m.type === 'send') h.resolve({ type: 'send.reply', accepted: true, outcome: 'accepted', turnId: 't' });
    else h.resolve({ type: 'ok' });
  }
  await settle();
}

function setup(pageLimit = 3) {
  const t = new FakeTransport();
  const clock = new ManualClock();
  let n = 0;
  const engine = new SyncEngine(t, { pageLimit, newId: () => `cm${++n}` }, clock);
  return { t, clock, engine };
}

describe('SyncEngine', () => {
  it('first open fetches the tail page and subscribes from its end cursor', async () => {
    const s = new FakeSession();
    for (let i = 1; i <= 4; i++) writeTurn(s, i);
    const { t, engine } = setup();
    engine.setPaneAgent('p1', s.id);
    t.connect();
    await serve(t, s);
    const fetches = t.requests.filter((r) => r.type === 'timeline.fetch');
    expect(fetches.map((f) => f.direction)).toEqual(['tail']);
    expect(t.requests.find((r) => r.type === 'subscribe').cursor).toBe(`1:${s.tail}`);
    expect(engine.syncState(s.id)).toBe('live');
    expect(t.sent.some((m) => m.type === 'heartbeat' && m.deviceType === 'desktop')).toBe(true);
  });

  it('the agent list: confirmed at each answer and when the connection drops; an agent no longer listed goes', async () => {
    const s = new FakeSession();
    const { t, clock, engine } = setup();
    expect(engine.confirmedMs).toBeNull();
    clock.t = 1000;
    t.connect();
    await serve(t, s);
    expect(engine.confirmedMs).toBe(1000);
    expect([...engine.agents.keys()]).toEqual([s.id]);
    t.push({ type: 'agent.created', agent: agent('ses_gone') });
    expect(engine.agents.has('ses_gone')).toBe(true);
    clock.t = 5000;
    t.disconnect();
    expect(engine.confirmedMs).toBe(5000); // the list was current until the drop
    clock.t = 9000;
    t.connect();
    await serve(t, s);
    expect(engine.confirmedMs).toBe(9000);
    expect([...engine.agents.keys()]).toEqual([s.id]); // closed while away: not listed, gone
  });

  it('an agents list that fails on a live socket drops it, and the reconnect lists again', async () => {
    const s = new FakeSession();
    const { t, engine } = setup();
    t.connect();
    await settle();
    t.take('hello')!.resolve({ type: 'server_info', features: {} });
    await settle();
    t.take('agents.list')!.reject(new Error('request timed out'));
    await settle();
    expect(t.drops).toBe(1);
    expect(engine.agents.size).toBe(0);
    t.connect();
    await serve(t, s);
    expect(engine.agents.has(s.id)).toBe(true);
  });

  it('resume with a cursor catches up page after page until hasNewer is false', async () => {
    const s = new FakeSession();
    writeTurn(s, 1);
    const { t, engine } = setup(2);
    engine.setPaneAgent('p1', s.id);
    t.connect();
    await serve(t, s);
    t.disconnect();
    for (let i = 2; i <= 6; i++) writeTurn(s, i);
    t.requests = [];
    t.connect();
    await serve(t, s);
    const fetches = t.requests.filter((r) => r.type === 'timeline.fetch');
    expect(fetches.length).toBeGreaterThan(3);
    expect(fetches.every((f) => f.direction === 'after')).toBe(true);
    expect(t.requests.find((r) => r.type === 'subscribe').cursor).toBe(`1:${s.tail}`);
    const rows = engine.timeline(s.id).lanes().rows;
    const first = rows[0].item.seqStart; // the first open loaded a 2-item tail page
    expect(rows.map((r) => r.item.key)).toEqual(
      s
        .project()
        .filter((i) => i.seqStart >= first)
        .map((i) => i.key),
    );
    expect(rows.length).toBeGreaterThan(20);
  });

  it('the watchdog guards each page, not the whole catch-up', async () => {
    const s = new FakeSession();
    writeTurn(s, 1);
    const { t, clock, engine } = setup(1);
    engine.setPaneAgent('p1', s.id);
    t.connect();
    await serve(t, s);
    t.disconnect();
    for (let i = 2; i <= 4; i++) writeTurn(s, i);
    t.connect();
    await serve(t, s, { hold: ['timeline.fetch'] });
    // Each page takes 10 s (under the 15 s watchdog); the whole catch-up takes much longer.
    let pages = 0;
    for (let i = 0; i < 40 && engine.syncState(s.id) !== 'live'; i++) {
      clock.advance(10000);
      const h = t.take('timeline.fetch');
      if (h) {
        pages++;
        h.resolve({ type: 'timeline', page: s.page(h.msg.direction, h.msg.cursor, h.msg.limit) });
      }
      await serve(t, s, { hold: ['timeline.fetch'] });
    }
    expect(pages).toBeGreaterThan(5);
    expect(engine.syncState(s.id)).toBe('live');
    // A page that never comes: the watchdog restarts the sync.
    t.disconnect();
    writeTurn(s, 5);
    t.connect();
    await serve(t, s, { hold: ['timeline.fetch'] });
    const stalled = t.take('timeline.fetch')!;
    expect(stalled).toBeDefined();
    clock.advance(15000 + 1000 + 1);
    await settle();
    const retry = t.take('timeline.fetch');
    expect(retry).toBeDefined();
    expect(retry!.msg.cursor).toBe(stalled.msg.cursor);
  });

  it('a hidden pane stays subscribed for the 30 s grace; disconnect clears it', async () => {
    const s = new FakeSession();
    writeTurn(s, 1);
    const { t, clock, engine } = setup();
    engine.setPaneAgent('p1', s.id);
    t.connect();
    await serve(t, s);
    engine.setPaneAgent('p1', null);
    clock.advance(29000);
    await serve(t, s);
    expect(t.requests.some((r) => r.type === 'unsubscribe')).toBe(false);
    engine.setPaneAgent('p2', s.id); // shown again within the grace: no churn
    clock.advance(60000);
    await serve(t, s);
    expect(t.requests.some((r) => r.type === 'unsubscribe')).toBe(false);
    engine.setTabVisible(false);
    clock.advance(30001);
    await serve(t, s);
    expect(t.requests.filter((r) => r.type === 'unsubscribe')).toHaveLength(1);
    expect(engine.isSubscribed(s.id)).toBe(false);
    // Visible again after the grace: cached state at once, catch-up from the cursor.
    t.requests = [];
    engine.setTabVisible(true);
    await serve(t, s);
    expect(t.requests.filter((r) => r.type === 'timeline.fetch')[0].direction).toBe('after');
    engine.setPaneAgent('p2', null);
    t.disconnect();
    clock.advance(60000);
    expect(t.requests.filter((r) => r.type === 'unsubscribe')).toHaveLength(0);
  });

  it('a prompt sent while disconnected is sent on reconnect with the same client message id', async () => {
    const s = new FakeSession();
    const { t, engine } = setup();
    engine.setPaneAgent('p1', s.id);
    const img = { kind: 'image', mimeType: 'image/png', data: 'iVBOR' };
    const cmid = engine.dispatch(s.id, '', [img]); // image-only prompt
    expect(engine.timeline(s.id).lanes().pending).toHaveLength(1);
    t.connect();
    await serve(t, s, { hold: ['send'] });
    const first = t.take('send')!;
    expect(first.msg.clientMessageId).toBe(cmid);
    expect(first.msg.attachments).toEqual([img]);
    t.disconnect(); // the reply is lost
    t.connect();
    await serve(t, s, { hold: ['send'] });
    const again = t.take('send')!;
    expect(again.msg.clientMessageId).toBe(cmid);
    again.resolve({ type: 'send.reply', accepted: true, outcome: 'duplicate', turnId: 'turn_1' });
    // The provider's acknowledgement arrives through the live stream.
    const from = s.tail;
    s.append('turn.started', { origin: 'foreground', clientMessageId: cmid }, 'turn_1');
    s.append('user.message', { messageId: 'u1', clientMessageId: cmid, text: '', attachments: [] }, 'turn_1');
    await serve(t, s);
    t.push({ type: 'events', agent: s.id, epoch: 1, events: s.events.filter((e) => e.seq > from) });
    await settle();
    expect(engine.submissions.openCount()).toBe(0);
    const lanes = engine.timeline(s.id).lanes();
    expect(lanes.pending).toHaveLength(0);
    const row = lanes.rows.find((r) => r.item.clientMessageId === cmid)!;
    expect(row.id).toBe(`local:${cmid}`);
    expect(row.item.attachments).toEqual([img]);
  });

  it('a reset message replaces the replica with the new epoch', async () => {
    const s = new FakeSession();
    writeTurn(s, 1);
    const { t, engine } = setup();
    engine.setPaneAgent('p1', s.id);
    t.connect();
    await serve(t, s);
    s.epoch = 2;
    s.events = [];
    s.append('session.rewound', { fromEpoch: 1, toEpoch: 2, toSeq: 0 });
    t.push({ type: 'reset', agent: s.id, epoch: 2, page: s.page('tail', undefined, 50) });
    await settle();
    expect(engine.timeline(s.id).epoch).toBe(2);
    expect(engine.timeline(s.id).lanes().rows).toHaveLength(0);
  });

  it('mode, model and thinking are set by their messages; capabilities outlive a snapshot without them', async () => {
    const s = new FakeSession();
    const { t, engine } = setup();
    engine.setPaneAgent('p1', s.id);
    t.connect();
    await serve(t, s);
    expect(engine.capabilities(s.id)).toBeNull();

    const caps = { modes: [{ id: 'plan', label: 'Plan' }], commands: [{ name: 'help', description: '' }] };
    t.push({ type: 'agent.status', agent: agent(s.id, { capabilities: caps }) });
    expect(engine.capabilities(s.id)).toEqual(caps);
    // The daemon restarted: the runtime is not running, the snapshot has none; the last stand in.
    t.push({ type: 'agent.status', agent: agent(s.id, { capabilities: null }) });
    expect(engine.capabilities(s.id)).toEqual(caps);
    // A capabilities.changed event seen live replaces them.
    const next = { models: [{ id: 'm2', label: '' }] };
    s.append('capabilities.changed', next);
    t.push({ type: 'events', agent: s.id, epoch: 1, events: s.events.slice(-1) });
    expect(engine.capabilities(s.id)).toEqual(next);

    const answers: unknown[] = [];
    for (const [option, value] of [
      ['mode', 'plan'],
      ['model', 'm2'],
      ['thinking', 'on'],
    ] as const)
      void engine.setOption(s.id, option, value).then(
        () => answers.push('ok'),
        (e) => answers.push(e.message),
      );
    await settle();
    expect(t.held.map((h) => h.msg)).toEqual([
      { type: 'mode.set', agent: s.id, mode: 'plan' },
      { type: 'model.set', agent: s.id, model: 'm2' },
      { type: 'thinking.set', agent: s.id, thinking: 'on' },
    ]);
    t.take('mode.set')!.resolve({ type: 'ok' });
    t.take('model.set')!.reject(new AgentstreamError('invalid_argument', 'unknown model m2'));
    t.take('thinking.set')!.resolve({ type: 'ok' });
    await settle();
    expect(answers).toEqual(['ok', 'unknown model m2', 'ok']);

    // A closed agent's are forgotten.
    t.push({ type: 'agent.disposed', agent: agent(s.id, { closed: true, capabilities: null }) });
    expect(engine.capabilities(s.id)).toBeNull();
  });
});
