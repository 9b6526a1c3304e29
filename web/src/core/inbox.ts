// The "needs you" inbox (docs/web.md, "The inbox"): across every agent, the ones waiting for
// permission, and the failed or finished ones not seen yet. Seen is per browser: the cursor an
// agent had when it was last shown in a visible pane while not running, kept in localStorage for
// at most MAX_SEEN_AGENTS agents. An agent this browser meets for the first time while idle
// starts seen (its past is not news); one first met while running is news when it finishes.
import type { AgentSnapshot } from '@agentstream/client';
import type { KeyValueStore } from './auth';

export const SEEN_KEY = 'agentstream.seen';
export const MAX_SEEN_AGENTS = 500;

export type InboxKind = 'permission' | 'failed' | 'finished';

export interface InboxEntry {
  agent: AgentSnapshot;
  kind: InboxKind;
}

const RANK: Record<InboxKind, number> = { permission: 0, failed: 1, finished: 2 };

export class SeenCursors {
  private readonly map = new Map<string, string>();

  constructor(private readonly store: KeyValueStore | null) {
    try {
      const v = JSON.parse(store?.getItem(SEEN_KEY) ?? '{}');
      if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) if (typeof c === 'string') this.map.set(k, c);
    } catch {
      // unreadable: start empty
    }
  }

  get(agent: string): string | undefined {
    return this.map.get(agent);
  }

  has(agent: string): boolean {
    return this.map.has(agent);
  }

  // Records the agent's cursor as seen; returns true when that changed anything.
  mark(agent: string, cursor: string): boolean {
    if (this.map.get(agent) === cursor) return false;
    this.map.delete(agent); // re-inserted last: the oldest entries come first
    this.map.set(agent, cursor);
    while (this.map.size > MAX_SEEN_AGENTS) this.map.delete(this.map.keys().next().value!);
    this.save();
    return true;
  }

  private save(): void {
    try {
      this.store?.setItem(SEEN_KEY, JSON.stringify(Object.fromEntries(this.map)));
    } catch {
      // storage full or denied: seen lasts for this page only
    }
  }
}

const busy = (a: AgentSnapshot) => a.status === 'running' || a.status === 'permission';

// Meets the listed agents: one met for the first time while not busy starts seen.
export function meetAgents(seen: SeenCursors, agents: Iterable<AgentSnapshot>): void {
  for (const a of agents) if (!seen.has(a.id) && !busy(a)) seen.mark(a.id, a.cursor);
}

// The entries, permission first, then failed, then finished; newest agents first within each.
export function inboxEntries(agents: Iterable<AgentSnapshot>, seen: SeenCursors): InboxEntry[] {
  const out: InboxEntry[] = [];
  for (const a of agents) {
    if (a.status === 'permission') out.push({ agent: a, kind: 'permission' });
    else if (a.status === 'running') continue;
    else if (seen.get(a.id) !== a.cursor) out.push({ agent: a, kind: a.status === 'error' ? 'failed' : 'finished' });
  }
  return out.sort((x, y) => RANK[x.kind] - RANK[y.kind] || y.agent.createdAt - x.agent.createdAt);
}
