// What the page knows about its own standing, shown by App: how it is signed in, the outcome of a
// pairing it was opened with, whether its device token was revoked, whether a new build of the
// page took over (the service worker updated).
import type { Credential } from '../core/auth';

export class PageSession {
  revoked = false;
  updated = false;
  // An attempt to reach the daemon failed and none has succeeded since.
  unreachable = false;
  // Counts the changes, so that a subscriber can tell whether it missed one.
  version = 0;
  private readonly fns = new Set<() => void>();

  constructor(
    readonly credential: Credential,
    public pairing: { ok: boolean; message: string } | null,
  ) {}

  subscribe(fn: () => void): () => void {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  }

  set(change: Partial<Pick<PageSession, 'revoked' | 'updated' | 'pairing' | 'unreachable'>>): void {
    Object.assign(this, change);
    this.version++;
    for (const fn of this.fns) fn();
  }
}
