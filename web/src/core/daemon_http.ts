// The page's HTTP calls: the client package's AgentstreamHttp (`@agentstream/client`: the typed
// calls of docs/openapi.yaml, their errors, their retries) against the page's own origin with the
// page's token, for what the WebSocket protocol does not carry (a worktree's diff:
// docs/workspaces.md; the catalog; paired devices and their notification settings: docs/web.md,
// "Pairing and devices").
//
// Errors are values for the UI: `run` resolves `{ ok: false, status, message }` for an HTTP error
// (404 when an agent has no worktree) and for a network failure (status 0); it never rejects. A
// 401 is also reported to `onUnauthorized` (a revoked device token).
import { AgentstreamHttp, isAgentstreamError, type FetchLike } from '@agentstream/client';

export type HttpResult<T> = { ok: true; value: T } | { ok: false; status: number; message: string };

export class DaemonHttp {
  onUnauthorized: (() => void) | null = null;
  readonly api: AgentstreamHttp;

  constructor(base: string, token: string, fetchFn?: FetchLike) {
    this.api = new AgentstreamHttp({ baseUrl: base, token, fetch: fetchFn });
  }

  // One call of the package, e.g. `http.run((api) => api.diff(agentId))`: its answer, or its
  // error as a value.
  async run<T>(call: (api: AgentstreamHttp) => Promise<T>): Promise<HttpResult<T>> {
    try {
      return { ok: true, value: await call(this.api) };
    } catch (err) {
      const status = isAgentstreamError(err) ? err.status : 0;
      if (status === 401) this.onUnauthorized?.();
      return { ok: false, status, message: String((err as Error)?.message ?? err) };
    }
  }
}
