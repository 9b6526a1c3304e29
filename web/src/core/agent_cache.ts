// The last known agents, kept in this browser so the page opens with them when the daemon cannot
// be reached (offline, a phone on a train): at most MAX_CACHED_AGENTS snapshots (the newest by
// creation) and when they were last confirmed by the daemon. Shown marked stale until the daemon
// answers again. Cleared when this device is revoked.
import type { AgentSnapshot } from '@agentstream/client';
import type { KeyValueStore } from './auth';

export const AGENT_CACHE_KEY = 'agentstream.agents';
export const MAX_CACHED_AGENTS = 200;

export interface CachedAgents {
  confirmedMs: number;
  agents: AgentSnapshot[];
}

// The fields a stale list shows; the queue and permissions are dropped (they are live state), and
// the capabilities (up to 200 commands with descriptions per agent: they would crowd the
// browser's storage, and nothing can be set without the daemon anyway).
function summary(a: AgentSnapshot): AgentSnapshot {
  return { ...a, queue: [], permissions: [], capabilities: null };
}

export function saveAgents(store: KeyValueStore, agents: Iterable<AgentSnapshot>, confirmedMs: number): void {
  const newest = [...agents].sort((a, b) => b.createdAt - a.createdAt).slice(0, MAX_CACHED_AGENTS);
  const value: CachedAgents = { confirmedMs, agents: newest.map(summary) };
  try {
    store.setItem(AGENT_CACHE_KEY, JSON.stringify(value));
  } catch {
    // storage full or denied: the page works without its offline list
  }
}

export function loadAgents(store: KeyValueStore): CachedAgents | null {
  try {
    const v = JSON.parse(store.getItem(AGENT_CACHE_KEY) ?? 'null');
    if (!v || typeof v.confirmedMs !== 'number' || !Array.isArray(v.agents)) return null;
    const agents = (v.agents as AgentSnapshot[])
      .filter((a) => a && typeof a.id === 'string' && typeof a.status === 'string')
      .slice(0, MAX_CACHED_AGENTS);
    return { confirmedMs: v.confirmedMs, agents };
  } catch {
    return null;
  }
}

export function clearAgents(store: KeyValueStore): void {
  store.removeItem(AGENT_CACHE_KEY);
}
