// The page's HTTP calls over the client package: errors as values, a 401 reported, and the
// pairing exchange's answers turned into sentences for the person holding the phone.
import { describe, expect, it } from 'vitest';
import { exchangePairing } from '../src/core/auth';
import { DaemonHttp } from '../src/core/daemon_http';

const CODE = `asp_${'A'.repeat(32)}`;
const DEVICE = {
  id: 'dev_1',
  name: 'phone',
  createdMs: 1,
  lastSeenMs: 0,
  userAgent: '',
  revoked: false,
  revokedMs: 0,
  current: true,
};

// A fetch that answers every request with `status` and `body`, recording the requests. It refuses
// a `this`, as a browser's fetch does.
function answering(status: number, body: unknown) {
  const seen: { url: string; method: string; auth?: string }[] = [];
  const fetchFn = function (this: unknown, url: string, init?: RequestInit) {
    if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
    const headers = (init?.headers ?? {}) as Record<string, string>;
    seen.push({ url, method: init?.method ?? 'GET', auth: headers.authorization });
    return Promise.resolve(new Response(JSON.stringify(body), { status }));
  };
  return { fetchFn, seen };
}

describe('DaemonHttp', () => {
  it('answers a call of the package with its value, sending the token', async () => {
    const { fetchFn, seen } = answering(200, { devices: [DEVICE] });
    const http = new DaemonHttp('http://daemon', 'asd_tok', fetchFn);
    expect(await http.run((api) => api.listDevices())).toEqual({ ok: true, value: [DEVICE] });
    expect(seen).toEqual([{ url: 'http://daemon/v1/devices', method: 'GET', auth: 'Bearer asd_tok' }]);
  });

  it("resolves an error as a value with the daemon's message, and reports a 401", async () => {
    let unauthorized = 0;
    const gone = new DaemonHttp(
      'http://daemon',
      'asd_tok',
      answering(404, { error: { code: 'not_found', message: 'no worktree' } }).fetchFn,
    );
    gone.onUnauthorized = () => unauthorized++;
    expect(await gone.run((api) => api.diff('ses_1'))).toEqual({ ok: false, status: 404, message: 'no worktree' });
    expect(unauthorized).toBe(0);
    const revoked = new DaemonHttp(
      'http://daemon',
      'asd_tok',
      answering(401, { error: { code: 'unauthorized', message: 'revoked' } }).fetchFn,
    );
    revoked.onUnauthorized = () => unauthorized++;
    expect(await revoked.run((api) => api.whoami())).toMatchObject({ ok: false, status: 401 });
    expect(unauthorized).toBe(1);
  });

  it('a network failure is status 0', async () => {
    const http = new DaemonHttp('http://daemon', '', () => Promise.reject(new TypeError('Failed to fetch')));
    const r = await http.run((api) => api.createPairing({ name: 'phone' })); // not retried
    expect(r).toMatchObject({ ok: false, status: 0, message: expect.stringContaining('Failed to fetch') });
  });
});

describe('exchangePairing', () => {
  it('trades a code for a device token, once', async () => {
    const { fetchFn, seen } = answering(200, { token: 'asd_new', device: DEVICE });
    expect(await exchangePairing('http://daemon', CODE, fetchFn)).toEqual({ ok: true, token: 'asd_new', device: DEVICE });
    expect(seen).toEqual([{ url: 'http://daemon/v1/pairings/exchange', method: 'POST', auth: undefined }]);
  });

  it('says what a refusal means', async () => {
    const cases: [number, unknown, string][] = [
      [401, { error: { code: 'unauthorized', message: 'x' } }, 'already used'],
      [429, { error: { code: 'resource_exhausted', message: 'x' } }, 'Too many pairing attempts'],
      [503, { error: { code: 'unavailable', message: 'shutting down' } }, 'Pairing failed: shutting down'],
      [200, { token: 'not-a-device-token', device: DEVICE }, 'no device token'],
    ];
    for (const [status, body, words] of cases) {
      const { fetchFn, seen } = answering(status, body);
      expect(await exchangePairing('http://daemon', CODE, fetchFn)).toEqual({
        ok: false,
        message: expect.stringContaining(words),
      });
      expect(seen).toHaveLength(1); // a code pairs once: never sent twice
    }
    const unreachable = await exchangePairing('http://daemon', CODE, () => Promise.reject(new TypeError('Failed to fetch')));
    expect(unreachable).toEqual({ ok: false, message: expect.stringContaining('Could not reach the daemon') });
  });
});
