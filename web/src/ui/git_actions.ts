// The words the Changes view shows for a git action's answer (POST /v1/agents/{id}/git/ACTION,
// docs/workspaces.md, "Git actions"): pure, so the sentences are checked without a daemon.
import type { GitAction, GitActionResult } from '@agentstream/client';

// A commit id as the timeline's notices show it.
export function shortCommit(commit: string | undefined): string {
  return (commit ?? '').slice(0, 12);
}

// The button's name of each action, for the error line ("Commit failed: ...").
export const ACTION_LABELS: Record<GitAction, string> = {
  commit: 'Commit',
  merge: 'Merge',
  push: 'Push',
  discard: 'Discard',
};

// Whether the answer is an action that changed nothing because git would not (a conflicting
// merge, a refused push): shown as a warning rather than a success.
export function refusedOutcome(r: GitActionResult): boolean {
  return r.outcome === 'conflict' || r.outcome === 'refused';
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
      return `${target} refused the push; nothing was changed.`;
    case 'discarded':
      return r.files.length
        ? `Discarded the uncommitted changes; back at ${id}. Dropped:`
        : `Discarded the uncommitted changes; back at ${id}.`;
    default:
      return `${r.action}: ${String(r.outcome)}`;
  }
}
