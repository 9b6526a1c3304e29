// The page's seam to the WebSocket at /ws. `Transport` is what SyncEngine needs (a fake
// implements it in the unit tests); `WsTransport` is the real one: the client package's
// Connection (one socket layer for the page and ReplicaClient: requests by id under a timeout,
// pushed messages, fire-and-forget sends, reconnection with backoff, the connect timeout), with
// no handshake of its own (SyncEngine sends hello and agents.list once connected). Every failure
// is the package's AgentstreamError: `disconnected` for a request in flight when the socket drops
// (or made while there is none), `timeout` for one not answered in time, `too_many_requests` when
// too many are in flight (nothing sent), else the daemon's error code.
import { AgentstreamError, CONNECTION_DEFAULTS, Connection } from '@agentstream/client';

// Reconnect delays: from 250 ms doubling up to 5 s (with the package's jitter below each step).
export const RECONNECT_MIN_MS = CONNECTION_DEFAULTS.minDelayMs;
export const RECONNECT_MAX_MS = CONNECTION_DEFAULTS.maxDelayMs;
// A socket not open this long after it was made is given up and counted as a failed attempt: a
// network that neither answers nor refuses (a phone between cells, a dropped Wi-Fi) then shows
// the page as out of reach instead of waiting on the browser's own timeout, minutes long.
export const CONNECT_TIMEOUT_MS = CONNECTION_DEFAULTS.connectTimeoutMs;

// The failures of a request the daemon never answered (made locally by the connection).
// Whether `e` is a request's failure for want of a connection (not an answer of the daemon).
export function isDisconnected(e: unknown): boolean {
  return e instanceof AgentstreamError && e.code === 'disconnected';
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

export class WsTransport implements Transport {
  private readonly conn: Connection;

  // `url`: the socket's address with the page's token (`wss://host/ws?token=...`). The browser's
  // WebSocket is used.
  constructor(url: string) {
    this.conn = new Connection({ url });
  }

  get connected(): boolean {
    return this.conn.connected;
  }

  start(): void {
    this.conn.start();
  }

  // Closes the socket for good (a revoked device): no reconnection until start().
  stop(): void {
    this.conn.close();
  }

  // Drops the socket as a network failure would (tests and the "reconnect" button).
  drop(): void {
    this.conn.drop();
  }

  onMessage(fn: (msg: any) => void): void {
    this.conn.onMessage(fn);
  }

  onConnection(fn: (connected: boolean) => void): void {
    this.conn.onConnection(fn);
  }

  // Called when an attempt to connect fails (refused, closed before it opened, or not open within
  // CONNECT_TIMEOUT_MS): the daemon is out of reach, or refused the upgrade.
  onConnectFailure(fn: () => void): void {
    this.conn.onConnectFailed(() => fn());
  }

  send(msg: Record<string, unknown>): void {
    if (this.conn.connected) this.conn.send(msg);
  }

  request(msg: Record<string, unknown>, timeoutMs?: number): Promise<any> {
    return this.conn.request(msg, timeoutMs);
  }
}
