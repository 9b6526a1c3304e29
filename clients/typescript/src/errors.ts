// Every failure the client reports: the daemon's `{"error":{"code","message"}}` with the HTTP
// status, or a local one (`network`, `timeout`, `aborted`, `disconnected`, `too_many_requests`,
// `bad_response`) with status 0.
export class AgentstreamError extends Error {
  override readonly name = 'AgentstreamError';
  constructor(
    /** The daemon's error code (`not_found`, `invalid_argument`, ...) or a local one. */
    readonly code: string,
    message: string,
    /** The HTTP status; 0 for a failure that got no answer (or a WebSocket error reply). */
    readonly status: number = 0,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** True for a failure worth retrying: no answer, or the daemon unavailable or overloaded. */
  get retryable(): boolean {
    return (
      this.code === 'network' ||
      this.code === 'timeout' ||
      this.code === 'disconnected' ||
      this.status === 502 ||
      this.status === 503 ||
      this.status === 504 ||
      this.status === 429
    );
  }
}

export function isAgentstreamError(e: unknown): e is AgentstreamError {
  return e instanceof AgentstreamError;
}

/**
 * Error codes of the app protocol (/ws) after which a request is tried again: no answer
 * (`disconnected`, `timeout`, `too_many_requests` in flight), a runtime restarting, an
 * overloaded daemon. Shared by subscriptions and submissions; not exported by the package.
 */
export const RETRY_CODES: ReadonlySet<string> = new Set([
  'unavailable',
  'resource_exhausted',
  'timeout',
  'disconnected',
  'misdirected',
  'too_many_requests',
]);
