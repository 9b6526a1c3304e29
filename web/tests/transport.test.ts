// WsTransport against sockets the test controls: a socket that neither opens nor fails is given
// up after CONNECT_TIMEOUT_MS and counted as a failed attempt; the next socket opens normally.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentstreamError } from '@agentstream/client';
import { CONNECT_TIMEOUT_MS, RECONNECT_MAX_MS, RECONNECT_MIN_MS, WsTransport, isDisconnected } from '../src/core/transport';

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
  send(_data: string): void {}
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

describe('WsTransport failures', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.made = [];
    (globalThis as any).WebSocket = FakeSocket;
  });
  afterEach(() => {
    vi.useRealTimers();
    delete (globalThis as any).WebSocket;
  });

  it("rejects with the package's AgentstreamError: the daemon's code, or disconnected", async () => {
    const transport = new WsTransport('ws://daemon/ws');
    transport.start();
    const socket = FakeSocket.made[0];
    const sent: string[] = [];
    socket.send = (data: string) => void sent.push(data);
    socket.onopen!();
    const refused = transport.request({ type: 'model.set', agent: 'ses_1', model: 'm2' });
    const lost = transport.request({ type: 'hello' });
    const [first] = sent.map((d) => JSON.parse(d));
    socket.onmessage!({
      data: JSON.stringify({ type: 'error', id: first.id, error: { code: 'invalid_argument', message: 'no m2' } }),
    });
    await expect(refused).rejects.toMatchObject({ name: 'AgentstreamError', code: 'invalid_argument', message: 'no m2' });
    socket.onclose!();
    await expect(lost).rejects.toSatisfy((e) => e instanceof AgentstreamError && isDisconnected(e));
    await expect(transport.request({ type: 'hello' })).rejects.toSatisfy(isDisconnected);
  });

  it('sends heartbeats without an id only while connected; pushed messages reach onMessage', async () => {
    const transport = new WsTransport('ws://daemon/ws');
    const pushed: any[] = [];
    transport.onMessage((m) => pushed.push(m));
    transport.start();
    const socket = FakeSocket.made[0];
    const sent: string[] = [];
    socket.send = (data: string) => void sent.push(data);
    transport.send({ type: 'heartbeat', visible: true });
    expect(sent).toEqual([]); // not connected: dropped, as a heartbeat may be
    socket.onopen!();
    transport.send({ type: 'heartbeat', visible: true });
    const hello = transport.request({ type: 'hello' });
    const [beat, req] = sent.map((d) => JSON.parse(d));
    expect(beat).toEqual({ type: 'heartbeat', visible: true });
    socket.onmessage!({ data: JSON.stringify({ type: 'agent.status', agent: { id: 'ses_1' } }) });
    socket.onmessage!({ data: JSON.stringify({ type: 'server_info', id: req.id }) });
    await expect(hello).resolves.toMatchObject({ type: 'server_info' });
    expect(pushed.map((m) => m.type)).toEqual(['agent.status']);
  });

  it('a request not answered in time fails with timeout', async () => {
    const transport = new WsTransport('ws://daemon/ws');
    transport.start();
    FakeSocket.made[0].onopen!();
    const slow = transport.request({ type: 'hello' }, 1000);
    vi.advanceTimersByTime(1000);
    await expect(slow).rejects.toSatisfy((e) => e instanceof AgentstreamError && e.code === 'timeout');
  });

  it('reconnects with a backoff that doubles up to RECONNECT_MAX_MS and starts over after a connection', () => {
    const transport = new WsTransport('ws://daemon/ws');
    transport.start();
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const n = FakeSocket.made.length;
      FakeSocket.made[n - 1].onclose!();
      let waited = 0;
      while (FakeSocket.made.length === n) {
        vi.advanceTimersByTime(10);
        waited += 10;
      }
      delays.push(waited);
    }
    expect(delays[0]).toBeLessThanOrEqual(RECONNECT_MIN_MS);
    expect(delays[1]).toBeGreaterThan(RECONNECT_MIN_MS); // doubled (less at most 25% jitter)
    expect(Math.max(...delays)).toBeLessThanOrEqual(RECONNECT_MAX_MS);
    expect(delays.at(-1)).toBeGreaterThanOrEqual(RECONNECT_MAX_MS * 0.75);
    FakeSocket.made.at(-1)!.onopen!();
    FakeSocket.made.at(-1)!.onclose!();
    const n = FakeSocket.made.length;
    vi.advanceTimersByTime(RECONNECT_MIN_MS);
    expect(FakeSocket.made.length).toBe(n + 1);
  });
});
