// The "needs you" inbox (docs/web.md, "The inbox"): the agents waiting for permission, with
// the answer one tap away (the same `permission.reply` as the pinned prompt), then the failed
// and finished ones not seen yet. On a phone it is the home screen (the empty pane); on a wide
// screen it heads the agent list. When the daemon cannot be reached it says how old the list is.
import type { SyncEngine } from '../core/sync';
import type { InboxEntry } from '../core/inbox';
import type { AgentSnapshot } from '@agentstream/client';

export function relativeTime(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ms).toLocaleDateString();
}

// The option of the pending permission request that matches `decision`, when the agent's
// timeline is loaded; else the daemon applies the decision with the provider's default option.
function optionFor(engine: SyncEngine, agent: AgentSnapshot, requestId: string, decision: 'allow' | 'deny'): string | undefined {
  const lanes = engine.timelines.get(agent.id)?.lanes();
  const rows = lanes ? [...lanes.rows, ...(lanes.head ? [lanes.head] : [])] : [];
  const item = rows.map((r) => r.item).find((i) => i.kind === 'permission' && i.requestId === requestId);
  const options: { id: string; kind: string }[] = item?.options ?? [];
  return options.find((o) => o.kind === (decision === 'allow' ? 'allow_once' : 'reject_once'))?.id;
}

export function StaleNote({ since }: { since: number | null }) {
  return (
    <div class="stale" data-testid="stale" role="status">
      Offline: the daemon cannot be reached.{' '}
      {since !== null
        ? `Showing the agents as last confirmed ${new Date(since).toLocaleTimeString()} (${relativeTime(since)}).`
        : 'No agents known yet in this browser.'}
    </div>
  );
}

const LABEL: Record<InboxEntry['kind'], string> = {
  permission: 'needs permission',
  failed: 'failed',
  finished: 'finished',
};

export function Inbox({
  engine,
  entries,
  stale,
  staleSince,
  onOpen,
}: {
  engine: SyncEngine;
  entries: InboxEntry[];
  stale: boolean;
  staleSince: number | null;
  onOpen(agentId: string): void;
}) {
  return (
    <section class="inbox" data-testid="inbox" aria-label="Needs you">
      <h2>
        Needs you <span class="muted">{entries.length || ''}</span>
      </h2>
      {stale ? <StaleNote since={staleSince} /> : null}
      {entries.length === 0 ? (
        <div class="muted inbox-empty" data-testid="inbox-empty">
          {stale ? 'Nothing needed you when the list was last confirmed.' : 'Nothing needs you right now.'}
        </div>
      ) : (
        <ul class="inbox-list">
          {entries.map((e) => {
            const request = e.agent.permissions[0];
            const answer = (decision: 'allow' | 'deny') =>
              void engine
                .replyPermission(
                  e.agent.id,
                  request!.requestId,
                  decision,
                  optionFor(engine, e.agent, request!.requestId, decision),
                )
                .catch(() => {});
            return (
              <li
                key={e.agent.id}
                class={`inbox-entry inbox-${e.kind}`}
                data-testid="inbox-entry"
                data-agent={e.agent.id}
                data-kind={e.kind}
              >
                <button type="button" class="inbox-open" onClick={() => onOpen(e.agent.id)}>
                  <span class={`status status-${e.agent.status}`}>{LABEL[e.kind]}</span>
                  <span class="agent-title">{e.agent.title || e.agent.id}</span>
                  {e.kind === 'permission' && request?.toolName ? (
                    <span class="muted">wants to use {request.toolName}</span>
                  ) : null}
                </button>
                {e.kind === 'permission' && request && !stale ? (
                  <span class="item-actions">
                    <button type="button" class="primary" onClick={() => answer('allow')} data-testid="inbox-allow">
                      Allow
                    </button>
                    <button type="button" onClick={() => answer('deny')} data-testid="inbox-deny">
                      Deny
                    </button>
                  </span>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
