// WsTransport against sockets the test controls: a socket that neither opens nor fails is given
// up after CONNECT_TIMEOUT_MS and counted as a failed attempt; the next socket opens normally.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONNECT_TIMEOUT_MS, WsTransport } from '../src/core/transport';

class FakeSocket {
  static made: FakeSocket[] = [];
  onopen: (() => void) | null = null;
  onclose: (() => void) | null = null;
  onmessage: ((ev: { data: string }) => void) | null = null;
  closeCalls = 0;
  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }
  close(): void {
    this.closeCalls++;
  }
  send(): void {}
}

describe('WsTransport', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.made = [];
    (globalThis as any).WebSocket = FakeSocket;
  });
  afterEach(() => {
    vi.useRealTimers();
    delete (globalThis as any).WebSocket;
  });

  it('gives up a socket that never opens, reports a failed attempt and tries again', () => {
    const transport = new WsTransport('ws://daemon/ws');
    const failures: number[] = [];
    const connections: boolean[] = [];
    transport.onConnectFailure(() => failures.push(Date.now()));
    transport.onConnection((c) => connections.push(c));
    transport.start();
    expect(FakeSocket.made).toHaveLength(1);

    vi.advanceTimersByTime(CONNECT_TIMEOUT_MS - 1);
    expect(failures).toHaveLength(0); // still connecting: not yet out of reach
    vi.advanceTimersByTime(1);
    expect(failures).toHaveLength(1);
    expect(FakeSocket.made[0].closeCalls).toBe(1);
    expect(transport.connected).toBe(false);

    // A late close event of the abandoned socket counts nothing twice.
    FakeSocket.made[0].onclose?.();
    expect(failures).toHaveLength(1);

    vi.advanceTimersByTime(250); // the first backoff
    expect(FakeSocket.made).toHaveLength(2);
    FakeSocket.made[1].onopen!();
    expect(transport.connected).toBe(true);
    expect(connections).toEqual([true]);
    // An open socket is never timed out.
    vi.advanceTimersByTime(CONNECT_TIMEOUT_MS * 2);
    expect(transport.connected).toBe(true);
    expect(failures).toHaveLength(1);
  });

  it('a socket refused at once is a failed attempt, without waiting for the timeout', () => {
    const transport = new WsTransport('ws://daemon/ws');
    let failures = 0;
    transport.onConnectFailure(() => failures++);
    transport.start();
    FakeSocket.made[0].onclose!();
    expect(failures).toBe(1);
    vi.advanceTimersByTime(CONNECT_TIMEOUT_MS);
    expect(failures).toBe(1); // the first socket's timer was cleared
  });
});
