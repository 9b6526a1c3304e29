// The page's credential (docs/web.md, "Pairing and devices"): the owner's token given as
// `?token=` (kept for the tab in sessionStorage, as before), else this browser's device token
// (kept in localStorage after a pairing, never in a URL), else none (a daemon without a token,
// reached over loopback). Pairing: a page opened at `/#pair=asp_...` removes the fragment from
// the address and history at once, then trades the code for a device token with
// `POST /v1/pairings/exchange`.
import { AgentstreamHttp, isAgentstreamError, type Device, type FetchLike } from '@agentstream/client';

export const TAB_TOKEN_KEY = 'agentstream.token';
export const DEVICE_TOKEN_KEY = 'agentstream.deviceToken';

export type CredentialKind = 'tab' | 'device' | 'none';

export interface Credential {
  kind: CredentialKind;
  token: string;
}

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

// The token this page uses: `?token=` first (and kept for the tab), then the tab's, then the
// device token of this browser.
export function pickCredential(search: string, tab: KeyValueStore, device: KeyValueStore): Credential {
  const fromUrl = new URLSearchParams(search).get('token');
  if (fromUrl) {
    tab.setItem(TAB_TOKEN_KEY, fromUrl);
    return { kind: 'tab', token: fromUrl };
  }
  const kept = tab.getItem(TAB_TOKEN_KEY);
  if (kept) return { kind: 'tab', token: kept };
  const deviceToken = device.getItem(DEVICE_TOKEN_KEY);
  if (deviceToken) return { kind: 'device', token: deviceToken };
  return { kind: 'none', token: '' };
}

// What the fragment asks for: `#pair=CODE`, or `#agent=ID&cursor=E:S` (a notification's link).
export interface FragmentRequest {
  pair?: string;
  agent?: string;
  cursor?: string;
}

export function parseFragment(hash: string): FragmentRequest {
  const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const out: FragmentRequest = {};
  const pair = params.get('pair');
  if (pair) out.pair = pair;
  const agent = params.get('agent');
  if (agent && /^[A-Za-z0-9_-]{1,128}$/.test(agent)) {
    out.agent = agent;
    const cursor = params.get('cursor');
    if (cursor && /^\d+:\d+$/.test(cursor)) out.cursor = cursor;
  }
  return out;
}

export type ExchangeResult = { ok: true; token: string; device: Device } | { ok: false; message: string };

const PAIRING_CODE = /^asp_[A-Za-z0-9_-]{32}$/;

// Trades a pairing code for a device token (the client package's exchangePairing, sent once).
// Never rejects: a refused, malformed or unreachable exchange is `{ ok: false, message }` with a
// sentence for the person holding the phone.
export async function exchangePairing(origin: string, code: string, fetchFn?: FetchLike): Promise<ExchangeResult> {
  if (!PAIRING_CODE.test(code))
    return { ok: false, message: 'This pairing link is malformed. Create a new pairing on the computer running agentstream.' };
  try {
    const paired = await new AgentstreamHttp({ baseUrl: origin, fetch: fetchFn }).exchangePairing(code);
    if (typeof paired?.token !== 'string' || !paired.token.startsWith('asd_'))
      return { ok: false, message: 'Pairing failed: the daemon answered no device token' };
    return { ok: true, token: paired.token, device: paired.device };
  } catch (err) {
    const e = isAgentstreamError(err) ? err : null;
    if (!e || e.status === 0)
      return {
        ok: false,
        message: `Could not reach the daemon to pair this device (${String((err as Error)?.message ?? err)}).`,
      };
    if (e.status === 401)
      return {
        ok: false,
        message: 'This pairing code was already used, has expired, or is unknown. Create a new pairing and open its link again.',
      };
    if (e.status === 429)
      return { ok: false, message: 'Too many pairing attempts from this address. Wait a minute, then try again.' };
    return { ok: false, message: `Pairing failed: ${e.message}` };
  }
}
