// The Changes view of an agent with a worktree: git's diff of the worktree against its base
// (GET /v1/agents/{id}/diff, docs/workspaces.md), as a list of files and their hunks,
// syntax-highlighted. Fetched when shown and again at the end of every turn of the agent
// (its status leaving running / permission), and by its Refresh button.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Diff, DiffFile } from '@agentstream/client';
import type { DaemonHttp } from '../core/daemon_http';
import { DiffLines, type ShownLine } from './DiffView';

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

export function Changes({ http, agentId, status }: { http: DaemonHttp; agentId: string; status: string }) {
  const [diff, setDiff] = useState<Diff | null>(null);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  const generation = useRef(0);
  const load = async () => {
    const g = ++generation.current;
    setLoading(true);
    const r = await http.run((api) => api.diff(agentId));
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
      <div class="changes-head">
        {diff ? (
          <span>
            <code>{diff.branch}</code>{' '}
            <span class="muted">
              against {diff.against} ({diff.againstCommit.slice(0, 10)})
            </span>{' '}
            <span class="diffstat">
              {diff.files.length} files <span class="add">+{diff.additions}</span> <span class="del">−{diff.deletions}</span>
            </span>
          </span>
        ) : (
          <span class="muted">{loading ? 'loading…' : ''}</span>
        )}
        <span class="spacer" />
        <button type="button" onClick={() => void load()} disabled={loading} data-testid="changes-refresh">
          Refresh
        </button>
      </div>
      {error ? <div class="error-text">{error}</div> : null}
      {diff?.truncated ? (
        <div class="sub-status">The diff is cut at the daemon's bound (1 MiB): later files are not shown.</div>
      ) : null}
      {diff && diff.files.length === 0 ? <div class="muted changes-empty">No changes against the base yet.</div> : null}
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
