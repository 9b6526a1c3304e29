// A typed client of the daemon's HTTP API (docs/protocol.md, docs/openapi.yaml) over fetch.
// Every answer is the generated OpenAPI type; every error an AgentstreamError with the daemon's
// code, message and HTTP status. Idempotent calls (reads, a create with its clientRequestId, a
// send with its clientMessageId, settings) are retried on a lost connection or a 503, with the
// same ids, so a retry never doubles anything.
import { AgentstreamError, isAgentstreamError } from './errors.js';
import { Backoff, abortError, newId, sleep } from './backoff.js';
import { catchUpPages } from './catch_up.js';
import type { paths } from './generated/openapi.js';
import type {
  AgentConfig,
  AgentSnapshot,
  Catalog,
  Device,
  Diff,
  EventEnvelope,
  GitAction,
  GitActionBody,
  GitActionResult,
  ImportList,
  ImportResult,
  ImportSource,
  NotificationSettings,
  NotificationSettingsState,
  PairedDevice,
  Pairing,
  PermissionReply,
  Schedule,
  ScheduleDefinition,
  ScheduleDetail,
  SearchResult,
  SendReply,
  SendRequest,
  TimelinePage,
  TimelineQuery,
  VapidKey,
  WhoAmI,
  Worktree,
} from './types.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The JSON body of a path's 200 (else 201) answer, from the generated types. */
export type JsonAnswer<P extends keyof paths, M extends Method> = paths[P] extends Record<M, { responses: infer R }>
  ? OkBody<R>
  : never;
type OkBody<R> = R extends { 200: { content: { 'application/json': infer B } } }
  ? B
  : R extends { 201: { content: { 'application/json': infer B } } }
    ? B
    : never;

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HttpClientOptions {
  /** The daemon's base URL, e.g. `http://127.0.0.1:7600`. */
  baseUrl: string;
  /** The daemon's `--token`, or a paired device's `asd_...` token. */
  token?: string;
  /** Another fetch (a test double, a proxy agent); default the global one. */
  fetch?: FetchLike;
  /** Per-request timeout (ms) of ordinary calls. Default 30000. */
  timeoutMs?: number;
  /** Retries of an idempotent call after a lost connection or a 502/503/504/429. Default 3. */
  retries?: number;
  /** Backoff between those retries. Default 100 ms doubling up to 2 s. */
  retryMinDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** One read of `GET /v1/agents/{id}/events` (a Durable Stream read, JSON mode). */
export interface EventsRead {
  /** 200 (events, possibly none) or 204 (a long-poll that timed out). */
  status: number;
  events: EventEnvelope[];
  /** `Stream-Next-Offset`: pass it as the next read's offset. */
  nextOffset: string;
  /** `Stream-Up-To-Date: true`: the read reached the tail. */
  upToDate: boolean;
  /** `Stream-Reset: true`: the offset's epoch was replaced by a rewind; the events start the current epoch. */
  reset: boolean;
  /** `Stream-Cursor`, when sent. */
  streamCursor?: string;
}

export interface ReadEventsOptions extends CallOptions {
  /** `-1` (the default: the start of the current epoch), `now`, an offset the daemon sent, or a cursor `E:S`. */
  offset?: string;
  /** `long-poll` waits for new events (up to the daemon's long-poll timeout, then 204). */
  live?: 'long-poll';
}

function bool(v: boolean | undefined): string | undefined {
  return v === undefined ? undefined : v ? 'true' : 'false';
}

export class AgentstreamHttp {
  readonly baseUrl: string;
  private readonly token?: string;
  private readonly fetchFn: FetchLike;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryMin: number;
  private readonly retryMax: number;
  private readonly headers: Record<string, string>;

  constructor(opts: HttpClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.token = opts.token || undefined;
    const f = opts.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new Error('no fetch: pass one in the options');
    // Called unbound: a browser's fetch refuses a `this` other than the window.
    this.fetchFn = (input, init) => f(input, init);
    this.timeoutMs = opts.timeoutMs ?? 30000;
    this.retries = opts.retries ?? 3;
    this.retryMin = opts.retryMinDelayMs ?? 100;
    this.retryMax = opts.retryMaxDelayMs ?? 2000;
    this.headers = { ...(opts.headers ?? {}) };
  }

  /** The URL of the WebSocket app protocol (`/ws`), with the token as `?token=` when there is one. */
  websocketUrl(): string {
    const u = new URL(this.baseUrl + '/ws');
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    if (this.token) u.searchParams.set('token', this.token);
    return u.toString();
  }

  // ---- agents ----

  /** `GET /v1/agents` (closed ones too with `includeClosed`). */
  async listAgents(opts: CallOptions & { includeClosed?: boolean } = {}): Promise<AgentSnapshot[]> {
    const body = await this.call<JsonAnswer<'/v1/agents', 'get'>>('GET', '/v1/agents', {
      ...opts,
      query: { closed: bool(opts.includeClosed) },
      idempotent: true,
    });
    return body.agents;
  }

  /**
   * `POST /v1/agents`. A `clientRequestId` is made when the config has none, so the retries
   * of this call make one agent.
   */
  createAgent(config: AgentConfig, opts: CallOptions = {}): Promise<AgentSnapshot> {
    const body = { ...config, clientRequestId: config.clientRequestId ?? newId('create') };
    return this.call<JsonAnswer<'/v1/agents', 'post'>>('POST', '/v1/agents', { ...opts, body, idempotent: true });
  }

  /** `GET /v1/agents/{id}`. */
  getAgent(id: string, opts: CallOptions = {}): Promise<AgentSnapshot> {
    return this.call<JsonAnswer<'/v1/agents/{id}', 'get'>>('GET', `/v1/agents/${enc(id)}`, { ...opts, idempotent: true });
  }

  /** `DELETE /v1/agents/{id}`: closes the agent (its log stays readable). */
  closeAgent(
    id: string,
    opts: CallOptions & { removeWorktree?: boolean; force?: boolean } = {},
  ): Promise<AgentSnapshot> {
    return this.call<JsonAnswer<'/v1/agents/{id}', 'delete'>>('DELETE', `/v1/agents/${enc(id)}`, {
      ...opts,
      query: { removeWorktree: bool(opts.removeWorktree), force: bool(opts.force) },
      idempotent: true,
    });
  }

  /**
   * `POST /v1/agents/{id}/messages`: sends a prompt. A `clientMessageId` is made when absent;
   * the daemon records a prompt once per id, so a retry answers `duplicate` with the original
   * turn. Read the id back from `sendReply.clientMessageId`.
   */
  async send(id: string, req: SendRequest | string, opts: CallOptions = {}): Promise<SendReply & { clientMessageId: string }> {
    const r: SendRequest = typeof req === 'string' ? { text: req } : req;
    const clientMessageId = r.clientMessageId ?? newId('msg');
    const body: Record<string, unknown> = { clientMessageId };
    if (r.text !== undefined) body.text = r.text;
    if (r.whileRunning !== undefined) body.whileRunning = r.whileRunning;
    if (r.attachments !== undefined) body.attachments = r.attachments;
    const reply = await this.call<JsonAnswer<'/v1/agents/{id}/messages', 'post'>>('POST', `/v1/agents/${enc(id)}/messages`, {
      ...opts,
      body,
      idempotent: true,
    });
    return { ...reply, clientMessageId };
  }

  /** `DELETE /v1/agents/{id}/messages/{clientMessageId}`: removes a queued prompt. */
  async cancelQueued(id: string, clientMessageId: string, opts: CallOptions = {}): Promise<void> {
    await this.call('DELETE', `/v1/agents/${enc(id)}/messages/${enc(clientMessageId)}`, opts);
  }

  /** `POST /v1/agents/{id}/interrupt`. */
  async interrupt(id: string, opts: CallOptions = {}): Promise<void> {
    await this.call('POST', `/v1/agents/${enc(id)}/interrupt`, { ...opts, idempotent: true });
  }

  /** `POST /v1/agents/{id}/permissions/{requestId}`: answers a pending permission (not retried: a second answer is 404). */
  async replyPermission(id: string, requestId: string, reply: PermissionReply, opts: CallOptions = {}): Promise<void> {
    const body: Record<string, unknown> = { decision: reply.decision };
    if (reply.optionId != null) body.optionId = reply.optionId;
    if (reply.message != null) body.message = reply.message;
    await this.call('POST', `/v1/agents/${enc(id)}/permissions/${enc(requestId)}`, { ...opts, body });
  }

  /** `POST /v1/agents/{id}/mode`. */
  async setMode(id: string, mode: string, opts: CallOptions = {}): Promise<void> {
    await this.call('POST', `/v1/agents/${enc(id)}/mode`, { ...opts, body: { mode }, idempotent: true });
  }

  /** `POST /v1/agents/{id}/model`. */
  async setModel(id: string, model: string, opts: CallOptions = {}): Promise<void> {
    await this.call('POST', `/v1/agents/${enc(id)}/model`, { ...opts, body: { model }, idempotent: true });
  }

  /** `POST /v1/agents/{id}/thinking`. */
  async setThinking(id: string, thinking: string, opts: CallOptions = {}): Promise<void> {
    await this.call('POST', `/v1/agents/${enc(id)}/thinking`, { ...opts, body: { thinking }, idempotent: true });
  }

  /** `POST /v1/agents/{id}/title` (`""` clears it). */
  setTitle(id: string, title: string, opts: CallOptions = {}): Promise<AgentSnapshot> {
    return this.call<JsonAnswer<'/v1/agents/{id}/title', 'post'>>('POST', `/v1/agents/${enc(id)}/title`, {
      ...opts,
      body: { title },
      idempotent: true,
    });
  }

  // ---- history ----

  /** `GET /v1/agents/{id}/timeline`: one page of the projected timeline. */
  timeline(id: string, q: TimelineQuery = {}, opts: CallOptions = {}): Promise<TimelinePage> {
    return this.call<JsonAnswer<'/v1/agents/{id}/timeline', 'get'>>('GET', `/v1/agents/${enc(id)}/timeline`, {
      ...opts,
      query: {
        direction: q.direction,
        cursor: q.cursor,
        limit: q.limit?.toString(),
        maxBytes: q.maxBytes?.toString(),
      },
      idempotent: true,
    });
  }

  /**
   * Every page `after` a cursor up to the tail (or, without a cursor, the tail page and then
   * nothing). Stops at a page with `hasNewer: false`; a page with `reset: true` (the cursor's
   * epoch was replaced) is yielded and paging goes on from its end.
   */
  async *timelinePages(id: string, q: Omit<TimelineQuery, 'direction'> = {}, opts: CallOptions = {}): AsyncGenerator<TimelinePage> {
    yield* catchUpPages((direction, cursor) => this.timeline(id, { ...q, direction, cursor }, opts), q.cursor);
  }

  /** `POST /v1/agents/{id}/fork`: a new agent sharing the history up to `cursor`. */
  fork(id: string, cursor: string, opts: CallOptions = {}): Promise<AgentSnapshot> {
    return this.call<JsonAnswer<'/v1/agents/{id}/fork', 'post'>>('POST', `/v1/agents/${enc(id)}/fork`, {
      ...opts,
      body: { cursor },
    });
  }

  /** `POST /v1/agents/{id}/rewind`: a new epoch that continues from `cursor`. */
  rewind(id: string, cursor: string, opts: CallOptions = {}): Promise<AgentSnapshot> {
    return this.call<JsonAnswer<'/v1/agents/{id}/rewind', 'post'>>('POST', `/v1/agents/${enc(id)}/rewind`, {
      ...opts,
      body: { cursor },
    });
  }

  /** `GET /v1/search`. */
  search(q: string, opts: CallOptions & { agent?: string; limit?: number } = {}): Promise<SearchResult> {
    return this.call<JsonAnswer<'/v1/search', 'get'>>('GET', '/v1/search', {
      ...opts,
      query: { q, agent: opts.agent, limit: opts.limit?.toString() },
      idempotent: true,
    });
  }

  /** `GET /v1/catalog`: the ACP agents this daemon knows. */
  catalog(opts: CallOptions = {}): Promise<Catalog> {
    return this.call<JsonAnswer<'/v1/catalog', 'get'>>('GET', '/v1/catalog', { ...opts, idempotent: true });
  }

  /**
   * `GET /v1/imports`: the transcripts of the claude or codex CLI the daemon can import
   * (docs/import.md), each with the agent it was imported as. The owner's token only.
   */
  listImports(
    source: ImportSource,
    opts: CallOptions & { project?: string; since?: number; limit?: number } = {},
  ): Promise<ImportList> {
    return this.call<JsonAnswer<'/v1/imports', 'get'>>('GET', '/v1/imports', {
      ...opts,
      query: { source, project: opts.project, since: opts.since?.toString(), limit: opts.limit?.toString() },
      idempotent: true,
    });
  }

  /**
   * `POST /v1/imports`: imports one transcript (a path `listImports` gave) as an agent. Idempotent:
   * the same transcript is always the same agent, and only what it gained since is imported.
   */
  importTranscript(source: ImportSource, path: string, opts: CallOptions = {}): Promise<ImportResult> {
    return this.call<JsonAnswer<'/v1/imports', 'post'>>('POST', '/v1/imports', {
      ...opts,
      body: { source, path },
      idempotent: true,
    });
  }

  // ---- worktrees (docs/workspaces.md) ----

  /** `GET /v1/agents/{id}/diff`: the changes of the agent's worktree (`404 not_found` when it has none). */
  diff(id: string, opts: CallOptions & { against?: string } = {}): Promise<Diff> {
    return this.call<JsonAnswer<'/v1/agents/{id}/diff', 'get'>>('GET', `/v1/agents/${enc(id)}/diff`, {
      ...opts,
      query: { against: opts.against },
      idempotent: true,
    });
  }

  /** `GET /v1/worktrees`: every agent that has a worktree, closed ones included. */
  async worktrees(opts: CallOptions = {}): Promise<Worktree[]> {
    const body = await this.call<JsonAnswer<'/v1/worktrees', 'get'>>('GET', '/v1/worktrees', { ...opts, idempotent: true });
    return body.worktrees;
  }

  /**
   * `POST /v1/agents/{id}/git/{action}` (docs/workspaces.md, "Git actions"): commits, merges,
   * pushes, opens a GitHub pull request of (`pr`: a push, then the daemon's `gh pr create`) or
   * discards the worktree's changes, recorded as a `workspace.action` event at the answer's
   * `cursor`. A conflicting merge and a refused push answer their outcome (`conflict`,
   * `refused`) and changed nothing; a pull request answers `opened` with its `url`, or `failed`
   * with gh's `message`. A commit or discard during the agent's turn, or with nothing to do, is
   * `409 conflict`; bad input (a `pr` remote that is not GitHub's) `400`; `pr` without gh on
   * the daemon's machine `503`. Not retried: a lost answer may have acted.
   */
  gitAction(id: string, action: GitAction, body: GitActionBody = {}, opts: CallOptions = {}): Promise<GitActionResult> {
    return this.call<JsonAnswer<'/v1/agents/{id}/git/{action}', 'post'>>('POST', `/v1/agents/${enc(id)}/git/${enc(action)}`, {
      ...opts,
      body,
    });
  }

  // ---- schedules (docs/automation.md, "Schedules") ----

  /** `GET /v1/schedules`: every schedule, by id, with its state (`paused`, `lastTick`, `nextTick`, ...). */
  async listSchedules(opts: CallOptions = {}): Promise<Schedule[]> {
    const body = await this.call<JsonAnswer<'/v1/schedules', 'get'>>('GET', '/v1/schedules', { ...opts, idempotent: true });
    return body.schedules;
  }

  /**
   * `POST /v1/schedules`: a schedule that prompts an agent (`agent`), or a new agent made from
   * `template`, at each tick of `cron` (in `timezone`) or `every`. A bad definition is `400
   * invalid_argument` with the daemon's words naming the member; a taken id `409
   * already_exists`; past 1,000 schedules `429`. Not retried: a lost answer may have made it (a
   * retry would answer 409).
   */
  createSchedule(definition: ScheduleDefinition, opts: CallOptions = {}): Promise<Schedule> {
    return this.call<JsonAnswer<'/v1/schedules', 'post'>>('POST', '/v1/schedules', { ...opts, body: definition });
  }

  /**
   * `GET /v1/schedules/{id}`: the schedule and its newest `firings` (1 to 100, default 20), newest
   * first, each fired one with its turn's outcome. `404 not_found` for an unknown schedule.
   */
  showSchedule(id: string, opts: CallOptions & { firings?: number } = {}): Promise<ScheduleDetail> {
    return this.call<JsonAnswer<'/v1/schedules/{id}', 'get'>>('GET', `/v1/schedules/${enc(id)}`, {
      ...opts,
      query: { firings: opts.firings?.toString() },
      idempotent: true,
    });
  }

  /** `POST /v1/schedules/{id}/pause`: no more firings (`nextTick` null) until resumed; pausing again changes nothing. */
  pauseSchedule(id: string, opts: CallOptions = {}): Promise<Schedule> {
    return this.call<JsonAnswer<'/v1/schedules/{id}/pause', 'post'>>('POST', `/v1/schedules/${enc(id)}/pause`, {
      ...opts,
      body: {},
      idempotent: true,
    });
  }

  /** `POST /v1/schedules/{id}/resume`: goes on from the next tick (the paused time's ticks are not fired). */
  resumeSchedule(id: string, opts: CallOptions = {}): Promise<Schedule> {
    return this.call<JsonAnswer<'/v1/schedules/{id}/resume', 'post'>>('POST', `/v1/schedules/${enc(id)}/resume`, {
      ...opts,
      body: {},
      idempotent: true,
    });
  }

  /**
   * `DELETE /v1/schedules/{id}`: removes the schedule and its firings (the agents it made stay).
   * Not retried: a lost answer may have deleted it (a retry would answer 404).
   */
  async deleteSchedule(id: string, opts: CallOptions = {}): Promise<void> {
    await this.call('DELETE', `/v1/schedules/${enc(id)}`, opts);
  }

  // ---- pairing, devices and notifications (docs/web.md, "Pairing and devices") ----

  /** `GET /v1/whoami`: whether the token is the owner's or a paired device's (`401` once revoked). */
  whoami(opts: CallOptions = {}): Promise<WhoAmI> {
    return this.call<JsonAnswer<'/v1/whoami', 'get'>>('GET', '/v1/whoami', { ...opts, idempotent: true });
  }

  /** `POST /v1/pairings`: a single-use code and link that pair one device (the owner only; not retried). */
  createPairing(req: { name?: string; expiresInMs?: number } = {}, opts: CallOptions = {}): Promise<Pairing> {
    return this.call<JsonAnswer<'/v1/pairings', 'post'>>('POST', '/v1/pairings', { ...opts, body: req });
  }

  /**
   * `POST /v1/pairings/exchange`: trades a pairing code for a device token; needs no credential.
   * A code pairs once, so this is never retried (a used, expired or unknown code is `401`).
   */
  exchangePairing(code: string, opts: CallOptions = {}): Promise<PairedDevice> {
    return this.call<JsonAnswer<'/v1/pairings/exchange', 'post'>>('POST', '/v1/pairings/exchange', {
      ...opts,
      body: { code },
    });
  }

  /** `GET /v1/devices`: the paired devices, oldest first, revoked ones included. */
  async listDevices(opts: CallOptions = {}): Promise<Device[]> {
    const body = await this.call<JsonAnswer<'/v1/devices', 'get'>>('GET', '/v1/devices', { ...opts, idempotent: true });
    return body.devices;
  }

  /** `PATCH /v1/devices/{id}` (the owner, or that device). */
  renameDevice(id: string, name: string, opts: CallOptions = {}): Promise<Device> {
    return this.call<JsonAnswer<'/v1/devices/{id}', 'patch'>>('PATCH', `/v1/devices/${enc(id)}`, {
      ...opts,
      body: { name },
      idempotent: true,
    });
  }

  /** `DELETE /v1/devices/{id}`: revokes the device (the owner, or that device); revoking again answers the same. */
  revokeDevice(id: string, opts: CallOptions = {}): Promise<Device> {
    return this.call<JsonAnswer<'/v1/devices/{id}', 'delete'>>('DELETE', `/v1/devices/${enc(id)}`, {
      ...opts,
      idempotent: true,
    });
  }

  /** `GET /v1/devices/{id}/notifications` (`self`: the calling device): its settings, or the defaults. */
  notificationSettings(deviceId: string, opts: CallOptions = {}): Promise<NotificationSettingsState> {
    return this.call<JsonAnswer<'/v1/devices/{id}/notifications', 'get'>>('GET', `/v1/devices/${enc(deviceId)}/notifications`, {
      ...opts,
      idempotent: true,
    });
  }

  /** `PUT /v1/devices/{id}/notifications`: saves the settings; answers them as saved. */
  setNotificationSettings(
    deviceId: string,
    settings: Partial<NotificationSettings>,
    opts: CallOptions = {},
  ): Promise<NotificationSettingsState> {
    return this.call<JsonAnswer<'/v1/devices/{id}/notifications', 'put'>>('PUT', `/v1/devices/${enc(deviceId)}/notifications`, {
      ...opts,
      body: settings,
      idempotent: true,
    });
  }

  /** `GET /v1/notifications/vapid`: the public key a browser subscribes to push with. */
  vapidKey(opts: CallOptions = {}): Promise<VapidKey> {
    return this.call<JsonAnswer<'/v1/notifications/vapid', 'get'>>('GET', '/v1/notifications/vapid', {
      ...opts,
      idempotent: true,
    });
  }

  /** `GET /healthz`. */
  health(opts: CallOptions = {}): Promise<JsonAnswer<'/healthz', 'get'>> {
    return this.call('GET', '/healthz', opts);
  }

  /**
   * One read of the session log as a Durable Stream (`GET /v1/agents/{id}/events`), not retried
   * (EventFollower, in stream.ts, is the resuming reader).
   */
  async readEvents(id: string, opts: ReadEventsOptions = {}): Promise<EventsRead> {
    const query: Record<string, string | undefined> = { offset: opts.offset ?? '-1', live: opts.live };
    const { res, text } = await this.fetchText('GET', `/v1/agents/${enc(id)}/events`, {
      query,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? (opts.live ? 45000 : this.timeoutMs),
    });
    if (!res.ok) throw errorFrom(res.status, text);
    const h = res.headers;
    let events: EventEnvelope[] = [];
    if (res.status === 200) {
      try {
        events = JSON.parse(text) as EventEnvelope[];
      } catch (e) {
        throw new AgentstreamError('bad_response', `events: not JSON: ${text.slice(0, 200)}`, res.status, { cause: e });
      }
      if (!Array.isArray(events)) throw new AgentstreamError('bad_response', 'events: not an array', res.status);
    }
    const nextOffset = h.get('stream-next-offset');
    if (!nextOffset) throw new AgentstreamError('bad_response', 'events: no Stream-Next-Offset', res.status);
    return {
      status: res.status,
      events,
      nextOffset,
      upToDate: h.get('stream-up-to-date') === 'true',
      reset: h.get('stream-reset') === 'true',
      streamCursor: h.get('stream-cursor') ?? undefined,
    };
  }

  // ---- the transport ----

  /**
   * One JSON call: the body of a 2xx answer, else an AgentstreamError. `idempotent` calls are
   * retried (same body, same ids) after a retryable failure.
   */
  async call<T>(
    method: string,
    path: string,
    o: CallOptions & { query?: Record<string, string | undefined>; body?: unknown; idempotent?: boolean } = {},
  ): Promise<T> {
    const backoff = new Backoff({ minDelayMs: this.retryMin, maxDelayMs: this.retryMax });
    for (let attempt = 0; ; attempt++) {
      try {
        const { res, text } = await this.fetchText(method, path, o);
        if (!res.ok) throw errorFrom(res.status, text);
        if (!text) return undefined as T;
        try {
          return JSON.parse(text) as T;
        } catch (e) {
          throw new AgentstreamError('bad_response', `${method} ${path}: not JSON: ${text.slice(0, 200)}`, res.status, {
            cause: e,
          });
        }
      } catch (e) {
        if (!o.idempotent || attempt >= this.retries || !isAgentstreamError(e) || !e.retryable) throw e;
        await sleep(backoff.next(), o.signal);
      }
    }
  }

  /** One request and its whole answer, both within the timeout; never retried. */
  private async fetchText(
    method: string,
    path: string,
    o: CallOptions & { query?: Record<string, string | undefined>; body?: unknown },
  ): Promise<{ res: Response; text: string }> {
    if (o.signal?.aborted) throw abortError(o.signal);
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeoutMs);
    const onAbort = () => ctl.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.fetchFn(url.toString(), {
        method,
        headers,
        body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
        signal: ctl.signal,
      });
      const text = await res.text();
      return { res, text };
    } catch (e) {
      if (o.signal?.aborted) throw abortError(o.signal);
      if (timedOut) throw new AgentstreamError('timeout', `${method} ${path}: no answer within ${timeoutMs} ms`, 0, { cause: e });
      throw new AgentstreamError('network', `${method} ${path}: ${describe(e)}`, 0, { cause: e });
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** The AgentstreamError of an HTTP error answer (`{"error":{"code","message"}}`, else the text). */
export function errorFrom(status: number, text: string): AgentstreamError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (body && typeof body.error?.code === 'string')
      return new AgentstreamError(body.error.code, String(body.error.message ?? ''), status);
  } catch {
    // not JSON: the text as is
  }
  return new AgentstreamError(`http_${status}`, text.slice(0, 500) || `HTTP ${status}`, status);
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
  }
  return String(e);
}
