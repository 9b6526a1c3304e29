// The client's sync and submission core (docs/web.md, "Sync" and "Submissions"), independent
// of the UI:
// * first open without a cursor: the latest tail page; resume with a cursor: `after` pages
//   until hasNewer is false (the package's catchUpPages, the paging AgentstreamHttp.timelinePages
//   does over HTTP), a watchdog guarding each page's progress (not the whole catch-up); then a
//   subscription from the cursor reached (the daemon replays and continues live).
// * a stale epoch (rewind) resets the replica explicitly.
// * subscriptions follow the union of visible panes; a removal keeps the subscription for a
//   30 s grace; disconnecting clears every grace.
// * presence heartbeats (notification routing only).
// * every send goes through dispatch() with a client message id; the package's Submissions sends
//   it and retries it with that id, the page's SubmissionRegistry keeps what the rows show.
import { Submissions, catchUpPages, formatCursor, newId, parseCursor } from '@agentstream/client';
import { AgentTimeline, type LocalRow } from './timeline';
import { SubmissionRegistry } from './submissions';
import { isDisconnected, type Transport } from './transport';
import type {
  AgentSnapshot,
  Attachment,
  Capabilities,
  EventEnvelope,
  SearchHit,
  SendRequest,
  WhileRunning,
} from '@agentstream/client';
import type { AgentOption, Item, Page } from './types';

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): any;
  clearTimeout(handle: any): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h),
};

export interface SyncOptions {
  pageLimit: number; // projected items per page
  watchdogMs: number; // a catch-up page must arrive within this, else the sync restarts
  graceMs: number; // keep a no-longer-visible agent subscribed this long
  heartbeatMs: number;
  retryMs: number; // after a failed catch-up
  newId: () => string;
  deviceType: () => string; // the heartbeat's deviceType ("desktop" or "phone")
}

export const DEFAULT_SYNC_OPTIONS: SyncOptions = {
  pageLimit: 50,
  watchdogMs: 15000,
  graceMs: 30000,
  heartbeatMs: 15000,
  retryMs: 1000,
  newId: () => newId('msg'),
  deviceType: () => 'desktop',
};

type AgentSyncState = 'idle' | 'syncing' | 'live';

export interface StatusTransition {
  agent: AgentSnapshot;
  from: string | undefined;
  to: string;
}

// Restarts whenever kicked; fires when not kicked within `ms`.
export class Watchdog {
  private handle: any = null;
  constructor(
    private readonly clock: Clock,
    private readonly ms: number,
    private readonly onTimeout: () => void,
  ) {}
  kick(): void {
    this.stop();
    this.handle = this.clock.setTimeout(() => {
      this.handle = null;
      this.onTimeout();
    }, this.ms);
  }
  stop(): void {
    if (this.handle !== null) this.clock.clearTimeout(this.handle);
    this.handle = null;
  }
}

export class SyncEngine {
  readonly timelines = new Map<string, AgentTimeline>();
  readonly agents = new Map<string, AgentSnapshot>();
  readonly submissions = new SubmissionRegistry();
  readonly opts: SyncOptions;
  serverInfo: any = null;
  connected = false;
  // When the daemon last confirmed the agent list (its answer to agents.list, or the moment the
  // connection that kept it current dropped); null before the first answer.
  confirmedMs: number | null = null;

  private state = new Map<string, AgentSyncState>();
  private syncGeneration = new Map<string, number>();
  private subscribed = new Set<string>();
  private visibleByPane = new Map<string, string>();
  private tabVisible = true;
  private focusedAgent: string | null = null;
  private grace = new Map<string, any>();
  private heartbeatHandle: any = null;
  private listeners = new Set<() => void>();
  private transitionFns: ((t: StatusTransition) => void)[] = [];
  private notifyScheduled = false;
  // The last capabilities seen per agent (a snapshot's, or a live `capabilities.changed`
  // event's), standing in while the snapshot has none (its runtime not started again after a
  // daemon restart).
  private lastCapabilities = new Map<string, Capabilities>();
  // Sends each submission, again with the same id after a lost answer; reports to `submissions`.
  private readonly sender: Submissions;

  constructor(
    private readonly transport: Transport,
    opts: Partial<SyncOptions> = {},
    private readonly clock: Clock = realClock,
  ) {
    this.opts = { ...DEFAULT_SYNC_OPTIONS, ...opts };
    this.sender = new Submissions(transport, { timer: clock });
    this.sender.onChange((st) => {
      this.submissions.onStatus(st);
      this.changed();
    });
    transport.onMessage((m) => this.onMessage(m));
    transport.onConnection((c) => (c ? void this.onConnected() : this.onDisconnected()));
    if (transport.connected) void this.onConnected();
  }

  // ---- observation ----

  // Counts the changes, so that a subscriber can tell whether it missed one.
  version = 0;

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  onStatusTransition(fn: (t: StatusTransition) => void): void {
    this.transitionFns.push(fn);
  }

  private changed(): void {
    this.version++;
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    queueMicrotask(() => {
      this.notifyScheduled = false;
      for (const fn of this.listeners) fn();
    });
  }

  timeline(agentId: string): AgentTimeline {
    let t = this.timelines.get(agentId);
    if (!t) {
      t = new AgentTimeline(agentId);
      this.timelines.set(agentId, t);
    }
    return t;
  }

  syncState(agentId: string): AgentSyncState {
    return this.state.get(agentId) ?? 'idle';
  }

  isSubscribed(agentId: string): boolean {
    return this.subscribed.has(agentId);
  }

  // ---- connection ----

  private async onConnected(): Promise<void> {
    this.connected = true;
    try {
      this.serverInfo = await this.transport.request({ type: 'hello' });
      const list = await this.transport.request({ type: 'agents.list', includeClosed: false });
      // An agent closed while the page was away is no longer listed.
      const listed = new Set((list.agents as AgentSnapshot[]).map((a) => a.id));
      for (const id of [...this.agents.keys()]) if (!listed.has(id)) this.agents.delete(id);
      for (const a of list.agents as AgentSnapshot[]) this.setAgent(a);
      this.confirmedMs = this.clock.now();
    } catch {
      // A lost socket reconnects and calls this again; so must an answer that failed on a live
      // one (a timeout, an error), or the page would stay connected without its agents.
      if (this.transport.connected) this.transport.drop();
      return;
    }
    for (const id of this.wanted()) void this.syncAgent(id);
    this.sender.connectionUp();
    this.startHeartbeat();
    this.changed();
  }

  private onDisconnected(): void {
    if (this.confirmedMs !== null) this.confirmedMs = this.clock.now();
    this.connected = false;
    this.subscribed.clear();
    for (const h of this.grace.values()) this.clock.clearTimeout(h);
    this.grace.clear();
    for (const id of this.state.keys()) this.state.set(id, 'idle');
    this.sender.connectionLost();
    if (this.heartbeatHandle !== null) this.clock.clearTimeout(this.heartbeatHandle);
    this.heartbeatHandle = null;
    this.changed();
  }

  // ---- visibility and subscriptions ----

  setPaneAgent(paneId: string, agentId: string | null): void {
    if (agentId) this.visibleByPane.set(paneId, agentId);
    else this.visibleByPane.delete(paneId);
    this.reconcileSubscriptions();
  }

  setTabVisible(visible: boolean): void {
    this.tabVisible = visible;
    this.reconcileSubscriptions();
    this.sendHeartbeat();
  }

  setFocusedAgent(agentId: string | null): void {
    this.focusedAgent = agentId;
    this.sendHeartbeat();
  }

  // The union of agents shown in visible panes (none while the tab is hidden).
  wanted(): Set<string> {
    return this.tabVisible ? new Set(this.visibleByPane.values()) : new Set();
  }

  private reconcileSubscriptions(): void {
    const wanted = this.wanted();
    for (const id of wanted) {
      const g = this.grace.get(id);
      if (g !== undefined) {
        this.clock.clearTimeout(g);
        this.grace.delete(id);
      }
      if (!this.subscribed.has(id) && this.syncState(id) === 'idle' && this.connected) void this.syncAgent(id);
    }
    for (const id of this.subscribed) {
      if (wanted.has(id) || this.grace.has(id)) continue;
      this.grace.set(
        id,
        this.clock.setTimeout(() => {
          this.grace.delete(id);
          if (this.wanted().has(id) || !this.subscribed.has(id)) return;
          this.subscribed.delete(id);
          this.state.set(id, 'idle');
          this.syncGeneration.set(id, (this.syncGeneration.get(id) ?? 0) + 1);
          this.transport.request({ type: 'unsubscribe', agent: id }).catch(() => {});
          this.changed();
        }, this.opts.graceMs),
      );
    }
  }

  // ---- history: tail, catch-up, older pages ----

  // Brings one agent's replica to the daemon's tail and subscribes from there.
  async syncAgent(agentId: string): Promise<void> {
    const gen = (this.syncGeneration.get(agentId) ?? 0) + 1;
    this.syncGeneration.set(agentId, gen);
    this.state.set(agentId, 'syncing');
    this.changed();
    const current = () => this.syncGeneration.get(agentId) === gen && this.connected;
    const tl = this.timeline(agentId);
    let timedOut = false;
    const watchdog = new Watchdog(this.clock, this.opts.watchdogMs, () => {
      timedOut = true;
      this.syncGeneration.set(agentId, gen + 1); // abandon this run
      this.state.set(agentId, 'idle');
      this.clock.setTimeout(() => {
        if (this.wanted().has(agentId) && this.syncState(agentId) === 'idle') void this.syncAgent(agentId);
      }, this.opts.retryMs);
    });
    try {
      watchdog.kick();
      const direction = tl.hasCursor ? 'after' : 'tail';
      const fetch = (d: 'tail' | 'after', c?: string) => this.fetchPage(agentId, d, c);
      for await (const page of catchUpPages(fetch, tl.hasCursor ? tl.cursor! : undefined)) {
        if (!current()) return;
        this.applyPage(tl, page, direction);
        watchdog.kick(); // progress: the next page gets a fresh allowance
      }
      const reply = await this.transport.request({ type: 'subscribe', agent: agentId, cursor: tl.cursor });
      if (!current()) return;
      void reply;
      this.subscribed.add(agentId);
      this.state.set(agentId, 'live');
      this.reconcileSubscriptions(); // starts the grace if the pane went away meanwhile
    } catch (e) {
      if (!timedOut && this.syncGeneration.get(agentId) === gen) {
        this.state.set(agentId, 'idle');
        if (!isDisconnected(e))
          this.clock.setTimeout(() => {
            if (this.wanted().has(agentId) && this.syncState(agentId) === 'idle') void this.syncAgent(agentId);
          }, this.opts.retryMs);
      }
    } finally {
      watchdog.stop();
      this.changed();
    }
  }

  private async fetchPage(agentId: string, direction: string, cursor?: string): Promise<Page> {
    const msg: Record<string, unknown> = { type: 'timeline.fetch', agent: agentId, direction, limit: this.opts.pageLimit };
    if (cursor) msg.cursor = cursor;
    const reply = await this.transport.request(msg);
    return reply.page as Page;
  }

  private applyPage(tl: AgentTimeline, page: Page, direction: 'tail' | 'before' | 'after'): void {
    let result;
    if (tl.hasCursor && (page.reset || page.epoch !== tl.epoch)) result = tl.resetTo(page);
    else result = tl.applyPage(page, direction);
    for (const cmid of result.acks) this.submissions.onProviderAck(cmid);
    this.changed();
  }

  // Older history, user-driven (scrolling up). Resolves false when there is nothing older.
  async loadOlder(agentId: string): Promise<boolean> {
    const tl = this.timeline(agentId);
    if (!tl.hasOlder || !tl.olderCursor) return false;
    const page = await this.fetchPage(agentId, 'before', tl.olderCursor);
    if (page.epoch !== tl.epoch) return false;
    this.applyPage(tl, page, 'before');
    return true;
  }

  // ---- live messages ----

  private onMessage(msg: any): void {
    switch (msg.type) {
      case 'events':
        return this.onEvents(msg.agent, msg.epoch, msg.events as EventEnvelope[]);
      case 'reset': {
        const tl = this.timeline(msg.agent);
        const r = tl.resetTo(msg.page as Page);
        for (const cmid of r.acks) this.submissions.onProviderAck(cmid);
        this.changed();
        return;
      }
      case 'agent.created':
      case 'agent.status':
      case 'agent.error':
      case 'agent.queued':
        this.setAgent(msg.agent);
        return;
      case 'agent.disposed':
        this.setAgent(msg.agent);
        return;
      default:
        return;
    }
  }

  private onEvents(agentId: string, epoch: number, events: EventEnvelope[]): void {
    if (this.syncState(agentId) !== 'live') return; // the subscription replays from the cursor
    for (const e of events) if (e.kind === 'capabilities.changed') this.lastCapabilities.set(agentId, e.payload as Capabilities);
    const tl = this.timeline(agentId);
    const r = tl.applyEvents(epoch, events);
    for (const cmid of r.acks) this.submissions.onProviderAck(cmid);
    if (r.gap || r.staleEpoch) {
      // Not expected from the daemon (it replays without gaps and sends `reset`), but a
      // replica must not stay behind: catch up from the cursor.
      this.subscribed.delete(agentId);
      void this.syncAgent(agentId);
    }
    if (r.refetchAfter && !r.gap && !r.staleEpoch) {
      // An item that began before the loaded window changed: its canonical state and position.
      this.fetchPage(agentId, 'after', r.refetchAfter)
        .then((page) => {
          if (this.syncState(agentId) === 'live') this.applyPage(tl, page, 'after');
        })
        .catch(() => {});
    }
    if (r.applied) this.changed();
  }

  private setAgent(a: AgentSnapshot): void {
    const prev = this.agents.get(a.id);
    if (a.closed) this.agents.delete(a.id);
    else this.agents.set(a.id, a);
    if (a.closed) this.lastCapabilities.delete(a.id);
    else if (a.capabilities) this.lastCapabilities.set(a.id, a.capabilities);
    this.submissions.onRunObserved(a.id, a.activeTurn);
    if (prev && prev.status !== a.status) for (const fn of this.transitionFns) fn({ agent: a, from: prev.status, to: a.status });
    this.changed();
  }

  // ---- heartbeat ----

  private startHeartbeat(): void {
    if (this.heartbeatHandle !== null) this.clock.clearTimeout(this.heartbeatHandle);
    this.sendHeartbeat();
    const tick = () => {
      this.sendHeartbeat();
      this.heartbeatHandle = this.clock.setTimeout(tick, this.opts.heartbeatMs);
    };
    this.heartbeatHandle = this.clock.setTimeout(tick, this.opts.heartbeatMs);
  }

  private sendHeartbeat(): void {
    if (!this.connected) return;
    this.transport.send({
      type: 'heartbeat',
      focusedAgent: this.focusedAgent ?? '',
      visible: this.tabVisible,
      deviceType: this.opts.deviceType(),
    });
  }

  // ---- submissions ----

  // The one send path: a local row with a stable identity, a lifecycle record, then the package's
  // Submissions sends it (its outcome reaches the record through onStatus).
  dispatch(agentId: string, text: string, attachments: Attachment[] = [], whileRunning: WhileRunning = 'queue'): string {
    if (!text.trim() && attachments.length === 0) throw new Error('empty prompt');
    const clientMessageId = this.opts.newId();
    const createdAt = this.clock.now();
    this.submissions.create({ clientMessageId, agentId, text, attachments, whileRunning, createdAt });
    const row: LocalRow = { localId: `local:${clientMessageId}`, clientMessageId, text, attachments, createdAt, acked: false };
    this.timeline(agentId).addLocal(row);
    const req: SendRequest = { text, clientMessageId, whileRunning };
    if (attachments.length) req.attachments = attachments;
    this.sender.submit(agentId, req).catch(() => {}); // a failure is the record's `error`
    this.changed();
    return clientMessageId;
  }

  // ---- other actions ----

  interrupt(agentId: string): Promise<unknown> {
    return this.transport.request({ type: 'interrupt', agent: agentId });
  }

  replyPermission(agentId: string, requestId: string, decision: 'allow' | 'deny', optionId?: string): Promise<unknown> {
    return this.transport.request({ type: 'permission.reply', agent: agentId, requestId, decision, optionId });
  }

  async createAgent(config: {
    provider: string;
    cwd: string;
    model?: string;
    mode?: string;
    title?: string;
    worktree?: { branch?: string; base?: string };
  }): Promise<AgentSnapshot> {
    // One request id per create: a request the transport sends again makes one agent.
    const agent = { ...config, clientRequestId: newId('web') };
    const reply = await this.transport.request({ type: 'agents.create', agent });
    this.setAgent(reply.agent);
    return reply.agent;
  }

  async closeAgent(agentId: string): Promise<void> {
    await this.transport.request({ type: 'agents.close', agent: agentId });
    const a = this.agents.get(agentId);
    if (a) this.setAgent({ ...a, closed: true });
  }

  // Fork from a projected item's position ({epoch, seqEnd}).
  async fork(agentId: string, epoch: number, seqEnd: number): Promise<AgentSnapshot> {
    const reply = await this.transport.request({ type: 'fork', agent: agentId, cursor: formatCursor({ epoch, seq: seqEnd }) });
    this.setAgent(reply.agent);
    return reply.agent;
  }

  async rewind(agentId: string, epoch: number, seqEnd: number): Promise<AgentSnapshot> {
    const reply = await this.transport.request({ type: 'rewind', agent: agentId, cursor: formatCursor({ epoch, seq: seqEnd }) });
    this.setAgent(reply.agent);
    return reply.agent;
  }

  // What the agent's runtime offers: its snapshot's capabilities, else the last ones this page
  // saw for it (the snapshot has none while the runtime is not running, e.g. after a daemon
  // restart until the agent is used again); null when the page never saw any.
  capabilities(agentId: string): Capabilities | null {
    return this.agents.get(agentId)?.capabilities ?? this.lastCapabilities.get(agentId) ?? null;
  }

  // Sets the agent's mode, model or thinking option (`mode.set`, `model.set`, `thinking.set`,
  // answered `ok`); the new value reaches the snapshot through `agent.status`. Rejects with the
  // daemon's error (a value its runtime does not offer, say).
  setOption(agentId: string, option: AgentOption, value: string): Promise<unknown> {
    return this.transport.request({ type: `${option}.set`, agent: agentId, [option]: value });
  }

  // Records a new title (`agents.rename`); the reply's snapshot replaces the agent's, and every
  // other client gets it as `agent.status`. Rejects with the daemon's error (a title over 256
  // bytes, or with control characters, is refused).
  async renameAgent(agentId: string, title: string): Promise<AgentSnapshot> {
    const reply = await this.transport.request({ type: 'agents.rename', agent: agentId, title });
    this.setAgent(reply.agent);
    return reply.agent;
  }

  // Full-text search over every session, or one (`search`, docs/protocol.md "Search").
  async search(q: string, agent?: string, limit = 20): Promise<{ hits: SearchHit[]; truncated: boolean }> {
    const reply = await this.transport.request({ type: 'search', q, limit, ...(agent ? { agent } : {}) });
    return { hits: reply.hits ?? [], truncated: !!reply.truncated };
  }

  // The items around a cursor (`half` before it and after it), straight from the daemon, for a
  // view of history outside the replica: the replica and its subscription are not touched.
  async historyAround(agentId: string, cursor: string, half = 25): Promise<{ items: Item[]; reset: boolean }> {
    const { epoch, seq } = parseCursor(cursor);
    const fetch = async (direction: string, c: string) =>
      (await this.transport.request({ type: 'timeline.fetch', agent: agentId, direction, cursor: c, limit: half })).page as Page;
    const [before, after] = await Promise.all([
      fetch('before', formatCursor({ epoch, seq: seq + 1 })),
      fetch('after', formatCursor({ epoch, seq })),
    ]);
    const byKey = new Map<string, Item>();
    for (const it of [...before.items, ...after.items]) byKey.set(it.key, it);
    return { items: [...byKey.values()].sort((a, b) => a.seqStart - b.seqStart), reset: before.reset || after.reset };
  }
}
