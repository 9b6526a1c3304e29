// The Changes view's git actions: the sentence of each outcome, the call going through the
// page's DaemonHttp adapter (a 409 as a value with the daemon's words), and the live projection
// of a `workspace.action` event into the notice the daemon's pages hold.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope, GitActionResult } from '@agentstream/client';
import { DaemonHttp } from '../src/core/daemon_http';
import { foldEvent, itemKeyOf } from '../src/core/project';
import { ACTION_LABELS, describeGitResult, pullRequestBody, pullRequestUrl, refusedOutcome } from '../src/ui/git_actions';

const ID = '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d';
const base = { agent: 'ses_1', cursor: '1:9', branch: 'agentstream/ses_1', files: [] as string[] };
const result = (r: Partial<GitActionResult>): GitActionResult => ({ ...base, action: 'commit', outcome: 'committed', ...r });

describe('describeGitResult', () => {
  it('says what each outcome did, with the short commit id', () => {
    expect(describeGitResult(result({ commit: ID, message: 'Fix it' }))).toBe('Committed 1a2b3c4d5e6f: Fix it');
    expect(describeGitResult(result({ action: 'merge', outcome: 'fast-forward', commit: ID, target: 'main' }))).toBe(
      'Merged into main (fast-forward): main is now 1a2b3c4d5e6f',
    );
    expect(describeGitResult(result({ action: 'merge', outcome: 'merged', commit: ID, target: 'main' }))).toBe(
      'Merged into main: merge commit 1a2b3c4d5e6f',
    );
    expect(describeGitResult(result({ action: 'merge', outcome: 'up-to-date', target: 'main' }))).toContain(
      'main already has every commit of agentstream/ses_1',
    );
    expect(describeGitResult(result({ action: 'push', outcome: 'pushed', commit: ID, target: 'origin' }))).toBe(
      'Pushed agentstream/ses_1 to origin (1a2b3c4d5e6f)',
    );
    expect(describeGitResult(result({ action: 'discard', outcome: 'discarded', commit: ID, files: ['a.txt'] }))).toContain(
      'Dropped:',
    );
  });

  it('marks a conflict and a refusal as having changed nothing', () => {
    const conflict = result({ action: 'merge', outcome: 'conflict', target: 'main', files: ['a.txt'] });
    expect(describeGitResult(conflict)).toContain('nothing was changed');
    expect(refusedOutcome(conflict)).toBe(true);
    const refused = result({ action: 'push', outcome: 'refused', target: 'origin', message: '! [rejected] (fetch first)' });
    expect(describeGitResult(refused)).toBe('origin refused the push; nothing was changed.');
    expect(refusedOutcome(refused)).toBe(true);
    expect(refusedOutcome(result({ commit: ID }))).toBe(false);
  });

  it('says where a pull request was opened, and what stopped one', () => {
    const url = 'https://github.com/o/r/pull/7';
    const opened = result({ action: 'pr', outcome: 'opened', commit: ID, target: 'main', url });
    expect(describeGitResult(opened)).toBe('Opened a pull request of agentstream/ses_1 into main (1a2b3c4d5e6f)');
    expect(refusedOutcome(opened)).toBe(false);
    expect(pullRequestUrl(opened)).toBe(url);
    // gh refused (not logged in): a warning with its words; the branch stays pushed.
    const failed = result({
      action: 'pr',
      outcome: 'failed',
      commit: ID,
      target: 'main',
      message: 'gh pr create: exit code 4; stderr: please run:  gh auth login',
    });
    expect(describeGitResult(failed)).toBe(
      'gh did not open the pull request into main; agentstream/ses_1 stays pushed (1a2b3c4d5e6f).',
    );
    expect(refusedOutcome(failed)).toBe(true);
    expect(pullRequestUrl(failed)).toBeNull();
    // The push was refused: `target` is the pull request's base, not the remote.
    const refused = result({ action: 'pr', outcome: 'refused', target: 'main', message: '! [rejected] (fetch first)' });
    expect(describeGitResult(refused)).toBe('The push of agentstream/ses_1 was refused; no pull request was opened.');
    expect(refusedOutcome(refused)).toBe(true);
    expect(ACTION_LABELS.pr).toBe('Open pull request');
  });

  it('links only an https pull request address', () => {
    const opened = (url?: string) => result({ action: 'pr', outcome: 'opened', target: 'main', url });
    expect(pullRequestUrl(opened(undefined))).toBeNull();
    expect(pullRequestUrl(opened('javascript:alert(1)'))).toBeNull();
    expect(pullRequestUrl(opened('http://github.com/o/r/pull/7'))).toBeNull();
  });

  it("leaves an empty title out, so the daemon takes the agent's last message", () => {
    expect(pullRequestBody('')).toEqual({});
    expect(pullRequestBody('   ')).toEqual({});
    expect(pullRequestBody('  Fix the login form ')).toEqual({ title: 'Fix the login form' });
  });
});

describe('a git action through DaemonHttp', () => {
  it('posts the body and answers the result, or the 409 as a value', async () => {
    const seen: { url: string; body: unknown }[] = [];
    let status = 200;
    const fetchFn = (url: string, init?: RequestInit) => {
      seen.push({ url, body: JSON.parse(String(init?.body)) });
      const body =
        status === 200
          ? result({ commit: ID, message: 'Fix it' })
          : { error: { code: 'conflict', message: 'nothing to commit in the worktree' } };
      return Promise.resolve(new Response(JSON.stringify(body), { status }));
    };
    const http = new DaemonHttp('http://daemon', '', fetchFn);
    const ok = await http.run((api) => api.gitAction('ses_1', 'commit', { message: 'Fix it' }));
    expect(ok).toMatchObject({ ok: true, value: { outcome: 'committed', commit: ID } });
    status = 409;
    expect(await http.run((api) => api.gitAction('ses_1', 'commit'))).toEqual({
      ok: false,
      status: 409,
      message: 'nothing to commit in the worktree',
    });
    expect(seen).toEqual([
      { url: 'http://daemon/v1/agents/ses_1/git/commit', body: { message: 'Fix it' } },
      { url: 'http://daemon/v1/agents/ses_1/git/commit', body: {} },
    ]);
  });

  it("posts a pull request's title to git/pr; a remote that is not GitHub's is the daemon's 400", async () => {
    const seen: { url: string; body: unknown }[] = [];
    const words = 'remote "origin" is not a GitHub repository\'s URL (https://HOST/OWNER/REPO or git@HOST:OWNER/REPO)';
    const fetchFn = (url: string, init?: RequestInit) => {
      seen.push({ url, body: JSON.parse(String(init?.body)) });
      return Promise.resolve(
        new Response(JSON.stringify({ error: { code: 'invalid_argument', message: words } }), { status: 400 }),
      );
    };
    const http = new DaemonHttp('http://daemon', '', fetchFn);
    expect(await http.run((api) => api.gitAction('ses_1', 'pr', pullRequestBody('Fix it')))).toEqual({
      ok: false,
      status: 400,
      message: words,
    });
    expect(seen).toEqual([{ url: 'http://daemon/v1/agents/ses_1/git/pr', body: { title: 'Fix it' } }]);
  });
});

describe('a workspace.action event, projected live', () => {
  const ev = (seq: number, payload: Record<string, unknown>): EventEnvelope => ({
    v: 1,
    session: 'ses_1',
    epoch: 1,
    seq,
    time: 0,
    kind: 'workspace.action',
    payload: { branch: 'agentstream/s', files: [], ...payload },
  });

  // The texts of the daemon's assembler test (src/core/timeline/assembler_test.cc).
  it("is a notice of its own with the daemon's text; a refusal is a warning", () => {
    const commit = ev(3, { action: 'commit', outcome: 'committed', commit: '0123456789abcdef', message: 'Fix it' });
    expect(itemKeyOf(commit)).toEqual({ kind: 'notice', key: '#3' });
    expect(foldEvent(undefined, commit)).toMatchObject({
      kind: 'notice',
      key: '#3',
      level: 'info',
      text: 'git commit committed 0123456789ab: Fix it',
      sourceSeqRanges: [[3, 3]],
    });
    const refused = ev(4, {
      action: 'push',
      outcome: 'refused',
      commit: '0123456789abcdef',
      target: 'origin',
      message: '[rejected] (non-fast-forward)',
    });
    expect(foldEvent(undefined, refused)).toMatchObject({
      level: 'warning',
      text: 'git push refused 0123456789ab to origin: [rejected] (non-fast-forward)',
    });
  });

  it('names ten files and counts the rest', () => {
    const files = Array.from({ length: 12 }, (_, i) => `f${i}`);
    const conflict = foldEvent(undefined, ev(5, { action: 'merge', outcome: 'conflict', target: 'main', files }));
    expect(conflict?.text).toBe('git merge conflict into main: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 2 more');
    expect(conflict?.level).toBe('warning');
  });

  it("names an opened pull request's address after its base; gh's refusal is a warning", () => {
    const opened = foldEvent(
      undefined,
      ev(6, {
        action: 'pr',
        outcome: 'opened',
        commit: '0123456789abcdef',
        target: 'main',
        url: 'https://github.com/o/r/pull/7',
      }),
    );
    expect(opened).toMatchObject({
      level: 'info',
      text: 'git pr opened 0123456789ab into main https://github.com/o/r/pull/7',
    });
    const failed = foldEvent(
      undefined,
      ev(7, {
        action: 'pr',
        outcome: 'failed',
        commit: '0123456789abcdef',
        target: 'main',
        message: 'gh pr create: exit code 4; stderr: please run:  gh auth login',
      }),
    );
    expect(failed).toMatchObject({
      level: 'warning',
      text: 'git pr failed 0123456789ab into main: gh pr create: exit code 4; stderr: please run:  gh auth login',
    });
  });
});

describe('an automation.fired event, projected live', () => {
  const ev = (seq: number, payload: Record<string, unknown>): EventEnvelope => ({
    v: 1,
    session: 'ses_1',
    epoch: 1,
    seq,
    time: 0,
    kind: 'automation.fired',
    payload: { source: 'trigger', id: 'issues', missingFields: [], ...payload },
  });

  // The texts of the daemon's assembler test (src/core/timeline/assembler_test.cc).
  it("is a notice with the daemon's text; missing fields make it a warning", () => {
    const fired = ev(2, { key: '72d3162e', event: 'issues' });
    expect(itemKeyOf(fired)).toEqual({ kind: 'notice', key: '#2' });
    expect(foldEvent(undefined, fired)).toMatchObject({
      level: 'info',
      text: 'trigger issues: delivery 72d3162e (issues)',
    });
    expect(foldEvent(undefined, ev(3, { key: '8a1c0f20', missingFields: ['comment.body', 'x'] }))).toMatchObject({
      level: 'warning',
      text: 'trigger issues: delivery 8a1c0f20; missing fields: comment.body, x',
    });
  });
});
