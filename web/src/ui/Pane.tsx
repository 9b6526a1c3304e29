// One pane: an agent's header, its virtualized timeline (committed rows, then the live head,
// then pending submissions), or its Changes or the history around a search hit, and the
// composer with the agent's mode, model and thinking pickers and its slash commands.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';
import type { Row } from '../core/timeline';
import type { DaemonHttp } from '../core/daemon_http';
import { AgentSettings } from './AgentSettings';
import { Changes, type WorktreeDirectory } from './Changes';
import { Composer } from './Composer';
import { History } from './History';
import { askNotificationPermissionOnce } from './notify';
import { PermissionBanner } from './PermissionBanner';
import { MemoRow, rowLabel, type RowActions } from './Rows';
import { TitleEditor } from './TitleEditor';
import { VirtualList } from './VirtualList';
import { formatUsage, sumUsage } from './usage';

export interface PaneProps {
  engine: SyncEngine;
  http: DaemonHttp;
  worktrees: WorktreeDirectory;
  paneId: string;
  agentId: string | null;
  jump?: string;
  onLeaveHistory(): void;
  focused: boolean;
  onFocus(): void;
  onClose(): void;
  openInOtherPane(agentId: string): void;
  openAgents(): void;
  // What an empty pane shows above its hint (the inbox, on a phone).
  home?: ComponentChildren;
}

export function Pane({ engine, paneId, agentId, focused, onFocus, openAgents, home, ...rest }: PaneProps) {
  useEffect(() => {
    engine.setPaneAgent(paneId, agentId);
    return () => engine.setPaneAgent(paneId, null);
  }, [engine, paneId, agentId]);

  if (!agentId) {
    return (
      <section class={`pane ${focused ? 'focused' : ''}`} data-testid="pane" onMouseDown={onFocus}>
        <div class={`pane-empty ${home ? 'pane-home' : ''}`}>
          {home}
          <span class="wide-only">Pick an agent on the left, or create one.</span>
          <button type="button" class="primary narrow-only" onClick={openAgents} data-testid="open-agents">
            Agents: pick or create one
          </button>
        </div>
      </section>
    );
  }
  return <AgentPane key={agentId} engine={engine} agentId={agentId} focused={focused} onFocus={onFocus} {...rest} />;
}

const NO_COMMANDS: never[] = [];

function AgentPane({
  engine,
  http,
  worktrees,
  agentId,
  jump,
  onLeaveHistory,
  focused,
  onFocus,
  onClose,
  openInOtherPane,
}: Omit<PaneProps, 'paneId' | 'agentId' | 'openAgents'> & { agentId: string }) {
  const agent = engine.agents.get(agentId);
  const capabilities = engine.capabilities(agentId);
  const tl = engine.timeline(agentId);
  const lanes = tl.lanes();
  const items = useMemo(() => [...lanes.rows, ...(lanes.head ? [lanes.head] : []), ...lanes.pending], [lanes]);
  const usage = useMemo(() => sumUsage(lanes.rows), [lanes]);
  const loadingOlder = useRef(false);
  const onNearTop = useCallback(() => {
    if (loadingOlder.current || !tl.hasOlder) return;
    loadingOlder.current = true;
    engine.loadOlder(agentId).finally(() => (loadingOlder.current = false));
  }, [engine, agentId, tl]);

  const actions: RowActions = {
    fork: async (row) => {
      const child = await engine.fork(agentId, row.epoch, row.item.seqEnd);
      openInOtherPane(child.id);
    },
    rewind: async (row) => {
      if (!confirm('Rewind this agent to this message? Later history moves to an old epoch.')) return;
      await engine.rewind(agentId, row.epoch, row.item.seqEnd);
    },
    answer: (requestId, decision, optionId) => void engine.replyPermission(agentId, requestId, decision, optionId),
    submission: (cmid) => engine.submissions.get(cmid),
  };
  const open = engine.submissions.openFor(agentId).filter((s) => s.rpc !== 'failed');
  const working = agent?.status === 'running' || agent?.status === 'permission' || open.length > 0;
  const sync = engine.syncState(agentId);
  const [hasWorktree, setHasWorktree] = useState(false);
  const [view, setView] = useState<'conversation' | 'changes'>('conversation');
  useEffect(() => {
    let live = true;
    void worktrees.has(agentId).then((has) => live && setHasWorktree(has));
    return () => {
      live = false;
    };
  }, [worktrees, agentId]);
  // Alt+C switches the focused pane between the conversation and the changes.
  useEffect(() => {
    if (!focused || !hasWorktree) return;
    const on = (e: KeyboardEvent) => {
      if (e.altKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyC') {
        e.preventDefault();
        setView((v) => (v === 'changes' ? 'conversation' : 'changes'));
      }
    };
    window.addEventListener('keydown', on);
    return () => window.removeEventListener('keydown', on);
  }, [focused, hasWorktree]);
  const showChanges = hasWorktree && view === 'changes';
  const showHistory = !showChanges && !!jump;
  const [renaming, setRenaming] = useState(false);
  useEffect(() => {
    if (!focused) return;
    const on = (e: KeyboardEvent) => {
      if (e.key === 'F2') {
        e.preventDefault();
        setRenaming(true);
      }
    };
    window.addEventListener('keydown', on);
    return () => window.removeEventListener('keydown', on);
  }, [focused]);

  return (
    <section
      class={`pane ${focused ? 'focused' : ''}`}
      data-testid="pane"
      data-agent={agentId}
      onMouseDown={onFocus}
      onFocusCapture={onFocus}
    >
      <header class="pane-header">
        <span class={`status status-${agent?.status ?? 'idle'}`} data-testid="pane-status">
          {agent?.status === 'permission' ? 'permission' : (agent?.status ?? '…')}
        </span>
        {renaming ? (
          <TitleEditor
            initial={agent?.title ?? ''}
            onDone={() => setRenaming(false)}
            onSave={(title) => engine.renameAgent(agentId, title)}
          />
        ) : (
          <button type="button" class="pane-title" title="Rename (F2)" onClick={() => setRenaming(true)} data-testid="pane-title">
            {agent?.title || agentId}
          </button>
        )}
        <span class="muted">
          {agent ? `${agent.provider} · ${agent.cwd}${agent.imported ? ` · imported from ${agent.imported}` : ''}` : ''}
        </span>
        {agent?.usage && (agent.usage.inputTokens > 0 || agent.usage.outputTokens > 0) ? (
          <span class="muted usage-total" data-testid="usage-total" title="Usage of every turn of this agent">
            {formatUsage(agent.usage)}
          </span>
        ) : !agent?.usage && usage.turns > 0 ? (
          <span
            class="muted usage-total"
            data-testid="usage-total"
            title={`Usage of the ${usage.turns} turns in the loaded history${tl.hasOlder ? ' (older turns not loaded)' : ''}`}
          >
            {formatUsage(usage)}
            {tl.hasOlder ? '+' : ''}
          </span>
        ) : null}
        <span class="muted sync" data-testid="sync-state">
          {engine.connected ? sync : 'offline'}
        </span>
        <button type="button" class="icon" aria-label="Close pane" onClick={onClose}>
          ×
        </button>
      </header>
      {hasWorktree ? (
        <div class="pane-tabs" role="tablist">
          <button
            type="button"
            role="tab"
            aria-selected={!showChanges}
            class={!showChanges ? 'tab on' : 'tab'}
            onClick={() => setView('conversation')}
            data-testid="tab-conversation"
          >
            Conversation
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={showChanges}
            class={showChanges ? 'tab on' : 'tab'}
            onClick={() => setView('changes')}
            data-testid="tab-changes"
          >
            Changes
          </button>
        </div>
      ) : null}
      {showChanges ? <Changes http={http} agentId={agentId} status={agent?.status ?? 'idle'} /> : null}
      {showHistory ? (
        <History engine={engine} agentId={agentId} cursor={jump!} actions={actions} onBack={onLeaveHistory} />
      ) : null}
      {!showChanges && !showHistory && tl.hasOlder ? (
        <button type="button" class="older" onClick={onNearTop}>
          Load older
        </button>
      ) : null}
      {!showChanges && !showHistory ? (
        <VirtualList<Row>
          items={items}
          keyOf={(r) => r.id}
          render={(r) => <MemoRow row={r} actions={actions} label={rowLabel(r, actions)} />}
          onNearTop={onNearTop}
          testId="timeline"
        />
      ) : null}
      {agent?.status === 'permission' ? <PermissionBanner rows={lanes.rows} head={lanes.head} actions={actions} /> : null}
      <div class="footer" data-testid="working" aria-live="polite">
        {working ? (agent?.status === 'permission' ? 'Waiting for your permission…' : 'Working…') : ''}
      </div>
      <Composer
        onSend={(text, attachments, whileRunning) => {
          askNotificationPermissionOnce();
          engine.dispatch(agentId, text, attachments, whileRunning);
        }}
        onInterrupt={() => void engine.interrupt(agentId).catch(() => {})}
        running={agent?.status === 'running' || agent?.status === 'permission'}
        autofocus={focused}
        commands={capabilities?.commands ?? NO_COMMANDS}
        toolbar={
          <AgentSettings
            agent={agent}
            capabilities={capabilities}
            onSet={(option, value) => engine.setOption(agentId, option, value)}
          />
        }
      />
    </section>
  );
}
