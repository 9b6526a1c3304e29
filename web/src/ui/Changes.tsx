// The Changes view of an agent with a worktree: git's diff of the worktree against its base, or
// only what is not committed yet (GET /v1/agents/{id}/diff, docs/workspaces.md), as a list of
// files and their hunks, syntax-highlighted. Fetched when shown, again at the end of every turn
// of the agent (its status leaving running / permission), after each git action and by its
// Refresh button. Above it the git actions (POST /v1/agents/{id}/git/ACTION, "Git actions"):
// commit, merge into the base, push, open a GitHub pull request, and discard (after a
// confirmation).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Diff, DiffFile, GitAction, GitActionBody, GitActionResult } from '@agentstream/client';
import type { DaemonHttp } from '../core/daemon_http';
import { DiffLines, type ShownLine } from './DiffView';
import { ACTION_LABELS, describeGitResult, pullRequestBody, pullRequestUrl, refusedOutcome } from './git_actions';

// A file with more diff lines than this starts folded (its lines render when opened).
export const FOLD_FILE_LINES = 400;
// Lines of one file rendered at most ("show all" renders the rest).
export const MAX_FILE_LINES = 3000;

function linesOf(file: DiffFile): ShownLine[] {
  const out: ShownLine[] = [];
  for (const h of file.hunks) {
    out.push({ sign: '@', text: h.header });
    for (const l of h.lines) out.push({ sign: l[0] === '+' || l[0] === '-' || l[0] === '\\' ? l[0] : ' ', text: l.slice(1) });
  }
  return out;
}

function FileDiff({ file }: { file: DiffFile }) {
  const lines = linesOf(file);
  const [open, setOpen] = useState(lines.length <= FOLD_FILE_LINES);
  const [all, setAll] = useState(false);
  const shown = all ? lines : lines.slice(0, MAX_FILE_LINES);
  const name = file.oldPath && file.oldPath !== file.path ? `${file.oldPath} → ${file.path}` : file.path;
  return (
    <section
      class="change-file"
      id={`change-${file.path}`}
      data-testid="change-file"
      data-path={file.path}
      data-status={file.status}
    >
      <button type="button" class="change-file-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span class="fold">{open ? '▾' : '▸'}</span>
        <span class={`file-status fs-${file.status}`}>{file.status}</span>
        <span class="change-path">{name}</span>
        <span class="diffstat">
          <span class="add">+{file.additions}</span> <span class="del">−{file.deletions}</span>
        </span>
      </button>
      {open ? (
        file.binary ? (
          <div class="muted">binary file</div>
        ) : (
          <>
            <DiffLines path={file.path} lines={shown} />
            {shown.length < lines.length ? (
              <button type="button" onClick={() => setAll(true)}>
                Show all {lines.length} lines
              </button>
            ) : null}
          </>
        )
      ) : null}
    </section>
  );
}

// What the diff compares the worktree with: its base commit, or its branch's last commit
// (`against=HEAD`: the changes a commit would take).
type Against = 'base' | 'HEAD';

export function Changes({ http, agentId, status }: { http: DaemonHttp; agentId: string; status: string }) {
  const [diff, setDiff] = useState<Diff | null>(null);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  const [against, setAgainst] = useState<Against>('base');
  const generation = useRef(0);
  const load = async (which: Against = against) => {
    const g = ++generation.current;
    setLoading(true);
    const r = await http.run((api) => api.diff(agentId, which === 'HEAD' ? { against: 'HEAD' } : {}));
    if (g !== generation.current) return;
    setLoading(false);
    if (r.ok) {
      setDiff(r.value);
      setError('');
    } else setError(r.status === 404 ? 'This agent has no worktree (or it was removed).' : r.message);
  };
  useEffect(() => {
    setDiff(null);
    void load();
  }, [agentId]);
  // A turn ended: the worktree may have changed.
  const prev = useRef(status);
  useEffect(() => {
    const was = prev.current;
    prev.current = status;
    if ((was === 'running' || was === 'permission') && status !== 'running' && status !== 'permission') void load();
  }, [status]);

  return (
    <div class="changes" data-testid="changes" data-loading={loading ? 'true' : 'false'}>
      <GitActions http={http} agentId={agentId} status={status} onDone={() => void load()} key={agentId} />
      <div class="changes-head">
        {diff ? (
          <span>
            <code>{diff.branch}</code>{' '}
            <span class="muted">
              {against === 'HEAD' ? 'not committed, against its last commit' : `against ${diff.against}`} (
              {diff.againstCommit.slice(0, 10)})
            </span>{' '}
            <span class="diffstat">
              {diff.files.length} files <span class="add">+{diff.additions}</span> <span class="del">−{diff.deletions}</span>
            </span>
          </span>
        ) : (
          <span class="muted">{loading ? 'loading…' : ''}</span>
        )}
        <span class="spacer" />
        <select
          aria-label="Show the changes"
          value={against}
          data-testid="changes-against"
          onChange={(e) => {
            const which = (e.target as HTMLSelectElement).value as Against;
            setAgainst(which);
            setDiff(null);
            void load(which);
          }}
        >
          <option value="base">Since the base</option>
          <option value="HEAD">Not committed</option>
        </select>
        <button type="button" onClick={() => void load()} disabled={loading} data-testid="changes-refresh">
          Refresh
        </button>
      </div>
      {error ? <div class="error-text">{error}</div> : null}
      {diff?.truncated ? (
        <div class="sub-status">The diff is cut at the daemon's bound (1 MiB): later files are not shown.</div>
      ) : null}
      {diff && diff.files.length === 0 ? (
        <div class="muted changes-empty">
          {against === 'HEAD' ? 'Nothing uncommitted: the worktree is at its last commit.' : 'No changes against the base yet.'}
        </div>
      ) : null}
      {diff && diff.files.length > 1 ? (
        <ul class="change-list" data-testid="change-list">
          {diff.files.map((f) => (
            <li key={f.path}>
              <a
                href={`#change-${f.path}`}
                onClick={(e) => {
                  e.preventDefault();
                  document.getElementById(`change-${f.path}`)?.scrollIntoView({ block: 'start' });
                }}
              >
                <span class={`file-status fs-${f.status}`}>{f.status[0].toUpperCase()}</span> {f.path}
              </a>{' '}
              <span class="diffstat">
                <span class="add">+{f.additions}</span> <span class="del">−{f.deletions}</span>
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {diff?.files.map((f) => (
        <FileDiff key={`${f.path}:${diff.againstCommit}`} file={f} />
      ))}
    </div>
  );
}

// The git actions of the worktree. One runs at a time; commit and discard change the worktree,
// so they wait while the agent is in a turn or asks for a permission (the daemon refuses them
// then too, 409). The last answer stays shown until the next action.
function GitActions({ http, agentId, status, onDone }: { http: DaemonHttp; agentId: string; status: string; onDone(): void }) {
  const [message, setMessage] = useState('');
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState<GitAction | null>(null);
  const [confirmDiscard, setConfirmDiscard] = useState(false);
  const [result, setResult] = useState<GitActionResult | null>(null);
  const [error, setError] = useState('');
  const working = status === 'running' || status === 'permission';
  useEffect(() => {
    if (working) setConfirmDiscard(false);
  }, [working]);

  const act = async (action: GitAction, body: GitActionBody = {}) => {
    if (busy) return;
    setBusy(action);
    setConfirmDiscard(false);
    const r = await http.run((api) => api.gitAction(agentId, action, body));
    setBusy(null);
    if (r.ok) {
      setResult(r.value);
      setError('');
      if (r.value.outcome === 'committed') setMessage('');
      if (r.value.outcome === 'opened') setTitle('');
    } else {
      setResult(null);
      setError(`${ACTION_LABELS[action]} failed: ${r.message}`);
    }
    onDone();
  };

  const trimmed = message.trim();
  const prUrl = result ? pullRequestUrl(result) : null;
  return (
    <section class="git-actions" aria-label="Git actions" data-testid="git-actions" data-busy={busy ?? ''}>
      <form
        class="git-commit"
        onSubmit={(e) => {
          e.preventDefault();
          if (!working) void act('commit', trimmed ? { message: trimmed } : {});
        }}
      >
        <input
          value={message}
          maxLength={16384}
          aria-label="Commit message"
          placeholder="Commit message (empty: the agent's last message)"
          data-testid="commit-message"
          onInput={(e) => setMessage((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={!!busy || working} data-testid="git-commit">
          Commit
        </button>
      </form>
      <form
        class="git-pr"
        onSubmit={(e) => {
          e.preventDefault();
          void act('pr', pullRequestBody(title));
        }}
      >
        <input
          value={title}
          maxLength={256}
          aria-label="Pull request title"
          placeholder="Pull request title (empty: the agent's last message)"
          data-testid="pr-title"
          onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={!!busy} data-testid="git-pr">
          Open pull request
        </button>
      </form>
      <div class="git-buttons">
        <button type="button" disabled={!!busy} onClick={() => void act('merge')} data-testid="git-merge">
          Merge into base
        </button>
        <button type="button" disabled={!!busy} onClick={() => void act('push')} data-testid="git-push">
          Push
        </button>
        {confirmDiscard ? (
          <>
            <button
              type="button"
              class="danger"
              disabled={!!busy || working}
              onClick={() => void act('discard')}
              data-testid="git-discard-confirm"
            >
              Delete the uncommitted changes
            </button>
            <button type="button" onClick={() => setConfirmDiscard(false)} data-testid="git-discard-cancel">
              Cancel
            </button>
          </>
        ) : (
          <button
            type="button"
            class="danger"
            disabled={!!busy || working}
            onClick={() => setConfirmDiscard(true)}
            data-testid="git-discard"
          >
            Discard changes
          </button>
        )}
      </div>
      {confirmDiscard ? (
        <div class="sub-status" role="alert" data-testid="git-discard-warning">
          Discard resets the worktree to its branch's last commit and deletes its untracked files (ignored files stay).
        </div>
      ) : null}
      {working ? (
        <div class="muted" data-testid="git-wait">
          Commit and discard wait for the agent's turn to end.
        </div>
      ) : null}
      <div role="status" aria-live="polite" class="git-status">
        {busy ? <span class="muted">{ACTION_LABELS[busy]}…</span> : null}
        {result && !busy ? (
          <div
            class={refusedOutcome(result) ? 'git-result warn' : 'git-result'}
            data-testid="git-result"
            data-action={result.action}
            data-outcome={result.outcome}
          >
            {describeGitResult(result)}
            {prUrl ? (
              <div>
                <a href={prUrl} target="_blank" rel="noopener" data-testid="git-pr-url">
                  {prUrl}
                </a>
              </div>
            ) : null}
            {(result.outcome === 'refused' || result.outcome === 'failed') && result.message ? (
              <pre class="git-words" data-testid="git-words">
                {result.message}
              </pre>
            ) : null}
            {(result.outcome === 'conflict' || result.outcome === 'discarded') && result.files.length ? (
              <ul class="git-files" data-testid="git-files">
                {result.files.map((f) => (
                  <li key={f}>
                    <code>{f}</code>
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
      </div>
      {error ? (
        <div class="error-text" role="alert" data-testid="git-error">
          {error}
        </div>
      ) : null}
    </section>
  );
}

// Whether an agent has a worktree, from GET /v1/worktrees; fetched again when asked about an
// agent it did not list (one made since).
export class WorktreeDirectory {
  private known = new Map<string, boolean>();
  private inflight: Promise<void> | null = null;

  constructor(private readonly http: DaemonHttp) {}

  async has(agentId: string): Promise<boolean> {
    if (!this.known.has(agentId)) {
      await this.refresh();
      if (!this.known.has(agentId)) this.known.set(agentId, false);
    }
    return this.known.get(agentId)!;
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.http
      .run((api) => api.worktrees())
      .then((r) => {
        if (r.ok) for (const w of r.value) this.known.set(w.agent, w.state === 'present');
      })
      .finally(() => (this.inflight = null));
    return this.inflight;
  }
}
