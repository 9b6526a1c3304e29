// Bounded exponential backoff with jitter, and an abortable sleep.
import { AgentstreamError } from './errors.js';

export interface BackoffOptions {
  /** First delay (ms). Default 100. */
  minDelayMs?: number;
  /** Largest delay (ms). Default 5000. */
  maxDelayMs?: number;
}

export class Backoff {
  private attempt = 0;
  private readonly min: number;
  private readonly max: number;
  constructor(opts: BackoffOptions = {}) {
    this.min = opts.minDelayMs ?? 100;
    this.max = Math.max(this.min, opts.maxDelayMs ?? 5000);
  }
  /** The next delay: min * 2^n capped at max, with up to 25% jitter off it. */
  next(): number {
    const base = Math.min(this.max, this.min * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(base * (0.75 + Math.random() * 0.25));
  }
  reset(): void {
    this.attempt = 0;
  }
  get failures(): number {
    return this.attempt;
  }
}

export function abortError(signal?: AbortSignal): AgentstreamError {
  const reason = signal?.reason;
  return new AgentstreamError('aborted', reason instanceof Error ? reason.message : 'aborted', 0, { cause: reason });
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function newId(prefix = 'c'): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return `${prefix}_${c.randomUUID()}`;
  return `${prefix}_${Date.now().toString(36)}${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
}
