// What the service worker does with a push message (docs/web.md, "Notifications"), without the
// worker's APIs so the unit tests can run it: read the payload the daemon sends, decide whether
// it is newer than what was already shown for its agent, and build the notification.
import { compareCursors, parseCursor } from '@agentstream/client';

export type NoticeKind = 'permission' | 'turnFailed' | 'turnFinished' | 'autonomousFinished' | 'queueWaiting';

const KINDS: readonly NoticeKind[] = ['permission', 'turnFailed', 'turnFinished', 'autonomousFinished', 'queueWaiting'];

// A push payload is at most 3 KiB (the daemon's bound); a larger one is not read.
export const MAX_PUSH_BYTES = 3072;

export interface PushNotice {
  agent: string;
  cursor: string;
  kind: NoticeKind;
  title: string;
  body: string;
  url: string; // always a path of this origin: /#agent=...&cursor=...
}

const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

// The payload as a notice, or null when it is not one (not JSON, a member missing or of the
// wrong type, an unknown kind, a malformed cursor or agent id).
export function parsePush(text: string | null | undefined): PushNotice | null {
  if (!text || text.length > MAX_PUSH_BYTES) return null;
  let v: any;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const { agent, cursor, kind, title, body } = v;
  if (typeof agent !== 'string' || !AGENT_ID.test(agent)) return null;
  if (typeof cursor !== 'string' || !/^\d+:\d+$/.test(cursor)) return null;
  if (!KINDS.includes(kind)) return null;
  return {
    agent,
    cursor,
    kind,
    title: typeof title === 'string' && title ? title.slice(0, 200) : agent,
    body: typeof body === 'string' ? body.slice(0, 300) : '',
    // Never a URL the payload names: the page's own link to the agent at the item.
    url: agentUrl(agent, cursor),
  };
}

export function agentUrl(agent: string, cursor: string): string {
  return `/#agent=${encodeURIComponent(agent)}&cursor=${encodeURIComponent(cursor)}`;
}

// True when `cursor` is after the last cursor shown for the agent (none shown: true). A cursor
// equal to or before it was shown already, or is older than what was: dropped.
export function isNewer(lastShown: string | null, cursor: string): boolean {
  if (!lastShown || !/^\d+:\d+$/.test(lastShown)) return true;
  return compareCursors(parseCursor(cursor), parseCursor(lastShown)) > 0;
}

const KIND_TEXT: Record<NoticeKind, string> = {
  permission: 'needs your permission',
  turnFailed: 'failed',
  turnFinished: 'finished',
  autonomousFinished: 'finished its work',
  queueWaiting: 'has queued messages waiting',
};

// The title line of the notification: the agent's title and what happened.
export function noticeTitle(n: PushNotice): string {
  return `${n.title} ${KIND_TEXT[n.kind]}`;
}
