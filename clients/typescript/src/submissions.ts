// The life of each prompt sent over the app protocol (docs/protocol.md, `send`), kept in one
// place for ReplicaClient and the web page: a submission has a client message id, goes once a
// connection is there, goes again with the same id when its answer was lost (with the connection,
// a timeout, an overloaded daemon) until the daemon answers or the attempts run out, and reports
// each change of state to its listeners. The daemon records one prompt per client message id and
// answers a repeat `duplicate` with the original turn, so a retry never makes a second prompt.
// No socket here: the channel is the caller's (Connection, or the page's Transport), and so is
// the timer, so tests step time by hand.
import { Backoff, newId } from './backoff.js';
import { AgentstreamError, RETRY_CODES } from './errors.js';
import { Emitter, type Listener } from './emitter.js';
import type { SendReply, SendRequest } from './types.js';

/** What a submission needs of the connection: whether it is up, and one request answered by id. */
export interface SubmissionChannel {
  readonly connected: boolean;
  /** Resolves with the reply; rejects with an AgentstreamError (`disconnected`, `timeout`, the daemon's code). */
  request(msg: Record<string, unknown>): Promise<any>;
}

/** The timer retries are scheduled on (the global one by default). */
export interface SubmissionTimer {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: any): void;
}

export interface SubmissionsOptions {
  /** Sends of one submission before it fails with the last error. Default 20. */
  maxAttempts?: number;
  /** Submissions not yet answered; a further submit rejects with `resource_exhausted`. Default 1000. */
  maxUnanswered?: number;
  /** Delay before retrying after an error that was not a lost connection: from this (default 250 ms) doubling up to maxDelayMs (default 5000 ms). */
  minDelayMs?: number;
  maxDelayMs?: number;
  timer?: SubmissionTimer;
}

/** The daemon's answer to a `send`, with the submission's client message id. */
export type SubmissionReply = SendReply & { clientMessageId: string };

/**
 * Where a submission is:
 * - `waiting`: to be sent, at the next connect (or, connected, after a retry delay);
 * - `sending`: sent, its answer awaited;
 * - `acknowledged`: answered (`reply.outcome` accepted, queued, duplicate or rejected; its turnId); final;
 * - `failed`: given up (`error`: the daemon's error, the last one after maxAttempts, or `aborted` at close); final.
 */
export type SubmissionState = 'waiting' | 'sending' | 'acknowledged' | 'failed';

/** One submission's state as reported to listeners (a copy: later changes do not alter it). */
export interface SubmissionStatus {
  clientMessageId: string;
  agentId: string;
  state: SubmissionState;
  /** Sends made so far. */
  attempts: number;
  reply?: SubmissionReply;
  error?: AgentstreamError;
}

interface Entry {
  status: SubmissionStatus;
  body: Record<string, unknown>;
  backoff: Backoff;
  retry: unknown; // a pending retry timer, or null
  waiters: { resolve: (r: SubmissionReply) => void; reject: (e: AgentstreamError) => void }[];
}

const globalTimer: SubmissionTimer = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h),
};

/**
 * The submissions not yet answered, on one channel. Single-threaded (the event loop); the owner
 * calls connectionUp() when the channel is connected (and ready for sends) and connectionLost()
 * when it drops. A listener is called synchronously at each change of state.
 */
export class Submissions {
  private readonly entries = new Map<string, Entry>();
  private readonly emitter = new Emitter<SubmissionStatus>();
  private readonly timer: SubmissionTimer;

  constructor(
    private readonly channel: SubmissionChannel,
    private readonly opts: SubmissionsOptions = {},
  ) {
    this.timer = opts.timer ?? globalTimer;
  }

  /** Every change of state of every submission. The function returned removes the listener. */
  onChange(fn: Listener<SubmissionStatus>): () => void {
    return this.emitter.on(fn);
  }

  /**
   * Submits a prompt to `agentId` with its client message id (made when absent; read it from the
   * reply). Resolves with the daemon's reply (a `rejected` outcome included); rejects with the
   * daemon's error (`not_found`, `invalid_argument`, ...), the last retryable one after
   * maxAttempts, `resource_exhausted` past maxUnanswered (nothing tracked), or `aborted` at close().
   * The same id again while the first is unanswered joins it: one send, both callers answered.
   */
  submit(agentId: string, req: SendRequest | string): Promise<SubmissionReply> {
    const r: SendRequest = typeof req === 'string' ? { text: req } : req;
    const clientMessageId = r.clientMessageId ?? newId('msg');
    const existing = this.entries.get(clientMessageId);
    if (existing) return new Promise((resolve, reject) => existing.waiters.push({ resolve, reject }));
    if (this.entries.size >= (this.opts.maxUnanswered ?? 1000)) {
      return Promise.reject(new AgentstreamError('resource_exhausted', `${this.entries.size} prompts are still unanswered`));
    }
    const body: Record<string, unknown> = { type: 'send', agent: agentId, clientMessageId };
    if (r.text !== undefined) body.text = r.text;
    if (r.whileRunning !== undefined) body.whileRunning = r.whileRunning;
    if (r.attachments !== undefined) body.attachments = r.attachments;
    return new Promise((resolve, reject) => {
      const backoff = new Backoff({ minDelayMs: this.opts.minDelayMs ?? 250, maxDelayMs: this.opts.maxDelayMs ?? 5000 });
      const status: SubmissionStatus = { clientMessageId, agentId, state: 'waiting', attempts: 0 };
      this.entries.set(clientMessageId, { status, body, backoff, retry: null, waiters: [{ resolve, reject }] });
      this.emitter.emit({ ...status });
      this.flush();
    });
  }

  /** The channel is connected: every waiting submission goes. */
  connectionUp(): void {
    this.flush();
  }

  /** The channel dropped: every submission in flight waits for the next connect (its request rejects `disconnected`). */
  connectionLost(): void {
    for (const e of this.entries.values()) if (e.status.state === 'sending') this.setState(e, 'waiting');
  }

  /** Fails every submission with `aborted` (their promises reject); nothing is sent after. */
  close(): void {
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const e of all) this.finish(e, undefined, new AgentstreamError('aborted', 'the submissions were closed'));
  }

  /** Submissions not yet answered. */
  get size(): number {
    return this.entries.size;
  }

  private flush(): void {
    if (!this.channel.connected) return;
    for (const e of this.entries.values()) if (e.status.state === 'waiting') this.sendOnce(e);
  }

  private sendOnce(e: Entry): void {
    if (e.retry !== null) this.timer.clearTimeout(e.retry);
    e.retry = null;
    const attempt = ++e.status.attempts;
    this.setState(e, 'sending');
    this.channel
      .request(e.body)
      .then((reply: any) => {
        if (this.entries.get(e.status.clientMessageId) !== e) return;
        const { type: _t, id: _i, ...rest } = reply;
        this.entries.delete(e.status.clientMessageId);
        this.finish(e, { ...(rest as SendReply), clientMessageId: e.status.clientMessageId });
      })
      .catch((err: unknown) => {
        // An attempt superseded by a later one (its failure arriving after the reconnect) is moot.
        if (attempt === e.status.attempts) this.onSendError(e, err);
      });
  }

  private onSendError(e: Entry, err: unknown): void {
    if (this.entries.get(e.status.clientMessageId) !== e) return;
    const error = err instanceof AgentstreamError ? err : new AgentstreamError('error', String(err));
    if (RETRY_CODES.has(error.code) && e.status.attempts < (this.opts.maxAttempts ?? 20)) {
      if (e.status.state === 'sending') this.setState(e, 'waiting');
      // Lost with the connection: it goes at the next connect. Otherwise try again after a delay.
      if (error.code !== 'disconnected') e.retry = this.timer.setTimeout(() => this.flush(), e.backoff.next());
      return;
    }
    this.entries.delete(e.status.clientMessageId);
    this.finish(e, undefined, error);
  }

  private finish(e: Entry, reply?: SubmissionReply, error?: AgentstreamError): void {
    if (e.retry !== null) this.timer.clearTimeout(e.retry);
    e.retry = null;
    e.status.reply = reply;
    e.status.error = error;
    this.setState(e, reply ? 'acknowledged' : 'failed');
    for (const w of e.waiters) {
      if (reply) w.resolve(reply);
      else w.reject(error!);
    }
  }

  private setState(e: Entry, state: SubmissionState): void {
    e.status.state = state;
    this.emitter.emit({ ...e.status });
  }
}
