// One agent's timeline replica: committed items (canonical, by key, ordered by seqStart), the
// live assistant head, and rows submitted locally that the provider has not echoed yet.
//
// Two paths feed it (docs/web.md, "Sync"): live events (applied once each, in seq order, tracking
// the resume cursor) and projected pages (canonical state). A page item replaces the live item of
// the same key when its sourceSeqRanges cover what was applied live; a live item that is ahead of
// the page keeps its extra events re-applied on top; text is never appended to a live prefix.
import { compareCursors, formatCursor, parseCursor } from '@agentstream/client';
import { foldEvent } from './project';
import { rangesCover, rangesHas } from './ranges';
import type { Attachment, EventEnvelope } from '@agentstream/client';
import type { Item, Page } from './types';

// Live events remembered per item so a page that is behind can be brought forward without a
// refetch; bounded per item and in total (the oldest items' logs are dropped first).
export const MAX_LIVE_EVENTS_PER_ITEM = 4096;
export const MAX_LIVE_EVENTS_TOTAL = 20000;

export interface LocalRow {
  localId: string;
  clientMessageId: string;
  text: string;
  attachments: Attachment[];
  createdAt: number;
  // Matched by a canonical user message (provider acknowledgement).
  acked: boolean;
}

export interface Row {
  id: string; // stable presentation id: a local row keeps its localId after acknowledgement
  item: Item; // canonical item, or a user_message built from the local row
  local?: LocalRow;
  epoch: number;
}

export interface Lanes {
  rows: Row[]; // committed rows, in timeline order
  head: Row | null; // the assistant message still streaming at the tail
  pending: Row[]; // local submissions not yet in the canonical timeline
}

export interface ApplyResult {
  applied: number;
  gap: boolean; // an event skipped the next expected seq: catch up from the cursor
  staleEpoch: boolean; // events of another epoch: the owner must reset
  acks: string[]; // clientMessageIds observed canonically
  // A live event continued an item this replica never saw start (it began before the loaded
  // window): fetch an `after` page from this cursor to get its canonical state and position.
  refetchAfter: string | null;
}

// Kinds whose first event may be the continuation of an item that started earlier.
const CONTINUATION = new Set([
  'assistant.message.delta',
  'assistant.message.end',
  'reasoning',
  'tool_call.output',
  'tool_call.end',
  'permission.resolved',
  'authorization.completed',
  'plan',
  'subagent.event',
]);

export class AgentTimeline {
  epoch = 0;
  cursorSeq = 0;
  hasCursor = false;
  hasOlder = false;
  olderCursor: string | null = null;
  version = 0;

  private items = new Map<string, Item>();
  private order: string[] = []; // keys by seqStart
  private liveLog = new Map<string, EventEnvelope[]>();
  private liveCount = 0;
  private locals = new Map<string, LocalRow>(); // by clientMessageId
  private lanesCache: { version: number; lanes: Lanes } | null = null;
  // Items built from live continuations only, hidden until a page gives their canonical state.
  private unconfirmed = new Set<string>();

  constructor(readonly agentId: string) {}

  get cursor(): string | null {
    return this.hasCursor ? formatCursor({ epoch: this.epoch, seq: this.cursorSeq }) : null;
  }

  itemCount(): number {
    return this.items.size;
  }

  getItem(key: string): Item | undefined {
    return this.items.get(key);
  }

  // ---- local submissions ----

  addLocal(row: LocalRow): void {
    if (this.locals.has(row.clientMessageId)) return;
    this.locals.set(row.clientMessageId, row);
    // A canonical twin may already be here (a page raced the local insert).
    for (const item of this.items.values()) {
      if (item.kind === 'user_message' && item.clientMessageId === row.clientMessageId) row.acked = true;
    }
    this.version++;
  }

  localRow(clientMessageId: string): LocalRow | undefined {
    return this.locals.get(clientMessageId);
  }

  // ---- live path ----

  applyEvents(epoch: number, events: EventEnvelope[]): ApplyResult {
    const result: ApplyResult = { applied: 0, gap: false, staleEpoch: false, acks: [], refetchAfter: null };
    if (!this.hasCursor) return result; // history first; the subscription starts at the cursor
    if (epoch !== this.epoch) {
      result.staleEpoch = epoch > this.epoch;
      return result;
    }
    for (const e of events) {
      if (e.seq <= this.cursorSeq) continue; // already have it
      if (e.seq !== this.cursorSeq + 1) {
        result.gap = true;
        break;
      }
      if (this.foldLive(e, result.acks) && result.refetchAfter === null)
        result.refetchAfter = formatCursor({ epoch: this.epoch, seq: e.seq - 1 });
      this.cursorSeq = e.seq;
      result.applied++;
    }
    if (result.applied > 0) this.version++;
    return result;
  }

  // Returns true when the event continued an item not held here while older history exists.
  private foldLive(e: EventEnvelope, acks: string[]): boolean {
    const before = this.findKeyFor(e);
    const prev = before ? this.items.get(before) : undefined;
    const next = foldEvent(prev, e);
    if (!next || next === prev) return false;
    const orphan = !prev && this.hasOlder && CONTINUATION.has(e.kind);
    if (orphan) this.unconfirmed.add(next.key);
    this.putItem(next, prev);
    let log = this.liveLog.get(next.key);
    if (!log) {
      log = [];
      this.liveLog.set(next.key, log);
    }
    if (log.length < MAX_LIVE_EVENTS_PER_ITEM) {
      log.push(e);
      this.liveCount++;
    }
    while (this.liveCount > MAX_LIVE_EVENTS_TOTAL) {
      const oldest = this.liveLog.keys().next().value as string;
      this.liveCount -= this.liveLog.get(oldest)!.length;
      this.liveLog.delete(oldest);
    }
    if (e.kind === 'user.message') this.noteCanonicalUser(next, acks);
    return orphan;
  }

  private findKeyFor(e: EventEnvelope): string | null {
    // user.message, error, notice (workspace.action and automation.fired too) and usage are keyed
    // by their own seq; the rest by provider ids.
    const p = e.payload ?? {};
    switch (e.kind) {
      case 'user.message':
      case 'error':
      case 'turn.failed':
      case 'notice':
      case 'workspace.action':
      case 'automation.fired':
      case 'usage':
        return `#${e.seq}`;
      case 'assistant.message.start':
      case 'assistant.message.delta':
      case 'assistant.message.end':
        return `a:${p.messageId}`;
      case 'reasoning':
        return `r:${p.messageId}`;
      case 'tool_call.start':
      case 'tool_call.output':
      case 'tool_call.end':
        return `t:${p.callId}`;
      case 'permission.requested':
      case 'permission.resolved':
        return `p:${p.requestId}`;
      case 'authorization.required':
      case 'authorization.completed':
        return `z:${p.requestId}`;
      case 'plan':
        return `plan:${e.turn ?? ''}`;
      case 'subagent.event':
        return `s:${p.child}`;
      default:
        return null;
    }
  }

  private noteCanonicalUser(item: Item, acks: string[]): void {
    const cmid = item.clientMessageId as string | undefined;
    if (!cmid) return;
    acks.push(cmid);
    const local = this.locals.get(cmid);
    if (local) local.acked = true;
  }

  private putItem(next: Item, prev: Item | undefined): void {
    if (prev && prev.seqStart !== next.seqStart) this.removeOrder(prev.key, prev.seqStart);
    this.items.set(next.key, next);
    if (!prev || prev.seqStart !== next.seqStart) this.insertOrder(next.key, next.seqStart);
  }

  private insertOrder(key: string, seqStart: number): void {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.items.get(this.order[mid])!.seqStart <= seqStart) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, key);
  }

  private removeOrder(key: string, _seqStart: number): void {
    const i = this.order.lastIndexOf(key);
    if (i >= 0) this.order.splice(i, 1);
  }

  // ---- authoritative path ----

  // Applies a projected page. `direction` is how it was fetched. Returns acknowledgements seen.
  // The caller resets first when the page belongs to another epoch (see needsReset).
  applyPage(page: Page, direction: 'tail' | 'before' | 'after'): ApplyResult {
    const result: ApplyResult = { applied: 0, gap: false, staleEpoch: false, acks: [], refetchAfter: null };
    if (this.hasCursor && page.epoch !== this.epoch) {
      result.staleEpoch = page.epoch > this.epoch;
      return result;
    }
    if (!this.hasCursor) {
      this.epoch = page.epoch;
      this.hasCursor = true;
      this.cursorSeq = 0;
    }
    for (const pageItem of page.items) {
      this.reconcile(pageItem, result.acks);
      result.applied++;
    }
    if (direction === 'tail' || direction === 'after') {
      const end = parseCursor(page.endCursor);
      if (end.epoch === this.epoch && end.seq > this.cursorSeq) this.cursorSeq = end.seq;
    }
    if (direction === 'tail' || direction === 'before') {
      if (direction === 'tail' || this.olderCursor === null || this.isOlder(page.startCursor, this.olderCursor)) {
        this.olderCursor = page.items.length ? page.startCursor : this.olderCursor;
        this.hasOlder = page.hasOlder;
      }
    }
    this.version++;
    return result;
  }

  private isOlder(a: string, b: string): boolean {
    try {
      return compareCursors(parseCursor(a), parseCursor(b)) < 0;
    } catch {
      return false;
    }
  }

  private reconcile(pageItem: Item, acks: string[]): void {
    const local = this.items.get(pageItem.key);
    let next: Item = pageItem;
    if (local && !rangesCover(pageItem.sourceSeqRanges, local.sourceSeqRanges)) {
      if (rangesCover(local.sourceSeqRanges, pageItem.sourceSeqRanges)) {
        next = local; // the live item is ahead of (or equal to) the page
      } else {
        // Each holds seqs the other lacks: the page, plus the live events it does not have.
        const log = this.liveLog.get(pageItem.key) ?? [];
        let merged: Item | undefined = pageItem;
        for (const e of log) if (!rangesHas(pageItem.sourceSeqRanges, e.seq)) merged = foldEvent(merged, e);
        next =
          merged && rangesCover(merged.sourceSeqRanges, local.sourceSeqRanges)
            ? merged
            : local.seqEnd >= pageItem.seqEnd
              ? local
              : pageItem;
      }
    }
    if (next === pageItem && this.liveLog.has(pageItem.key)) {
      this.liveCount -= this.liveLog.get(pageItem.key)!.length;
      this.liveLog.delete(pageItem.key);
    }
    if (next !== local) this.putItem(next, local);
    this.unconfirmed.delete(pageItem.key);
    if (next.kind === 'user_message') this.noteCanonicalUser(next, acks);
  }

  // A page or reset of a newer epoch (a rewind) replaces the history. Acknowledged local rows
  // that the new epoch omits are dropped; unacknowledged submissions always survive.
  resetTo(page: Page): ApplyResult {
    const destructive = page.epoch !== this.epoch;
    this.items.clear();
    this.order = [];
    this.liveLog.clear();
    this.liveCount = 0;
    this.unconfirmed.clear();
    this.hasCursor = false;
    this.cursorSeq = 0;
    this.olderCursor = null;
    this.hasOlder = false;
    if (destructive) {
      const keep = new Set(
        page.items.filter((i) => i.kind === 'user_message' && i.clientMessageId).map((i) => i.clientMessageId),
      );
      for (const [cmid, row] of this.locals) if (row.acked && !keep.has(cmid)) this.locals.delete(cmid);
    }
    return this.applyPage(page, 'tail');
  }

  // Drops settled local rows that are no longer needed for presentation (after their canonical
  // twin was seen). Keeps the presentation id stable by keeping the row while the twin exists.
  dropLocal(clientMessageId: string): void {
    if (this.locals.delete(clientMessageId)) this.version++;
  }

  // ---- presentation ----

  lanes(): Lanes {
    if (this.lanesCache && this.lanesCache.version === this.version) return this.lanesCache.lanes;
    const rows: Row[] = [];
    const matched = new Set<string>();
    // Items older than the loaded window (known only through later changes) wait for the page
    // that loads their neighbours.
    const windowStart = this.hasOlder && this.olderCursor ? parseCursor(this.olderCursor).seq : 0;
    for (const key of this.order) {
      const item = this.items.get(key)!;
      if (item.seqStart < windowStart || this.unconfirmed.has(key)) continue;
      if (item.kind === 'user_message' && item.clientMessageId) {
        const local = this.locals.get(item.clientMessageId);
        if (local) {
          matched.add(local.clientMessageId);
          // The local presentation (identity, text, images) in the canonical slot.
          rows.push({
            id: local.localId,
            item: { ...item, text: local.text, attachments: local.attachments },
            local,
            epoch: this.epoch,
          });
          continue;
        }
      }
      rows.push({ id: key, item, epoch: this.epoch });
    }
    let head: Row | null = null;
    const last = rows[rows.length - 1];
    if (last && last.item.kind === 'assistant_message' && !last.item.finished) head = rows.pop()!;
    const pending: Row[] = [];
    const unmatched = [...this.locals.values()]
      .filter((l) => !matched.has(l.clientMessageId) && !l.acked)
      .sort((a, b) => a.createdAt - b.createdAt);
    for (const l of unmatched) {
      pending.push({
        id: l.localId,
        item: {
          kind: 'user_message',
          key: l.localId,
          seqStart: 0,
          seqEnd: 0,
          sourceSeqRanges: [],
          collapsed: false,
          clientMessageId: l.clientMessageId,
          text: l.text,
          attachments: l.attachments,
        },
        local: l,
        epoch: this.epoch,
      });
    }
    const lanes = { rows, head, pending };
    this.lanesCache = { version: this.version, lanes };
    return lanes;
  }
}
