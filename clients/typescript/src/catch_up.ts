// The pages that bring a copy of an agent's timeline to the daemon's tail (docs/protocol.md,
// "Timeline"): with no cursor, the tail page; with one, every `after` page from it until one says
// `hasNewer: false`. Over any transport: `AgentstreamHttp.timelinePages` fetches over HTTP, the
// web page's sync engine over the WebSocket (with its own per-page watchdog, kicked at each page).
import type { TimelinePage } from './types.js';

/** What the paging reads of a page: a `TimelinePage`, or a caller's own type of one. */
export type PageBounds = Pick<TimelinePage, 'hasNewer' | 'endCursor'>;

/** One page fetch: `tail` (no cursor) or `after` a cursor. Rejects as its transport does. */
export type PageFetch<P extends PageBounds = TimelinePage> = (direction: 'tail' | 'after', cursor?: string) => Promise<P>;

/**
 * Yields the tail page when `cursor` is absent; else the `after` pages from `cursor`, each from
 * the previous one's `endCursor`, up to the first with `hasNewer: false`. A page with `reset:
 * true` (the cursor's epoch was replaced) is yielded and paging goes on from its end. A page
 * that does not move the cursor ends the paging (a daemon answering so would otherwise be asked
 * forever). A fetch's rejection is thrown from the iterator; stopping the iteration (`break`,
 * `return`) fetches nothing more.
 */
export async function* catchUpPages<P extends PageBounds = TimelinePage>(fetch: PageFetch<P>, cursor?: string): AsyncGenerator<P> {
  if (!cursor) {
    yield await fetch('tail');
    return;
  }
  for (;;) {
    const page = await fetch('after', cursor);
    yield page;
    if (!page.hasNewer || page.endCursor === cursor) return;
    cursor = page.endCursor;
  }
}
