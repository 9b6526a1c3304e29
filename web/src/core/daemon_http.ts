// The daemon's HTTP API for what the WebSocket protocol does not carry (a worktree's diff, the
// list of worktrees: docs/workspaces.md; paired devices and their notification settings:
// docs/web.md, "Pairing and devices"). Same origin as the page; the page's token, when it has
// one, goes in `Authorization: Bearer`.
//
// Errors are values: `getJson` and `sendJson` resolve `{ ok: false, status, message }` for an
// HTTP error (404 when an agent has no worktree) and for a network failure (status 0); they
// never reject. A 401 is also reported to `onUnauthorized` (a revoked device token).

export type HttpResult<T> = { ok: true; value: T } | { ok: false; status: number; message: string };

export class DaemonHttp {
  onUnauthorized: (() => void) | null = null;

  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  getJson<T>(path: string): Promise<HttpResult<T>> {
    return this.sendJson<T>('GET', path);
  }

  async sendJson<T>(method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
    try {
      const res = await fetch(this.base + path, {
        method,
        headers: {
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (!res.ok) {
        let message = text;
        try {
          message = JSON.parse(text).error?.message ?? text;
        } catch {
          // not JSON: the text as is
        }
        if (res.status === 401) this.onUnauthorized?.();
        return { ok: false, status: res.status, message };
      }
      return { ok: true, value: (text ? JSON.parse(text) : null) as T };
    } catch (err) {
      return { ok: false, status: 0, message: String((err as Error)?.message ?? err) };
    }
  }
}

// An agent of GET /v1/catalog (docs/providers.md, "The catalog"): the create form offers the
// installed ones.
export interface CatalogAgent {
  id: string;
  provider: string;
  name: string;
  version: string;
  description: string;
  installed: boolean;
  proven: boolean;
}

// GET /v1/agents/{id}/diff (docs/workspaces.md, "The diff").
export interface DiffHunk {
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface DiffFile {
  path: string;
  oldPath?: string;
  status: 'added' | 'deleted' | 'modified' | 'renamed' | 'copied' | string;
  binary: boolean;
  additions: number;
  deletions: number;
  oldMode?: string;
  newMode?: string;
  hunks: DiffHunk[];
}

export interface WorktreeDiff {
  agent: string;
  path: string;
  branch: string;
  base: string;
  baseCommit: string;
  against: string;
  againstCommit: string;
  truncated: boolean;
  additions: number;
  deletions: number;
  files: DiffFile[];
}

// GET /v1/worktrees
export interface WorktreeInfo {
  agent: string;
  path: string;
  branch: string;
  base: string;
  baseCommit: string;
  repository: string;
  state: 'present' | 'removed' | 'missing';
  closed: boolean;
}
