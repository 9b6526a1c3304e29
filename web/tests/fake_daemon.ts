// A model of one daemon session for unit tests: an event log, projected pages built with the
// daemon's rules (items carry their state as of the tail; `after` pages bounded by items), and a
// Transport whose replies the test delivers in any order.
import { foldEvent, itemKeyOf } from '../src/core/project';
import { AgentstreamError } from '@agentstream/client';
import type { Transport } from '../src/core/transport';
import type { EventEnvelope } from '@agentstream/client';
import type { Item, Page } from '../src/core/types';

export class FakeSession {
  epoch = 1;
  events: EventEnvelope[] = [];
  constructor(readonly id = 'ses_1') {}

  get tail(): number {
    return this.events.length ? this.events[this.events.length - 1].seq : 0;
  }

  append(kind: string, payload: Record<string, any> = {}, turn?: string): EventEnvelope {
    const e: EventEnvelope = { v: 1, session: this.id, epoch: this.epoch, seq: this.tail + 1, time: 0, kind, payload };
    if (turn) e.turn = turn;
    this.events.push(e);
    return e;
  }

  // Items as of seq `upTo`, ordered by seqStart.
  project(upTo = this.tail): Item[] {
    const items = new Map<string, Item>();
    for (const e of this.events) {
      if (e.seq > upTo) break;
      const k = itemKeyOf(e);
      if (!k) continue;
      const next = foldEvent(items.get(k.key), e);
      if (next) items.set(k.key, next);
    }
    return [...items.values()].sort((a, b) => a.seqStart - b.seqStart);
  }

  page(direction: 'tail' | 'before' | 'after', cursor: string | undefined, limit: number, at = this.tail): Page {
    const items = this.project(at);
    const base = { epoch: this.epoch, tail: at, reset: false, bytes: 0 };
    if (direction === 'tail') {
      const slice = items.slice(Math.max(0, items.length - limit));
      return {
        ...base,
        items: slice,
        hasOlder: slice.length < items.length,
        hasNewer: false,
        startCursor: `${this.epoch}:${slice[0]?.seqStart ?? at}`,
        endCursor: `${this.epoch}:${at}`,
      };
    }
    const c = Number(cursor!.split(':')[1]);
    const cEpoch = Number(cursor!.split(':')[0]);
    if (cEpoch !== this.epoch) return { ...this.page('tail', undefined, limit, at), reset: true };
    if (direction === 'before') {
      const older = items.filter((i) => i.seqStart < c);
      const slice = older.slice(Math.max(0, older.length - limit));
      return {
        ...base,
        items: slice,
        hasOlder: slice.length < older.length,
        hasNewer: true,
        startCursor: `${this.epoch}:${slice[0]?.seqStart ?? c}`,
        endCursor: `${this.epoch}:${c}`,
      };
    }
    // after: every item with a source seq in (c, E], E as large as `limit` items allow.
    const keys = new Set<string>();
    let end = c;
    for (const e of this.events) {
      if (e.seq <= c || e.seq > at) continue;
      const k = itemKeyOf(e);
      if (k && !keys.has(k.key)) {
        if (keys.size >= limit) break;
        keys.add(k.key);
      }
      end = e.seq;
    }
    return {
      ...base,
      items: items.filter((i) => keys.has(i.key)),
      hasOlder: true,
      hasNewer: end < at,
      startCursor: `${this.epoch}:${c}`,
      endCursor: `${this.epoch}:${end}`,
    };
  }
}

// Writes a turn: user message, reasoning, an assistant message in chunks, a tool call.
export function writeTurn(s: FakeSession, n: number, cmid = `c${n}`, chunks = 3): void {
  const turn = `turn_${n}`;
  s.append('turn.started', { origin: 'foreground', clientMessageId: cmid }, turn);
  s.append('user.message', { messageId: `u${n}`, clientMessageId: cmid, text: `prompt ${n}`, attachments: [] }, turn);
  s.append('reasoning', { messageId: `r${n}`, text: 'think ' }, turn);
  s.append('assistant.message.start', { messageId: `m${n}` }, turn);
  for (let i = 0; i < chunks; i++) s.append('assistant.message.delta', { messageId: `m${n}`, text: `w${i} ` }, turn);
  s.append('tool_call.start', { callId: `t${n}`, name: 'Bash', input: { command: 'ls' } }, turn);
  s.append('tool_call.output', { callId: `t${n}`, text: 'a\n', truncated: false }, turn);
  s.append('reasoning', { messageId: `r${n}`, text: 'more' }, turn);
  s.append('tool_call.end', { callId: `t${n}`, status: 'completed', output: 'a\nb\n', truncated: false }, turn);
  s.append('assistant.message.end', { messageId: `m${n}` }, turn);
  s.append('turn.completed', {}, turn);
}

// Deterministic PRNG for randomized tests (mulberry32).
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Held {
  msg: any;
  resolve: (v: any) => void;
  reject: (e: Error) => void;
}

// A Transport the test drives: requests wait in `held` until answered.
export class FakeTransport implements Transport {
  connected = false;
  held: Held[] = [];
  sent: any[] = []; // fire-and-forget messages
  requests: any[] = [];
  private messageFns: ((m: any) => void)[] = [];
  private connectionFns: ((c: boolean) => void)[] = [];

  onMessage(fn: (m: any) => void): void {
    this.messageFns.push(fn);
  }
  onConnection(fn: (c: boolean) => void): void {
    this.connectionFns.push(fn);
  }
  send(msg: any): void {
    this.sent.push(msg);
  }
  request(msg: any): Promise<any> {
    this.requests.push(msg);
    if (!this.connected) return Promise.reject(new AgentstreamError('disconnected', 'not connected'));
    return new Promise((resolve, reject) => this.held.push({ msg, resolve, reject }));
  }
  connect(): void {
    this.connected = true;
    for (const fn of this.connectionFns) fn(true);
  }
  disconnect(): void {
    this.connected = false;
    const held = this.held;
    this.held = [];
    for (const h of held) h.reject(new AgentstreamError('disconnected', 'the connection was lost'));
    for (const fn of this.connectionFns) fn(false);
  }
  drops = 0;
  drop(): void {
    this.drops++;
    this.disconnect();
  }
  push(msg: any): void {
    for (const fn of this.messageFns) fn(msg);
  }
  take(type: string): Held | undefined {
    const i = this.held.findIndex((h) => h.msg.type === type);
    return i < 0 ? undefined : this.held.splice(i, 1)[0];
  }
}

export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
