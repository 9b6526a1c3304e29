// One pane: an agent's header, its virtualized timeline (committed rows, then the live head,
// then pending submissions) and the composer.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';
import type { Row } from '../core/timeline';
import type { Attachment, WhileRunning } from '../core/types';
import { Changes, type WorktreeDirectory } from './Changes';
import { History } from './History';
import type { DaemonHttp } from '../core/daemon_http';
import { askNotificationPermissionOnce } from './notify';
import { MemoRow, rowLabel, type RowActions } from './Rows';
import { VirtualList } from './VirtualList';

// An attached image is sent inline in the WebSocket message (1 MiB per message).
const MAX_IMAGE_BYTES = 700 * 1024;

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
}

export function Pane({
  engine,
  http,
  worktrees,
  paneId,
  agentId,
  jump,
  onLeaveHistory,
  focused,
  onFocus,
  onClose,
  openInOtherPane,
  openAgents,
}: PaneProps) {
  useEffect(() => {
    engine.setPaneAgent(paneId, agentId);
    return () => engine.setPaneAgent(paneId, null);
  }, [engine, paneId, agentId]);

  if (!agentId) {
    return (
      <section class={`pane ${focused ? 'focused' : ''}`} data-testid="pane" onMouseDown={onFocus}>
        <div class="pane-empty">
          <span class="wide-only">Pick an agent on the left, or create one.</span>
          <button type="button" class="primary narrow-only" onClick={openAgents} data-testid="open-agents">
            Agents: pick or create one
          </button>
        </div>
      </section>
    );
  }
  return (
    <AgentPane
      key={agentId}
      engine={engine}
      http={http}
      worktrees={worktrees}
      agentId={agentId}
      jump={jump}
      onLeaveHistory={onLeaveHistory}
      focused={focused}
      onFocus={onFocus}
      onClose={onClose}
      openInOtherPane={openInOtherPane}
    />
  );
}

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
  const tl = engine.timeline(agentId);
  const lanes = tl.lanes();
  const items = useMemo(() => [...lanes.rows, ...(lanes.head ? [lanes.head] : []), ...lanes.pending], [lanes]);
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
        <span class="muted">{agent ? `${agent.provider} · ${agent.cwd}` : ''}</span>
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
      />
    </section>
  );
}

// The agent's title, edited in place: Enter saves (`agents.rename`), Escape cancels.
function TitleEditor({ initial, onSave, onDone }: { initial: string; onSave(title: string): Promise<unknown>; onDone(): void }) {
  const [value, setValue] = useState(initial);
  const [error, setError] = useState('');
  const [saving, setSaving] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const save = async () => {
    if (saving) return;
    if (value.trim() === initial) return onDone();
    setSaving(true);
    try {
      await onSave(value.trim());
      onDone();
    } catch (err) {
      setError(String((err as Error)?.message ?? err));
      setSaving(false);
    }
  };
  return (
    <span class="title-editor">
      <input
        ref={input}
        value={value}
        maxLength={256}
        aria-label="Agent title"
        data-testid="title-input"
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            void save();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onDone();
          }
        }}
        onBlur={() => {
          if (!error) onDone();
        }}
      />
      {error ? (
        <span class="error-text" data-testid="title-error">
          {error}
        </span>
      ) : null}
    </span>
  );
}

// The pending permission request, pinned above the composer so it cannot scroll out of sight:
// what the tool wants to do, and its options as buttons (the same answer as the row's).
function PermissionBanner({ rows, head, actions }: { rows: Row[]; head: Row | null; actions: RowActions }) {
  let pending: Row | undefined;
  for (let i = rows.length - 1; i >= 0 && !pending; i--) {
    const it = rows[i].item;
    if (it.kind === 'permission' && !it.decision) pending = rows[i];
  }
  if (!pending && head?.item.kind === 'permission' && !head.item.decision) pending = head;
  const item = pending?.item;
  const options: { id: string; kind: string; label: string }[] = item?.options?.length
    ? item.options
    : [
        { id: 'allow_once', kind: 'allow_once', label: 'Allow' },
        { id: 'reject_once', kind: 'reject_once', label: 'Deny' },
      ];
  const what = item ? item.title || `Use ${item.toolName ?? 'a tool'}?` : 'The agent is waiting for your permission.';
  const detail = item?.input && typeof item.input === 'object' ? (item.input.command ?? item.input.file_path ?? '') : '';
  return (
    <div class="permission-banner" role="alert" data-testid="permission-banner">
      <div class="permission-what">
        <strong>Permission needed:</strong> {what} {detail ? <code>{String(detail)}</code> : null}
      </div>
      {item ? (
        <div class="item-actions">
          {options.map((o) => (
            <button
              type="button"
              key={o.id}
              class={o.kind.startsWith('allow') ? 'primary' : ''}
              data-testid={`prompt-${o.kind}`}
              onClick={() => actions.answer(item.requestId, o.kind.startsWith('allow') ? 'allow' : 'deny', o.id)}
            >
              {o.label}
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
}

function Composer({
  onSend,
  onInterrupt,
  running,
  autofocus,
}: {
  onSend(text: string, attachments: Attachment[], whileRunning: WhileRunning): void;
  onInterrupt(): void;
  running: boolean;
  autofocus: boolean;
}) {
  const [text, setText] = useState('');
  const [images, setImages] = useState<Attachment[]>([]);
  const [mode, setMode] = useState<WhileRunning>('queue');
  const [error, setError] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (autofocus) area.current?.focus();
  }, [autofocus]);

  const send = () => {
    if (!text.trim() && images.length === 0) return;
    onSend(text, images, mode);
    setText('');
    setImages([]);
  };
  const addFiles = async (files: FileList | File[]) => {
    for (const f of Array.from(files)) {
      if (!f.type.startsWith('image/')) continue;
      if (f.size > MAX_IMAGE_BYTES) {
        setError(`${f.name} is larger than ${MAX_IMAGE_BYTES / 1024} KiB`);
        continue;
      }
      const data = await new Promise<string>((resolve) => {
        const r = new FileReader();
        r.onload = () => resolve(String(r.result).split(',')[1] ?? '');
        r.readAsDataURL(f);
      });
      setImages((prev) => [...prev, { kind: 'image', mimeType: f.type, name: f.name, data }]);
    }
  };

  return (
    <div class="composer">
      {images.length ? (
        <div class="attachments">
          {images.map((a, i) => (
            <span class="chip" key={i}>
              <img alt={a.name} src={`data:${a.mimeType};base64,${a.data}`} />
              <button type="button" aria-label={`Remove ${a.name}`} onClick={() => setImages(images.filter((_, j) => j !== i))}>
                ×
              </button>
            </span>
          ))}
        </div>
      ) : null}
      {error ? <div class="error-text">{error}</div> : null}
      <textarea
        ref={area}
        data-testid="composer"
        rows={3}
        placeholder="Message (Enter sends, Shift+Enter new line, Escape interrupts)"
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onPaste={(e) => {
          const files = e.clipboardData?.files;
          if (files && files.length) void addFiles(files);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onInterrupt();
          }
        }}
      />
      <div class="composer-bar">
        <label>
          While running:{' '}
          <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as WhileRunning)}>
            <option value="queue">queue</option>
            <option value="interrupt">interrupt</option>
            <option value="steer">steer</option>
          </select>
        </label>
        <label class="file">
          Image
          <input
            type="file"
            accept="image/*"
            multiple
            data-testid="attach"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              if (input.files) void addFiles(input.files);
              input.value = '';
            }}
          />
        </label>
        <span class="spacer" />
        {running ? (
          <button type="button" onClick={onInterrupt} data-testid="interrupt">
            Interrupt
          </button>
        ) : null}
        <button type="button" class="primary" onClick={send} data-testid="send">
          Send
        </button>
      </div>
    </div>
  );
}
