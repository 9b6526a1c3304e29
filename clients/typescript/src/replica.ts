// The WebSocket replica (the app protocol at /ws, docs/protocol.md and
// docs/ws-protocol.schema.json), on one `Connection` (connection.ts: reconnection with backoff,
// requests matched to replies by id; its handshake here is hello and agents.list): subscriptions
// to agents from a cursor (replay, then live) that are resumed from the last cursor seen after
// every reconnect and de-duplicated by cursor, agent snapshots kept current from the live
// notices, and submissions (prompts) with client message ids (submissions.ts): a
// prompt sent while disconnected goes once the connection is back, and one whose answer was lost
// goes again with the same id (the daemon records it once and answers `duplicate`).
import { AgentstreamError, RETRY_CODES } from './errors.js';
import { Submissions, type SubmissionReply, type SubmissionStatus } from './submissions.js';
import { newId } from './backoff.js';
import { Connection, type WebSocketConstructor } from './connection.js';
import { Emitter, type Listener } from './emitter.js';
import { loadNodeWebSocket } from './node_websocket.js';
import { compareCursors, formatCursor, parseCursor, type Cursor } from './cursor.js';
import type {
  AgentConfig,
  AgentSnapshot,
  EventEnvelope,
  PermissionReply,
  SearchResult,
  SendRequest,
  TimelinePage,
  TimelineQuery,
} from './types.js';

export interface ReplicaOptions {
  /** The daemon's base URL (`http://127.0.0.1:7600`); the socket is `ws://.../ws`. */
  baseUrl?: string;
  /** Or the WebSocket URL itself. */
  url?: string;
  /** Sent as `?token=` (browsers cannot set headers on a WebSocket). */
  token?: string;
  /**
   * The WebSocket constructor. Default: the global one when there is one (browsers, Node 22),
   * else the `ws` package's.
   */
  WebSocket?: WebSocketConstructor;
  /** Reconnect backoff: from this (default 250 ms) doubling up to maxDelayMs (default 5000 ms). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A socket not open within this is given up and retried. Default 8000. */
  connectTimeoutMs?: number;
  /** A request not answered within this fails with `timeout`. Default 30000. */
  requestTimeoutMs?: number;
  /** Send `agents.list` at each connect and keep every agent's snapshot (else only subscribed agents'). Default true. */
  watchAgents?: boolean;
  /** Attempts of one submission before its promise rejects (a retry is safe). Default 20. */
  maxSendAttempts?: number;
  /** Submissions not yet answered; a further send rejects with `resource_exhausted`. Default 1000. */
  maxUnansweredSends?: number;
}

/** One frame of events, after de-duplication (only events not delivered before). */
export interface EventsBatch {
  agent: string;
  epoch: number;
  events: EventEnvelope[];
}

/** A rewind replaced the epoch: `page` is a tail page of the new one; events continue after `page.endCursor`. */
export interface ResetNotice {
  agent: string;
  epoch: number;
  page: TimelinePage;
}

export interface SubscribeOptions {
  /**
   * Deliver every event after this cursor ("E:S"; "E:0" is the epoch's start), then live.
   * Without one, delivery starts at the current tail.
   */
  cursor?: string;
  /** Keep every delivered event in `replica.events` (and drop them at a reset). Default false. */
  keepEvents?: boolean;
}

export type ReplicaState = 'idle' | 'subscribing' | 'live' | 'closed';

/** One agent followed over the WebSocket: its events from a cursor, and its snapshot. */
export class AgentReplica {
  state: ReplicaState = 'idle';
  /** Every event delivered (with `keepEvents`). */
  readonly events: EventEnvelope[] = [];
  private last: Cursor | null;
  private readonly eventsEmitter = new Emitter<EventsBatch>();
  private readonly resetEmitter = new Emitter<ResetNotice>();
  private readonly statusEmitter = new Emitter<AgentSnapshot>();
  private readonly changeEmitter = new Emitter<void>();
  /** Frames dropped as already delivered (resumed replays overlapping what was had). */
  duplicatesDropped = 0;

  constructor(
    private readonly client: ReplicaClient,
    readonly agentId: string,
    private readonly opts: SubscribeOptions,
  ) {
    this.last = opts.cursor ? parseCursor(opts.cursor) : null;
  }

  /** The position of the last event delivered ("E:S"): a resume starts after it. Null before the subscription answered. */
  get cursor(): string | null {
    return this.last ? formatCursor(this.last) : null;
  }

  /** The agent's last snapshot, if the replica has one. */
  get agent(): AgentSnapshot | undefined {
    return this.client.agents.get(this.agentId);
  }

  onEvents(fn: Listener<EventsBatch>): () => void {
    return this.eventsEmitter.on(fn);
  }
  onReset(fn: Listener<ResetNotice>): () => void {
    return this.resetEmitter.on(fn);
  }
  onStatus(fn: Listener<AgentSnapshot>): () => void {
    return this.statusEmitter.on(fn);
  }

  /** Resolves once `pred` holds (checked now and at each event, reset or status), else rejects after `timeoutMs`. */
  waitFor(pred: (r: AgentReplica) => boolean, timeoutMs = 30000, what = 'a condition'): Promise<void> {
    return waitUntil(this.changeEmitter, () => pred(this), timeoutMs, `${this.agentId}: ${what}`);
  }

  /** Stops following (the daemon keeps delivering for its 30 s grace; frames are ignored). */
  async unsubscribe(): Promise<void> {
    this.state = 'closed';
    this.client.forget(this);
    if (this.client.connected) await this.client.request({ type: 'unsubscribe', agent: this.agentId }).catch(() => undefined);
  }

  // ---- called by the client ----

  /** @internal */
  subscribeMessage(): Record<string, unknown> {
    return this.last ? { type: 'subscribe', agent: this.agentId, cursor: formatCursor(this.last) } : { type: 'subscribe', agent: this.agentId };
  }

  /** @internal */
  subscribed(reply: { cursor?: string }): void {
    if (this.state === 'closed') return;
    if (!this.last && reply.cursor) this.last = parseCursor(reply.cursor);
    this.state = 'live';
    this.changeEmitter.emit();
  }

  /** @internal Returns false when the frame does not continue what was delivered (a gap: resubscribe). */
  applyEvents(epoch: number, events: EventEnvelope[]): boolean {
    if (this.state === 'closed') return true;
    const fresh: EventEnvelope[] = [];
    let ok = true;
    for (const e of events) {
      const c = { epoch: e.epoch ?? epoch, seq: e.seq };
      if (this.last) {
        const order = compareCursors(c, this.last);
        if (order <= 0) {
          this.duplicatesDropped++;
          continue;
        }
        if (c.epoch === this.last.epoch && c.seq !== this.last.seq + 1) {
          ok = false;
          break;
        }
      }
      this.last = c;
      fresh.push(e);
    }
    if (fresh.length) {
      if (this.opts.keepEvents) this.events.push(...fresh);
      this.eventsEmitter.emit({ agent: this.agentId, epoch, events: fresh });
      this.changeEmitter.emit();
    }
    return ok;
  }

  /** @internal */
  applyReset(epoch: number, page: TimelinePage): void {
    if (this.state === 'closed') return;
    this.last = parseCursor(page.endCursor);
    if (this.opts.keepEvents) this.events.length = 0;
    this.resetEmitter.emit({ agent: this.agentId, epoch, page });
    this.changeEmitter.emit();
  }

  /** @internal */
  applyStatus(a: AgentSnapshot): void {
    this.statusEmitter.emit(a);
    this.changeEmitter.emit();
  }

  /** Why the replica stopped, when the daemon refused its subscription (`not_found`, ...). */
  error: AgentstreamError | null = null;

  /** @internal */
  failed(e: AgentstreamError): void {
    this.error = e;
    this.state = 'closed';
    this.changeEmitter.emit();
  }

  /** @internal */
  disconnected(): void {
    if (this.state !== 'closed') this.state = 'idle';
    this.changeEmitter.emit();
  }
}

export class ReplicaClient {
  /** The daemon's `server_info` of the current connection. */
  serverInfo: Record<string, any> | null = null;
  /** Every agent heard of (with `watchAgents`), else the subscribed ones; closed agents are removed. */
  readonly agents = new Map<string, AgentSnapshot>();

  private readonly opts: ReplicaOptions;
  private readonly conn: Connection;
  private replicas = new Map<string, AgentReplica>();
  private readonly submissions: Submissions;
  private readonly connectionEmitter = new Emitter<boolean>();
  private readonly agentEmitter = new Emitter<{ type: string; agent: AgentSnapshot; message?: string }>();
  private readonly changeEmitter = new Emitter<void>();

  constructor(opts: ReplicaOptions) {
    this.opts = opts;
    let url: string;
    if (opts.url) url = opts.url;
    else if (opts.baseUrl) {
      const u = new URL(opts.baseUrl.replace(/\/+$/, '') + '/ws');
      u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
      if (opts.token) u.searchParams.set('token', opts.token);
      url = u.toString();
    } else throw new Error('ReplicaClient: baseUrl or url is required');
    this.conn = new Connection({
      url,
      WebSocket: opts.WebSocket,
      loadWebSocket: loadNodeWebSocket,
      minDelayMs: opts.minDelayMs,
      maxDelayMs: opts.maxDelayMs,
      connectTimeoutMs: opts.connectTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs,
      handshake: () => this.handshake(),
    });
    this.submissions = new Submissions(this.conn, { maxAttempts: opts.maxSendAttempts, maxUnanswered: opts.maxUnansweredSends });
    this.conn.onMessage((msg) => this.onMessage(msg));
    this.conn.onConnection((c) => (c ? this.onConnected() : this.onLost(true)));
    this.conn.onConnectFailed(() => this.onLost(false));
  }

  /** Connected, and the handshake (hello, agents.list) answered. */
  get connected(): boolean {
    return this.conn.connected;
  }

  /** Sockets made so far (the first connect and every reconnect). */
  get connects(): number {
    return this.conn.connects;
  }

  /** Why the client stopped for good (no WebSocket implementation), if it did. */
  get fatal(): AgentstreamError | null {
    return this.conn.fatal;
  }

  /** Connects (and keeps reconnecting until close()). */
  start(): this {
    this.conn.start();
    return this;
  }

  /** Closes the socket for good; requests in flight reject with `disconnected`, submissions with `aborted`. */
  close(): void {
    this.conn.close();
    this.lost();
    this.submissions.close();
    for (const r of this.replicas.values()) r.state = 'closed';
  }

  /** Drops the socket as a network failure would (the client then reconnects). */
  drop(): void {
    this.conn.drop();
  }

  onConnection(fn: Listener<boolean>): () => void {
    return this.connectionEmitter.on(fn);
  }

  /** `agent.created`, `agent.status`, `agent.error`, `agent.queued`, `agent.disposed` notices. */
  onAgent(fn: Listener<{ type: string; agent: AgentSnapshot; message?: string }>): () => void {
    return this.agentEmitter.on(fn);
  }

  /** Resolves once connected (and resubscribed), else rejects after `timeoutMs`. */
  async waitConnected(timeoutMs = 30000): Promise<void> {
    await waitUntil(this.changeEmitter, () => this.connected || this.fatal !== null, timeoutMs, 'the connection');
    if (this.fatal) throw this.fatal;
  }

  /** Resolves with the agent's snapshot once `pred` holds for it, else rejects after `timeoutMs`. */
  async waitForAgent(agentId: string, pred: (a: AgentSnapshot) => boolean, timeoutMs = 30000): Promise<AgentSnapshot> {
    await waitUntil(
      this.changeEmitter,
      () => {
        const a = this.agents.get(agentId);
        return !!a && pred(a);
      },
      timeoutMs,
      `agent ${agentId}`,
    );
    return this.agents.get(agentId)!;
  }

  // ---- subscriptions ----

  /** Follows an agent: every event after `cursor` (or from the tail), then live, across reconnects. */
  subscribe(agentId: string, opts: SubscribeOptions = {}): AgentReplica {
    const old = this.replicas.get(agentId);
    if (old) old.state = 'closed';
    const r = new AgentReplica(this, agentId, opts);
    this.replicas.set(agentId, r);
    if (this.connected) void this.resubscribe(r);
    return r;
  }

  /** @internal */
  forget(r: AgentReplica): void {
    if (this.replicas.get(r.agentId) === r) this.replicas.delete(r.agentId);
  }

  private async resubscribe(r: AgentReplica): Promise<void> {
    if (r.state === 'closed') return;
    r.state = 'subscribing';
    try {
      const reply = await this.request(r.subscribeMessage());
      if (this.replicas.get(r.agentId) === r) r.subscribed(reply);
    } catch (e) {
      const code = e instanceof AgentstreamError ? e.code : '';
      if (code === 'disconnected') return; // resubscribed at the next connect
      if (code === 'timeout') {
        // A socket that does not answer: start over on a new one.
        if (this.connected) this.drop();
        return;
      }
      if (RETRY_CODES.has(code)) {
        setTimeout(() => {
          if (this.connected && this.replicas.get(r.agentId) === r && r.state === 'subscribing') void this.resubscribe(r);
        }, 500);
        return;
      }
      // The daemon refused it (an unknown agent, a malformed cursor): the replica stops.
      r.failed(e instanceof AgentstreamError ? e : new AgentstreamError('error', String(e)));
      this.forget(r);
    }
  }

  // ---- submissions ----

  /**
   * Sends a prompt with a client message id (made when absent). Resolves with the daemon's
   * reply; while disconnected it waits and goes at the next connect; a lost answer is sent
   * again with the same id (the daemon answers `duplicate` with the original turn: the prompt
   * was recorded once). Rejects with the daemon's error (`not_found`, `invalid_argument`, ...).
   */
  send(agentId: string, req: SendRequest | string): Promise<SubmissionReply> {
    return this.submissions.submit(agentId, req);
  }

  /** Every change of state of a submission (waiting, sending, acknowledged, failed): submissions.ts. */
  onSubmission(fn: Listener<SubmissionStatus>): () => void {
    return this.submissions.onChange(fn);
  }

  /** Submissions not yet answered by the daemon. */
  get unsettledSubmissions(): number {
    return this.submissions.size;
  }

  // ---- requests ----

  /** One request of the app protocol; resolves with the reply, rejects with the daemon's error or `disconnected`/`timeout`. */
  request(msg: Record<string, unknown>, timeoutMs?: number): Promise<any> {
    return this.conn.request(msg, timeoutMs);
  }

  async listAgents(includeClosed = false): Promise<AgentSnapshot[]> {
    const r = await this.request({ type: 'agents.list', includeClosed });
    for (const a of r.agents as AgentSnapshot[]) this.setAgent(a, 'agents');
    return r.agents;
  }

  /** `agents.create`, with a clientRequestId (made when absent) so a retry makes one agent. */
  async createAgent(config: AgentConfig): Promise<AgentSnapshot> {
    const agent = { ...config, clientRequestId: config.clientRequestId ?? newId('create') };
    const r = await this.request({ type: 'agents.create', agent });
    this.setAgent(r.agent, 'agent');
    return r.agent;
  }

  async closeAgent(agentId: string): Promise<void> {
    await this.request({ type: 'agents.close', agent: agentId });
  }

  async interrupt(agentId: string): Promise<void> {
    await this.request({ type: 'interrupt', agent: agentId });
  }

  async replyPermission(agentId: string, requestId: string, reply: PermissionReply): Promise<void> {
    const msg: Record<string, unknown> = { type: 'permission.reply', agent: agentId, requestId, decision: reply.decision };
    if (reply.optionId != null) msg.optionId = reply.optionId;
    if (reply.message != null) msg.message = reply.message;
    await this.request(msg);
  }

  async setOption(agentId: string, option: 'mode' | 'model' | 'thinking', value: string): Promise<void> {
    await this.request({ type: `${option}.set`, agent: agentId, [option]: value });
  }

  async rename(agentId: string, title: string): Promise<AgentSnapshot> {
    return (await this.request({ type: 'agents.rename', agent: agentId, title })).agent;
  }

  async timeline(agentId: string, q: TimelineQuery = {}): Promise<TimelinePage> {
    const msg: Record<string, unknown> = { type: 'timeline.fetch', agent: agentId };
    for (const k of ['direction', 'cursor', 'limit', 'maxBytes'] as const) if (q[k] !== undefined) msg[k] = q[k];
    return (await this.request(msg)).page;
  }

  async fork(agentId: string, cursor: string): Promise<AgentSnapshot> {
    return (await this.request({ type: 'fork', agent: agentId, cursor })).agent;
  }

  async rewind(agentId: string, cursor: string): Promise<AgentSnapshot> {
    return (await this.request({ type: 'rewind', agent: agentId, cursor })).agent;
  }

  async search(q: string, opts: { agent?: string; limit?: number } = {}): Promise<SearchResult> {
    const r = await this.request({ type: 'search', q, ...opts });
    return { hits: r.hits, truncated: r.truncated };
  }

  // ---- the connection ----

  // Run by the connection on each new socket: hello, then (with watchAgents) the agent list.
  // A failure closes that socket and the connection tries again.
  private async handshake(): Promise<void> {
    this.serverInfo = await this.request({ type: 'hello' });
    if (!(this.opts.watchAgents ?? true)) return;
    const list = await this.request({ type: 'agents.list', includeClosed: false });
    const listed = new Set((list.agents as AgentSnapshot[]).map((a) => a.id));
    for (const id of [...this.agents.keys()]) if (!listed.has(id) && !this.replicas.has(id)) this.agents.delete(id);
    for (const a of list.agents as AgentSnapshot[]) this.setAgent(a, 'agents');
  }

  // Connected: every subscription again from its cursor, then the waiting submissions; listeners
  // hear of the connection once the subscriptions are answered.
  private onConnected(): void {
    const subs = [...this.replicas.values()].map((r) => this.resubscribe(r));
    this.submissions.connectionUp();
    void Promise.all(subs).then(() => {
      if (!this.connected) return;
      this.connectionEmitter.emit(true);
      this.changeEmitter.emit();
    });
  }

  // A connected socket lost (`was`), or an attempt that failed; a fatal failure closes the client.
  private onLost(was: boolean): void {
    if (this.conn.fatal) this.close();
    else this.lost();
    if (was) this.connectionEmitter.emit(false);
    this.changeEmitter.emit();
  }

  // Submissions in flight go again at the next connect; replicas wait for it.
  private lost(): void {
    this.submissions.connectionLost();
    for (const r of this.replicas.values()) r.disconnected();
  }

  // A pushed message (replies to requests are the connection's).
  private onMessage(msg: any): void {
    switch (msg.type) {
      case 'events': {
        const r = this.replicas.get(msg.agent);
        if (r && !r.applyEvents(msg.epoch, msg.events ?? [])) void this.resubscribe(r); // a gap: replay from the cursor
        return;
      }
      case 'reset':
        this.replicas.get(msg.agent)?.applyReset(msg.epoch, msg.page);
        return;
      case 'agent.created':
      case 'agent.status':
      case 'agent.error':
      case 'agent.queued':
      case 'agent.disposed':
        this.setAgent(msg.agent, msg.type, msg.message);
        return;
      default:
        return;
    }
  }

  private setAgent(a: AgentSnapshot, type: string, message?: string): void {
    if (a.closed && !this.replicas.has(a.id)) this.agents.delete(a.id);
    else this.agents.set(a.id, a);
    this.replicas.get(a.id)?.applyStatus(a);
    this.agentEmitter.emit({ type, agent: a, message });
    this.changeEmitter.emit();
  }
}

function waitUntil(emitter: Emitter<void>, pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  if (pred()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const off = emitter.on(() => {
      if (!pred()) return;
      clearTimeout(timer);
      off();
      resolve();
    });
    const timer = setTimeout(() => {
      off();
      reject(new AgentstreamError('timeout', `waited ${timeoutMs} ms for ${what}`));
    }, timeoutMs);
  });
}
