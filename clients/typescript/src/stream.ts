// A follower of one session log as a Durable Stream over HTTP (`GET /v1/agents/{id}/events`,
// long-poll): an async iterator of the events after an offset. It resumes from the last offset
// it delivered after any network error, timeout or daemon restart (bounded backoff), yields
// each event once and in order (anything at or before the last delivered position is dropped,
// and a batch that does not continue it is read again), and surfaces a Stream-Reset (a rewind
// replaced the epoch) as a `reset` item before the current epoch's events.
import { AgentstreamError, isAgentstreamError } from './errors.js';
import { Backoff, sleep } from './backoff.js';
import { compareCursors, cursorToOffset, parseCursor, type Cursor } from './cursor.js';
import type { AgentstreamHttp } from './http.js';
import type { EventEnvelope } from './types.js';

export type FollowItem =
  /** One event of the log; `offset` is its position, to resume after it. */
  | { type: 'event'; event: EventEnvelope; offset: string }
  /** The offset's epoch was replaced by a rewind: drop what you hold; the current epoch's events follow from its start. */
  | { type: 'reset'; offset: string }
  /** (With `upToDate: true`.) Every event up to the daemon's tail has been delivered. */
  | { type: 'up-to-date'; offset: string };

export interface FollowOptions {
  /** Where to start: `-1` (the default: the start of the current epoch), `now`, or an offset or cursor ("after this event"). */
  offset?: string;
  /** Ends the iteration (quietly) when aborted. */
  signal?: AbortSignal;
  /** Backoff after a failure: from this (default 100 ms) ... */
  minDelayMs?: number;
  /** ... doubling up to this (default 5000 ms). */
  maxDelayMs?: number;
  /** Consecutive failed reads before the iterator throws the last error. Default: unbounded. */
  maxFailures?: number;
  /** Client-side bound of one long-poll (ms); past it the read is abandoned and resumed. Default 45000. */
  readTimeoutMs?: number;
  /** Also yield an `up-to-date` item whenever the reads reach the tail after delivering events. */
  upToDate?: boolean;
  /** Called before each wait after a failure. */
  onRetry?: (error: unknown, failures: number, delayMs: number) => void;
}

export class EventFollower implements AsyncIterable<FollowItem> {
  /** The offset after the last event delivered (or the starting one): where a resume reads from. */
  offset: string;
  private last: Cursor | null;
  private started = false;

  constructor(
    private readonly http: AgentstreamHttp,
    readonly agentId: string,
    private readonly opts: FollowOptions = {},
  ) {
    this.offset = opts.offset ?? '-1';
    this.last = /^\d+[:_]\d+$/.test(this.offset) ? parseCursor(this.offset) : null;
  }

  /** The position of the last event delivered ("E:S"), or null before the first. */
  get cursor(): string | null {
    return this.last ? `${this.last.epoch}:${this.last.seq}` : null;
  }

  [Symbol.asyncIterator](): AsyncIterator<FollowItem> {
    if (this.started) throw new Error('an EventFollower is iterated once; make another from its offset');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<FollowItem> {
    const o = this.opts;
    const backoff = new Backoff({ minDelayMs: o.minDelayMs ?? 100, maxDelayMs: o.maxDelayMs ?? 5000 });
    const maxFailures = o.maxFailures ?? Infinity;
    let deliveredSinceTail = true; // the first arrival at the tail is reported too
    const fail = async (e: unknown): Promise<boolean> => {
      if (o.signal?.aborted) return false;
      if (!isAgentstreamError(e) || !(e.retryable || e.code === 'sequence_gap')) throw e;
      if (backoff.failures + 1 > maxFailures) throw e;
      const delay = backoff.next();
      o.onRetry?.(e, backoff.failures, delay);
      try {
        await sleep(delay, o.signal);
      } catch {
        return false;
      }
      return true;
    };
    for (;;) {
      if (o.signal?.aborted) return;
      let read;
      try {
        read = await this.http.readEvents(this.agentId, {
          offset: this.offset,
          live: 'long-poll',
          signal: o.signal,
          timeoutMs: o.readTimeoutMs ?? 45000,
        });
      } catch (e) {
        if (await fail(e)) continue;
        return;
      }
      if (read.reset) {
        this.last = null;
        this.offset = '-1';
        yield { type: 'reset', offset: read.nextOffset };
      }
      let gap: AgentstreamError | null = null;
      for (const event of read.events) {
        const c = { epoch: event.epoch, seq: event.seq };
        if (this.last) {
          const order = compareCursors(c, this.last);
          if (order <= 0) continue; // delivered already
          if (c.epoch === this.last.epoch && c.seq !== this.last.seq + 1) {
            gap = new AgentstreamError(
              'sequence_gap',
              `events of ${this.agentId}: ${c.epoch}:${c.seq} after ${this.last.epoch}:${this.last.seq}`,
            );
            break;
          }
        }
        this.last = c;
        this.offset = cursorToOffset(c);
        deliveredSinceTail = true;
        yield { type: 'event', event, offset: this.offset };
      }
      if (gap) {
        // Not expected from the daemon; read again from the last event delivered.
        if (await fail(gap)) continue;
        return;
      }
      backoff.reset();
      // The next read starts after the last event delivered (normally the daemon's next offset).
      // Before any event (a start at `-1` or `now`) it starts at the daemon's next offset.
      if (!this.last && /^\d+_\d+$/.test(read.nextOffset)) {
        this.offset = read.nextOffset;
        this.last = parseCursor(read.nextOffset);
      }
      if (read.upToDate && o.upToDate && deliveredSinceTail) {
        deliveredSinceTail = false;
        yield { type: 'up-to-date', offset: this.offset };
      }
    }
  }
}

/** Follows an agent's log from `opts.offset` (default: the start of the current epoch). */
export function followEvents(http: AgentstreamHttp, agentId: string, opts: FollowOptions = {}): EventFollower {
  return new EventFollower(http, agentId, opts);
}

/**
 * Reads the whole current epoch of an agent's log (catch-up reads until Stream-Up-To-Date),
 * e.g. to check a replica against it.
 */
export async function readAllEvents(
  http: AgentstreamHttp,
  agentId: string,
  opts: { offset?: string; signal?: AbortSignal; maxReads?: number } = {},
): Promise<{ events: EventEnvelope[]; offset: string }> {
  const events: EventEnvelope[] = [];
  let offset = opts.offset ?? '-1';
  for (let i = 0; i < (opts.maxReads ?? 100000); i++) {
    const r = await http.readEvents(agentId, { offset, signal: opts.signal });
    if (r.reset) events.length = 0;
    events.push(...r.events);
    if (r.nextOffset === offset && r.events.length === 0) return { events, offset };
    offset = r.nextOffset;
    if (r.upToDate) return { events, offset };
  }
  throw new AgentstreamError('bad_response', `reading ${agentId}: no end after ${opts.maxReads} reads`);
}
