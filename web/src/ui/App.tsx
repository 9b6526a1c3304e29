// The page: the agents list (live status, provider, title, cwd, last activity, unread marker;
// create, close), the "needs you" inbox, and two or more panes side by side. Under 720 px wide
// (a phone) one pane fills the screen, the agent list is a drawer opened from the top bar, and
// the inbox is the home screen (the empty pane). Keyboard shortcuts: Help.tsx. Without the
// daemon the page shows the last known agents (core/agent_cache.ts), marked stale.
import { memo } from 'preact/compat';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';
import type { WsTransport } from '../core/transport';
import type { AgentSnapshot, CatalogAgent } from '@agentstream/client';
import type { DaemonHttp } from '../core/daemon_http';
import type { CachedAgents } from '../core/agent_cache';
import { parseFragment } from '../core/auth';
import { inboxEntries, meetAgents, type SeenCursors } from '../core/inbox';
import { WorktreeDirectory } from './Changes';
import { Inbox, relativeTime, StaleNote } from './Inbox';
import { SchedulesOverlay } from './Schedules';
import type { PageSession } from './session';
import { SettingsOverlay } from './Settings';
import { handleShortcut, HelpOverlay } from './Help';
import { Pane } from './Pane';
import { SearchBox } from './Search';
import { renderStats, useChanges, useEngine } from './useEngine';

interface PaneState {
  id: string;
  agentId: string | null;
  // A search hit being shown: the history around this cursor instead of the live timeline.
  jump?: string;
}

const MAX_PANES = 4;

const NARROW = '(max-width: 720px)';

// True while the window is phone-sized (the layout's breakpoint, style.css).
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const q = window.matchMedia(NARROW);
    const on = () => setNarrow(q.matches);
    q.addEventListener('change', on);
    return () => q.removeEventListener('change', on);
  }, []);
  return narrow;
}

export function App({
  engine,
  transport,
  http,
  session,
  cached,
  seenStore,
}: {
  engine: SyncEngine;
  transport: WsTransport;
  http: DaemonHttp;
  session: PageSession;
  cached: CachedAgents | null;
  seenStore: SeenCursors;
}) {
  useEngine(engine);
  useChanges(session, false); // revoked, updated, pairing dismissed, the daemon out of reach
  const narrow = useNarrow();
  const [worktrees] = useState(() => new WorktreeDirectory(http));
  renderStats.app++;
  const [panes, setPanes] = useState<PaneState[]>([
    { id: 'p1', agentId: null },
    { id: 'p2', agentId: null },
  ]);
  const [focused, setFocused] = useState('p1');
  // Last activity: when an agent's replica last changed (or its creation), kept without state so
  // a streaming agent does not cost a second render per change.
  const activity = useRef(new Map<string, { version: number; at: number }>());
  const lastActivity = new Map<string, number>();
  for (const [id, tl] of engine.timelines) {
    const seen = activity.current.get(id);
    if (!seen || seen.version !== tl.version) activity.current.set(id, { version: tl.version, at: Date.now() });
    lastActivity.set(id, activity.current.get(id)!.at);
  }

  const [drawer, setDrawer] = useState(false);
  const [help, setHelp] = useState(false);
  const [settings, setSettings] = useState(false);
  const [schedules, setSchedules] = useState(false);
  const focusedAgent = panes.find((p) => p.id === focused)?.agentId ?? null;
  useEffect(() => engine.setFocusedAgent(focusedAgent), [engine, focusedAgent]);

  // Unread: the agent's log moved on (its snapshot cursor changed) since it was last shown in a
  // pane. An agent first seen in the list starts read.
  const seen = useRef(new Map<string, string>());
  const shownAgents = new Set(panes.map((p) => p.agentId).filter((a): a is string => !!a));
  for (const a of engine.agents.values()) {
    if (!seen.current.has(a.id) || shownAgents.has(a.id)) seen.current.set(a.id, a.cursor);
  }
  const unread = (a: AgentSnapshot) => !shownAgents.has(a.id) && seen.current.get(a.id) !== a.cursor;

  const openAgent = (agentId: string, paneId = focused, jump?: string) => {
    setPanes((ps) => ps.map((p) => (p.id === paneId ? { ...p, agentId, jump } : p)));
    setDrawer(false);
  };
  const openInOtherPane = (fromPane: string) => (agentId: string) => {
    const other = panes.find((p) => p.id !== fromPane && !p.agentId) ?? panes.find((p) => p.id !== fromPane);
    if (other) openAgent(agentId, other.id);
    else addPane(agentId);
  };
  const addPane = (agentId: string | null = null) => {
    if (panes.length >= MAX_PANES) return;
    const id = `p${Date.now()}`;
    setPanes((ps) => [...ps, { id, agentId }]);
    setFocused(id);
  };
  // The daemon's list once it answered; before that, the list this browser kept (stale).
  const listed = engine.confirmedMs !== null;
  const agents = (listed ? [...engine.agents.values()] : (cached?.agents ?? [])).sort((a, b) => b.createdAt - a.createdAt);
  // Stale: the connection that kept the list current dropped, or the daemon could not be reached
  // (not merely: the first connection is still being made).
  const stale = !engine.connected && (listed || session.unreachable);
  const staleSince = listed ? engine.confirmedMs : (cached?.confirmedMs ?? null);

  // Seen (for the inbox): an agent shown in a visible pane while not running, in a visible tab.
  if (listed) {
    meetAgents(seenStore, engine.agents.values());
    const visiblePanes = narrow ? panes.filter((p) => p.id === focused) : panes;
    if (document.visibilityState === 'visible' && engine.connected)
      for (const p of visiblePanes) {
        const a = p.agentId ? engine.agents.get(p.agentId) : undefined;
        if (a && a.status !== 'running' && a.status !== 'permission') seenStore.mark(a.id, a.cursor);
      }
  }
  // Before the daemon answered, from the list this browser kept (marked stale, no answers).
  const inbox = inboxEntries(agents, seenStore);

  // A link to an agent at an item (`#agent=ID&cursor=E:S`, what a notification's tap opens):
  // opened in the focused pane once connected, then removed from the address.
  const [link, setLink] = useState(() => parseFragment(location.hash));
  useEffect(() => {
    const on = () => setLink(parseFragment(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  useEffect(() => {
    if (!link.agent || !engine.connected) return;
    openAgent(link.agent, focused, link.cursor);
    setLink({});
    history.replaceState(null, '', location.pathname + location.search);
  });
  // The form does not depend on the engine's state: a stable handler (reading the latest
  // focused pane) keeps it out of the render of every streamed frame.
  const createLatest = useRef<(cfg: CreateConfig) => Promise<void>>(async () => {});
  createLatest.current = async (cfg) => {
    const a = await engine.createAgent(cfg);
    openAgent(a.id);
  };
  const onCreate = useCallback((cfg: CreateConfig) => createLatest.current(cfg), []);
  const waiting = agents.filter((a) => a.status === 'permission');
  useEffect(() => {
    document.title = waiting.length ? `(${waiting.length}) permission · agentstream` : 'agentstream';
  }, [waiting.length]);

  // Shortcuts (listed in Help.tsx). The latest state is read through a ref: one listener.
  const keys = useRef<(e: KeyboardEvent) => void>(() => {});
  keys.current = (e: KeyboardEvent) =>
    handleShortcut(e, {
      overlayOpen: help || drawer,
      closeOverlays: () => {
        setHelp(false);
        setDrawer(false);
      },
      toggleHelp: () => setHelp((h) => !h),
      openDrawer: () => setDrawer(true),
      agents: agents.map((a) => a.id),
      waiting: waiting.map((a) => a.id),
      focusedAgent,
      openAgent: (id) => openAgent(id),
      panes: panes.map((p) => p.id),
      focusPane: setFocused,
    });
  useEffect(() => {
    const on = (e: KeyboardEvent) => keys.current(e);
    window.addEventListener('keydown', on);
    return () => window.removeEventListener('keydown', on);
  }, []);

  return (
    <div class={`app ${drawer ? 'drawer-open' : ''}`}>
      <PageNotices session={session} />
      <header class="topbar">
        <button
          type="button"
          class="menu"
          aria-label="Agents"
          aria-expanded={drawer}
          onClick={() => setDrawer((d) => !d)}
          data-testid="menu"
        >
          ☰
        </button>
        <span class="topbar-title" data-testid="topbar-title">
          {(focusedAgent && engine.agents.get(focusedAgent)?.title) || focusedAgent || 'agentstream'}
        </span>
        {narrow ? (
          <button
            type="button"
            class="inbox-button"
            title="Needs you"
            onClick={() => setPanes((ps) => ps.map((p) => (p.id === focused ? { ...p, agentId: null, jump: undefined } : p)))}
            data-testid="inbox-button"
          >
            Inbox{inbox.length ? <span class="badge">{inbox.length}</span> : null}
          </button>
        ) : null}
        {waiting.length ? (
          <button
            type="button"
            class="permission-count"
            onClick={() => openAgent((waiting.find((a) => a.id !== focusedAgent) ?? waiting[0]).id)}
            data-testid="permission-count"
          >
            {waiting.length} waiting
          </button>
        ) : null}
        <span class={`conn-dot ${engine.connected ? 'on' : 'off'}`} title={engine.connected ? 'connected' : 'reconnecting'} />
        <button type="button" class="icon" aria-label="Keyboard shortcuts" onClick={() => setHelp(true)}>
          ?
        </button>
      </header>
      <div class="scrim" onClick={() => setDrawer(false)} />
      <aside class="sidebar" data-testid="sidebar">
        <div class="sidebar-head">
          <h1>agentstream</h1>
          <button
            type="button"
            class="icon help-button"
            aria-label="Keyboard shortcuts"
            onClick={() => setHelp(true)}
            data-testid="help-button"
          >
            ?
          </button>
        </div>
        <div class={`conn ${engine.connected ? 'on' : 'off'}`} data-testid="connection">
          {engine.connected ? 'connected' : 'reconnecting…'}
        </div>
        {stale && narrow ? <StaleNote since={staleSince} /> : null}
        {!narrow ? (
          <Inbox engine={engine} entries={inbox} stale={stale} staleSince={staleSince} onOpen={(id) => openAgent(id)} />
        ) : null}
        <SearchBox
          engine={engine}
          focusedAgent={focusedAgent}
          titleOf={(id) => engine.agents.get(id)?.title || id}
          onOpen={(hit) => openAgent(hit.agent, focused, hit.cursor)}
        />
        <CreateAgentForm http={http} onCreate={onCreate} />
        <ul class="agents" data-testid="agents">
          {agents.map((a) => (
            <AgentRow
              key={a.id}
              agent={a}
              activity={lastActivity.get(a.id) ?? a.createdAt}
              open={panes.some((p) => p.agentId === a.id)}
              unread={unread(a)}
              onOpen={() => openAgent(a.id)}
              onClose={() => void engine.closeAgent(a.id)}
            />
          ))}
        </ul>
        <button type="button" onClick={() => addPane()} disabled={panes.length >= MAX_PANES}>
          Add pane
        </button>
        <button type="button" class="muted-button" onClick={() => transport.drop()}>
          Reconnect
        </button>
        <button type="button" class="muted-button" onClick={() => setSettings(true)} data-testid="open-settings">
          Devices and notifications
        </button>
        <button type="button" class="muted-button" onClick={() => setSchedules(true)} data-testid="open-schedules">
          Schedules
        </button>
      </aside>
      <main class="panes" style={{ gridTemplateColumns: `repeat(${panes.length}, minmax(0, 1fr))` }}>
        {panes.map((p) => (
          <Pane
            key={p.id}
            engine={engine}
            http={http}
            worktrees={worktrees}
            paneId={p.id}
            agentId={p.agentId}
            jump={p.jump}
            onLeaveHistory={() => setPanes((ps) => ps.map((x) => (x.id === p.id ? { ...x, jump: undefined } : x)))}
            focused={p.id === focused}
            onFocus={() => setFocused(p.id)}
            onClose={() =>
              setPanes((ps) => (ps.length > 1 ? ps.filter((x) => x.id !== p.id) : ps.map((x) => ({ ...x, agentId: null }))))
            }
            openInOtherPane={openInOtherPane(p.id)}
            openAgents={() => setDrawer(true)}
            home={
              narrow && p.id === focused ? (
                <Inbox engine={engine} entries={inbox} stale={stale} staleSince={staleSince} onOpen={(id) => openAgent(id)} />
              ) : null
            }
          />
        ))}
      </main>
      {help ? <HelpOverlay onClose={() => setHelp(false)} /> : null}
      {settings ? <SettingsOverlay http={http} onClose={() => setSettings(false)} /> : null}
      {schedules ? (
        <SchedulesOverlay
          http={http}
          agents={agents.filter((a) => !a.closed)}
          providers={BUILT_IN_PROVIDERS}
          titleOf={(id) => engine.agents.get(id)?.title || id}
          onOpenAgent={(id) => {
            setSchedules(false);
            openAgent(id);
          }}
          onClose={() => setSchedules(false)}
        />
      ) : null}
    </div>
  );
}

function AgentRow({
  agent,
  activity,
  open,
  unread,
  onOpen,
  onClose,
}: {
  agent: AgentSnapshot;
  activity: number;
  open: boolean;
  unread: boolean;
  onOpen(): void;
  onClose(): void;
}) {
  const label = agent.status === 'permission' ? 'needs permission' : agent.status;
  return (
    <li
      class={`agent ${open ? 'open' : ''} ${unread ? 'unread' : ''} agent-${agent.status}`}
      data-testid="agent-row"
      data-agent={agent.id}
      data-status={agent.status}
      data-unread={unread ? 'true' : 'false'}
    >
      <button type="button" class="agent-open" onClick={onOpen}>
        <span class="agent-line">
          <span class={`status status-${agent.status}`}>{label}</span>
          {unread ? <span class="unread-dot" aria-label="new activity" data-testid="unread" /> : null}
        </span>
        <span class="agent-title" title={agent.id}>
          {agent.title || agent.id}
        </span>
        <span class="muted">
          {agent.provider} · {agent.cwd}
        </span>
        <span class="muted">{relativeTime(activity)}</span>
        {agent.forkedFrom ? <span class="muted">fork of {agent.forkedFrom.agent}</span> : null}
        {agent.imported ? (
          <span class="muted" data-testid="imported">
            imported from {agent.imported}
          </span>
        ) : null}
      </button>
      <button type="button" class="icon" aria-label={`Close agent ${agent.id}`} onClick={onClose}>
        ×
      </button>
    </li>
  );
}

// `worktree`: the agent runs in a git worktree of its own on a new branch (docs/workspaces.md).
type CreateConfig = {
  provider: string;
  cwd: string;
  title?: string;
  model?: string;
  mode?: string;
  worktree?: { branch?: string };
};

const CreateAgentForm = memo(CreateAgent);

// The providers every daemon has; the ACP agents installed on it come from its catalog.
const BUILT_IN_PROVIDERS = ['scripted', 'claude', 'codex', 'opencode'];

function CreateAgent({ http, onCreate }: { http: DaemonHttp; onCreate(cfg: CreateConfig): Promise<void> }) {
  const [provider, setProvider] = useState('scripted');
  const [installed, setInstalled] = useState<CatalogAgent[]>([]);
  useEffect(() => {
    let live = true;
    void http
      .run((api) => api.catalog())
      .then((r) => {
        if (live && r.ok) setInstalled(r.value.agents.filter((a) => a.installed));
      });
    return () => {
      live = false;
    };
  }, [http]);
  const [cwd, setCwd] = useState('/tmp');
  const [title, setTitle] = useState('');
  const [model, setModel] = useState('');
  const [mode, setMode] = useState('');
  const [worktree, setWorktree] = useState(false);
  const [branch, setBranch] = useState('');
  const [error, setError] = useState('');
  return (
    <form
      class="create"
      data-testid="create-agent"
      onSubmit={(e) => {
        e.preventDefault();
        setError('');
        const submitted = title;
        onCreate({
          provider,
          cwd,
          ...(title.trim() ? { title: title.trim() } : {}),
          ...(model ? { model } : {}),
          ...(mode ? { mode } : {}),
          ...(worktree ? { worktree: branch ? { branch } : {} } : {}),
        })
          // Cleared once created, unless the next agent's title was typed meanwhile.
          .then(() => setTitle((now) => (now === submitted ? '' : now)))
          .catch((err) => setError(String(err.message ?? err)));
      }}
    >
      <label>
        Provider
        <select value={provider} onChange={(e) => setProvider((e.target as HTMLSelectElement).value)} data-testid="provider">
          {BUILT_IN_PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
          {installed.map((a) => (
            <option key={a.provider} value={a.provider} title={a.description}>
              {a.name} ({a.provider})
            </option>
          ))}
        </select>
      </label>
      <label>
        Directory
        <input value={cwd} onInput={(e) => setCwd((e.target as HTMLInputElement).value)} data-testid="cwd" />
      </label>
      <label>
        Title
        <input
          value={title}
          placeholder="optional"
          onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
          data-testid="title"
        />
      </label>
      <label>
        Model
        <input value={model} placeholder="default" onInput={(e) => setModel((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Mode
        <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
          <option value="">default</option>
          <option value="plan">plan</option>
          <option value="acceptEdits">acceptEdits</option>
          <option value="bypassPermissions">bypassPermissions</option>
        </select>
      </label>
      <label class="check" title="run it in a git worktree of its own, on a new branch">
        <input
          type="checkbox"
          checked={worktree}
          onChange={(e) => setWorktree((e.target as HTMLInputElement).checked)}
          data-testid="worktree"
        />
        Worktree
      </label>
      {worktree ? (
        <label>
          Branch
          <input
            value={branch}
            placeholder="agentstream/AGENT"
            onInput={(e) => setBranch((e.target as HTMLInputElement).value)}
            data-testid="branch"
          />
        </label>
      ) : null}
      <button type="submit" class="primary" data-testid="create">
        New agent
      </button>
      {error ? <div class="error-text">{error}</div> : null}
    </form>
  );
}

// The page's own news, above everything: a pairing's outcome, a revoked device, a new build.
function PageNotices({ session }: { session: PageSession }) {
  if (session.revoked)
    return (
      <div class="page-notice error" role="alert" data-testid="revoked">
        This device was revoked: its access to the daemon ended and its token was removed from this browser. To use it again, pair
        it anew (Devices and notifications, on a signed-in browser).
      </div>
    );
  const notices = [];
  if (session.pairing)
    notices.push(
      <div
        key="pairing"
        class={`page-notice ${session.pairing.ok ? '' : 'error'}`}
        role={session.pairing.ok ? 'status' : 'alert'}
        data-testid={session.pairing.ok ? 'pairing-ok' : 'pairing-error'}
      >
        {session.pairing.message}{' '}
        <button type="button" onClick={() => session.set({ pairing: null })}>
          Dismiss
        </button>
      </div>,
    );
  if (session.updated)
    notices.push(
      <div key="updated" class="page-notice" role="status" data-testid="updated">
        A new version of the page is installed.{' '}
        <button type="button" onClick={() => location.reload()}>
          Reload
        </button>
      </div>,
    );
  return notices.length ? <div class="page-notices">{notices}</div> : null;
}
