// The WebSocket to /ws: requests matched to replies by id, pushed messages to listeners,
// reconnection with the client package's Backoff. Every failure is the package's
// AgentstreamError: `disconnected` for a request in flight when the socket drops (or made while
// there is none), `timeout` for one not answered in time, else the daemon's error code.
import { AgentstreamError, Backoff } from '@agentstream/client';

// Reconnect delays: from 250 ms doubling up to 5 s (with the package's jitter below each step).
export const RECONNECT_MIN_MS = 250;
export const RECONNECT_MAX_MS = 5000;

// Whether `e` is a request's failure for want of a connection (not an answer of the daemon).
export function isDisconnected(e: unknown): boolean {
  return e instanceof AgentstreamError && e.code === 'disconnected';
}

// Whether `e` is the daemon's error reply to a request (not a lost socket, not a timeout).
export function isErrorReply(e: unknown): e is AgentstreamError {
  return e instanceof AgentstreamError && e.code !== 'disconnected' && e.code !== 'timeout';
}

export interface Transport {
  readonly connected: boolean;
  request(msg: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  send(msg: Record<string, unknown>): void; // fire and forget (no id, no reply)
  onMessage(fn: (msg: any) => void): void;
  onConnection(fn: (connected: boolean) => void): void;
  // Drops the socket as a network failure would; the transport then reconnects.
  drop(): void;
}

export const MAX_PENDING_REQUESTS = 1024;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30000;
// A socket not open this long after it was made is given up and counted as a failed attempt: a
// network that neither answers nor refuses (a phone between cells, a dropped Wi-Fi) then shows
// the page as out of reach instead of waiting on the browser's own timeout, minutes long.
export const CONNECT_TIMEOUT_MS = 8000;

export class WsTransport implements Transport {
  connected = false;
  private ws: WebSocket | null = null;
  private nextId = 1;
  private pending = new Map<string, { resolve: (v: any) => void; reject: (e: Error) => void; timer: any }>();
  private messageFns: ((msg: any) => void)[] = [];
  private connectionFns: ((c: boolean) => void)[] = [];
  private failureFns: (() => void)[] = [];
  private backoff = new Backoff({ minDelayMs: RECONNECT_MIN_MS, maxDelayMs: RECONNECT_MAX_MS });
  private closedByUser = false;

  constructor(private readonly url: string) {}

  start(): void {
    this.closedByUser = false;
    this.open();
  }

  stop(): void {
    this.closedByUser = true;
    this.ws?.close();
  }

  // Drops the socket as a network failure would (tests and the "reconnect" button).
  drop(): void {
    this.ws?.close(4000, 'client reconnect');
  }

  onMessage(fn: (msg: any) => void): void {
    this.messageFns.push(fn);
  }

  onConnection(fn: (connected: boolean) => void): void {
    this.connectionFns.push(fn);
  }

  // Called when an attempt to connect fails (the socket closed before it opened): the daemon is
  // unreachable, or refused the upgrade.
  onConnectFailure(fn: () => void): void {
    this.failureFns.push(fn);
  }

  send(msg: Record<string, unknown>): void {
    if (this.ws && this.connected) this.ws.send(JSON.stringify(msg));
  }

  request(msg: Record<string, unknown>, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<any> {
    if (!this.ws || !this.connected) return Promise.reject(new AgentstreamError('disconnected', 'not connected'));
    if (this.pending.size >= MAX_PENDING_REQUESTS) return Promise.reject(new Error('too many requests in flight')); // local: tried again later
    const id = `r${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AgentstreamError('timeout', `request ${String(msg.type)} timed out`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.ws!.send(JSON.stringify({ ...msg, id }));
    });
  }

  private open(): void {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    const connectTimer = setTimeout(() => {
      if (this.ws !== ws || this.connected) return;
      ws.onclose = null;
      ws.close();
      this.closed(ws);
    }, CONNECT_TIMEOUT_MS);
    ws.onopen = () => {
      clearTimeout(connectTimer);
      this.connected = true;
      this.backoff.reset();
      for (const fn of this.connectionFns) fn(true);
    };
    ws.onmessage = (ev) => {
      let msg: any;
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      const waiter = msg.id !== undefined ? this.pending.get(msg.id) : undefined;
      if (waiter) {
        this.pending.delete(msg.id);
        clearTimeout(waiter.timer);
        if (msg.type === 'error') waiter.reject(new AgentstreamError(msg.error?.code ?? 'error', msg.error?.message ?? ''));
        else waiter.resolve(msg);
        return;
      }
      for (const fn of this.messageFns) fn(msg);
    };
    ws.onclose = () => {
      clearTimeout(connectTimer);
      this.closed(ws);
    };
  }

  // The socket `ws` closed, or was given up before it opened: requests in flight fail, listeners
  // learn of it, and a new socket is made after the backoff.
  private closed(ws: WebSocket): void {
    if (this.ws !== ws) return;
    const was = this.connected;
    this.connected = false;
    this.ws = null;
    for (const [, w] of this.pending) {
      clearTimeout(w.timer);
      w.reject(new AgentstreamError('disconnected', 'the connection was lost'));
    }
    this.pending.clear();
    if (was) for (const fn of this.connectionFns) fn(false);
    else for (const fn of this.failureFns) fn();
    if (!this.closedByUser) {
      setTimeout(() => this.open(), this.backoff.next());
    }
  }
}
