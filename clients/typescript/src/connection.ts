// One WebSocket to the daemon's app protocol at /ws (docs/protocol.md), kept open: made again
// after every loss with a bounded backoff, a socket not open in time given up, requests matched
// to replies by id under a timeout, pushed messages handed to listeners, fire-and-forget sends,
// and an optional handshake run on each new socket before it counts as connected. It knows
// nothing of agents or subscriptions: `ReplicaClient` and the web page's transport are built on
// it, so both speak to /ws through this one module.
import { AgentstreamError } from './errors.js';
import { Backoff } from './backoff.js';
import { Emitter, type Listener } from './emitter.js';

/** What the connection needs of a WebSocket: the browser's, Node 22's global one, or `ws`'s. */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((ev: any) => void) | null;
  onmessage: ((ev: { data: any }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: any) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** The defaults of `ConnectionOptions`, for callers that show or test them. */
export const CONNECTION_DEFAULTS = {
  minDelayMs: 250,
  maxDelayMs: 5000,
  connectTimeoutMs: 8000,
  requestTimeoutMs: 30000,
  maxPendingRequests: 1024,
} as const;

export interface ConnectionOptions {
  /** The WebSocket URL (`ws://host:port/ws?token=...`). */
  url: string;
  /** The WebSocket constructor. Default: the global one (browsers, Node 22), else `loadWebSocket`'s. */
  WebSocket?: WebSocketConstructor;
  /**
   * Where there is neither: loads a constructor at the first connect (`loadNodeWebSocket` loads
   * the `ws` package's). Without one, or when it rejects, the connection stops with `fatal` set
   * (`no_websocket`).
   */
  loadWebSocket?: () => Promise<WebSocketConstructor>;
  /** Reconnect backoff: from this (default 250 ms) doubling up to maxDelayMs (default 5000 ms), up to 25% less for jitter. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A socket not open within this is given up as a failed attempt (`timeout`) and retried. Default 8000. */
  connectTimeoutMs?: number;
  /** A request not answered within this fails with `timeout`. Default 30000. */
  requestTimeoutMs?: number;
  /** Requests in flight at most; a further one fails at once with `too_many_requests`. Default 1024. */
  maxPendingRequests?: number;
  /**
   * Run on each socket once it is open, before the connection counts as connected: it may make
   * requests. When it rejects, the socket is closed and the attempt counts as failed (retried
   * after the backoff). Without one, an open socket is connected at once.
   */
  handshake?: (conn: Connection) => Promise<void>;
}

interface Pending {
  resolve: (v: any) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * The socket layer of the app protocol. Single-threaded like everything in JavaScript: every
 * listener runs on the event loop, never inside a call of the caller's. Failures are
 * `AgentstreamError`s: `disconnected` (no socket, or it was lost with the request in flight),
 * `timeout`, `too_many_requests` (local, nothing was sent), else the daemon's error code.
 */
export class Connection {
  /** Why the connection stopped for good (no WebSocket implementation), if it did. */
  fatal: AgentstreamError | null = null;
  private sockets = 0;
  private ws: WebSocketLike | null = null;
  private wsCtor: WebSocketConstructor | null;
  private socketOpen = false;
  private ready = false;
  private running = false;
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private readonly backoff: Backoff;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly messageEmitter = new Emitter<any>();
  private readonly connectionEmitter = new Emitter<boolean>();
  private readonly failedEmitter = new Emitter<AgentstreamError>();

  constructor(private readonly opts: ConnectionOptions) {
    this.wsCtor = opts.WebSocket ?? null;
    this.backoff = new Backoff({
      minDelayMs: opts.minDelayMs ?? CONNECTION_DEFAULTS.minDelayMs,
      maxDelayMs: opts.maxDelayMs ?? CONNECTION_DEFAULTS.maxDelayMs,
    });
  }

  /** Open, and the handshake (if any) done: `onConnection(true)` was the last word. */
  get connected(): boolean {
    return this.ready;
  }

  /** The socket is open (requests may be made; during the handshake too). */
  get open(): boolean {
    return this.socketOpen;
  }

  /** Sockets made so far (the first connect and every reconnect). */
  get connects(): number {
    return this.sockets;
  }

  /** Connects, and keeps reconnecting until close(). A second call does nothing. */
  start(): this {
    if (this.running) return this;
    this.running = true;
    this.makeSocket();
    return this;
  }

  /**
   * Closes the socket and stops reconnecting (start() begins again). Requests in flight fail
   * with `disconnected`; listeners hear `onConnection(false)` if it was connected.
   */
  close(): void {
    this.running = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.ws;
    if (!ws) return;
    abandon(ws, 1000, 'client closed');
    this.closed(ws, new AgentstreamError('aborted', 'the connection was closed'));
  }

  /** Drops the socket as a network failure would: the connection then reconnects. */
  drop(): void {
    try {
      this.ws?.close(4000, 'client reconnect');
    } catch {
      // already closed
    }
  }

  /** Pushed messages: every parsed message that is not the reply to a request in flight. */
  onMessage(fn: Listener<any>): () => void {
    return this.messageEmitter.on(fn);
  }

  /** `true` once connected (after the handshake), `false` when a connected socket is lost or closed. */
  onConnection(fn: Listener<boolean>): () => void {
    return this.connectionEmitter.on(fn);
  }

  /**
   * An attempt that failed before it was connected, with why: `disconnected` (refused, or closed
   * before it opened or during the handshake), `timeout` (not open in time), the handshake's own
   * error, or `no_websocket` (fatal: the connection stopped).
   */
  onConnectFailed(fn: Listener<AgentstreamError>): () => void {
    return this.failedEmitter.on(fn);
  }

  /** Sends `msg` without an id and expects no reply. Returns false (nothing sent) when the socket is not open. */
  send(msg: Record<string, unknown>): boolean {
    const ws = this.ws;
    if (!ws || !this.socketOpen) return false;
    try {
      ws.send(JSON.stringify(msg));
      return true;
    } catch {
      return false;
    }
  }

  /** One request: `msg` with a fresh id; resolves with the reply, rejects as the class comment says. */
  request(msg: Record<string, unknown>, timeoutMs = this.opts.requestTimeoutMs ?? CONNECTION_DEFAULTS.requestTimeoutMs): Promise<any> {
    const ws = this.ws;
    if (!ws || !this.socketOpen) return Promise.reject(new AgentstreamError('disconnected', 'not connected'));
    if (this.pending.size >= (this.opts.maxPendingRequests ?? CONNECTION_DEFAULTS.maxPendingRequests))
      return Promise.reject(new AgentstreamError('too_many_requests', `${this.pending.size} requests are in flight`));
    const id = `r${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AgentstreamError('timeout', `request ${String(msg.type)} not answered within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      try {
        ws.send(JSON.stringify({ ...msg, id }));
      } catch (e) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new AgentstreamError('disconnected', `send failed: ${String(e)}`));
      }
    });
  }

  // ---- the socket ----

  // Makes the next socket, with the constructor at hand (synchronously), or once `ws` is loaded.
  private makeSocket(): void {
    if (!this.running) return;
    const Ctor = this.wsCtor ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (Ctor) return this.openWith(Ctor);
    const load = this.opts.loadWebSocket ?? (() => Promise.reject(new Error('no global WebSocket and no loadWebSocket')));
    load().then(
      (loaded) => {
        this.wsCtor = loaded;
        this.openWith(loaded);
      },
      (e: unknown) => {
        // Nothing to connect with: stop.
        this.fatal = new AgentstreamError('no_websocket', `no WebSocket: pass one as the WebSocket option, or install ws (${String(e)})`);
        this.running = false;
        this.failedEmitter.emit(this.fatal);
      },
    );
  }

  private openWith(Ctor: WebSocketConstructor): void {
    if (!this.running) return;
    this.sockets++;
    let ws: WebSocketLike;
    try {
      ws = new Ctor(this.opts.url);
    } catch (e) {
      this.failedEmitter.emit(new AgentstreamError('disconnected', `no socket: ${String(e)}`));
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    const timeoutMs = this.opts.connectTimeoutMs ?? CONNECTION_DEFAULTS.connectTimeoutMs;
    const connectTimer = setTimeout(() => {
      if (this.ws !== ws || this.socketOpen) return;
      abandon(ws);
      this.closed(ws, new AgentstreamError('timeout', `the socket did not open within ${timeoutMs} ms`));
    }, timeoutMs);
    ws.onopen = () => {
      clearTimeout(connectTimer);
      if (this.ws !== ws) return;
      this.socketOpen = true;
      this.opened(ws);
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws) return;
      let msg: any;
      try {
        msg = JSON.parse(typeof ev.data === 'string' ? ev.data : String(ev.data));
      } catch {
        return;
      }
      this.received(msg);
    };
    ws.onerror = () => {
      // onclose follows
    };
    ws.onclose = () => {
      clearTimeout(connectTimer);
      this.closed(ws, new AgentstreamError('disconnected', 'the socket closed before it was connected'));
    };
  }

  private opened(ws: WebSocketLike): void {
    const handshake = this.opts.handshake;
    if (!handshake) return this.connectedNow();
    handshake(this).then(
      () => {
        if (this.ws === ws) this.connectedNow();
      },
      (e: unknown) => {
        if (this.ws !== ws) return; // the socket was lost meanwhile: already counted
        abandon(ws, 4000, 'handshake failed');
        this.closed(ws, e instanceof AgentstreamError ? e : new AgentstreamError('error', String(e)));
      },
    );
  }

  private connectedNow(): void {
    this.ready = true;
    this.backoff.reset();
    this.connectionEmitter.emit(true);
  }

  private received(msg: any): void {
    const waiter = msg?.id !== undefined ? this.pending.get(msg.id) : undefined;
    if (waiter) {
      this.pending.delete(msg.id);
      clearTimeout(waiter.timer);
      if (msg.type === 'error') waiter.reject(new AgentstreamError(msg.error?.code ?? 'error', msg.error?.message ?? ''));
      else waiter.resolve(msg);
      return;
    }
    this.messageEmitter.emit(msg);
  }

  // The socket `ws` closed, or was given up: requests in flight fail, listeners learn of it, and
  // (unless closed by the caller) a new socket is made after the backoff. A socket that is no
  // longer the current one counts nothing.
  private closed(ws: WebSocketLike, why: AgentstreamError): void {
    if (this.ws !== ws) return;
    this.ws = null;
    const was = this.ready;
    this.ready = false;
    this.socketOpen = false;
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new AgentstreamError('disconnected', 'the connection was lost'));
    }
    this.pending.clear();
    if (was) this.connectionEmitter.emit(false);
    else if (this.running) this.failedEmitter.emit(why);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (!this.running || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.makeSocket();
    }, this.backoff.next());
  }
}

// Detaches the socket's handlers (its late events count nothing) and closes it.
function abandon(ws: WebSocketLike, code?: number, reason?: string): void {
  ws.onopen = ws.onmessage = ws.onclose = null;
  ws.onerror = () => {
    // a socket closed while connecting may still report an error
  };
  try {
    if (code === undefined) ws.close();
    else ws.close(code, reason);
  } catch {
    // never opened, or already closed
  }
}
