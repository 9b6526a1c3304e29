// The words the Changes view shows for a git action's answer (POST /v1/agents/{id}/git/ACTION,
// docs/workspaces.md, "Git actions"): pure, so the sentences are checked without a daemon.
import type { GitAction, GitActionBody, GitActionResult } from '@agentstream/client';
import { workspaceActionRefused } from '../core/project';

// A commit id as the timeline's notices show it.
export function shortCommit(commit: string | undefined): string {
  return (commit ?? '').slice(0, 12);
}

// The button's name of each action, for the error line ("Commit failed: ...").
export const ACTION_LABELS: Record<GitAction, string> = {
  commit: 'Commit',
  merge: 'Merge',
  push: 'Push',
  pr: 'Open pull request',
  discard: 'Discard',
};

// Whether the answer is an action that did not do what was asked because git or gh would not (a
// conflicting merge, a refused push, a pull request gh did not open): shown as a warning rather
// than a success, as the timeline's notice of it is.
export function refusedOutcome(r: GitActionResult): boolean {
  return workspaceActionRefused(r);
}

// The body of a pull request from the title field: an empty (or blank) title is left out, so the
// daemon takes the first line of the agent's last message; a title the daemon finds bad (over
// 256 bytes) is its 400 to say.
export function pullRequestBody(title: string): GitActionBody {
  const trimmed = title.trim();
  return trimmed ? { title: trimmed } : {};
}

// The address of an opened pull request, when it is one a link may open (https only: nothing
// else, `javascript:` above all, becomes a link even if a daemon answered it).
export function pullRequestUrl(r: GitActionResult): string | null {
  return r.outcome === 'opened' && typeof r.url === 'string' && r.url.startsWith('https://') ? r.url : null;
}

// One sentence for the outcome; the conflicting files, the dropped files and git's words for a
// refusal are shown beside it as they are.
export function describeGitResult(r: GitActionResult): string {
  const id = shortCommit(r.commit);
  const target = r.target ?? '';
  switch (r.outcome) {
    case 'committed':
      return `Committed ${id}${r.message ? `: ${r.message}` : ''}`;
    case 'fast-forward':
      return `Merged into ${target} (fast-forward): ${target} is now ${id}`;
    case 'merged':
      return `Merged into ${target}: merge commit ${id}`;
    case 'up-to-date':
      return `${target} already has every commit of ${r.branch}: nothing to merge`;
    case 'conflict':
      return `The merge into ${target} conflicts; nothing was changed. Conflicting files:`;
    case 'pushed':
      return `Pushed ${r.branch} to ${target} (${id})`;
    case 'refused':
      return r.action === 'pr'
        ? `The push of ${r.branch} was refused; no pull request was opened.`
        : `${target} refused the push; nothing was changed.`;
    case 'opened':
      return `Opened a pull request of ${r.branch} into ${target}${id ? ` (${id})` : ''}`;
    case 'failed':
      return `gh did not open the pull request into ${target}; ${r.branch} stays pushed${id ? ` (${id})` : ''}.`;
    case 'discarded':
      return r.files.length
        ? `Discarded the uncommitted changes; back at ${id}. Dropped:`
        : `Discarded the uncommitted changes; back at ${id}.`;
    default:
      return `${r.action}: ${String(r.outcome)}`;
  }
}
