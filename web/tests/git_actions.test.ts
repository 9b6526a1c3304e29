// The Changes view's git actions: the sentence of each outcome, the call going through the
// page's DaemonHttp adapter (a 409 as a value with the daemon's words), and the live projection
// of a `workspace.action` event into the notice the daemon's pages hold.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope, GitActionResult } from '@agentstream/client';
import { DaemonHttp } from '../src/core/daemon_http';
import { foldEvent, itemKeyOf } from '../src/core/project';
import { describeGitResult, refusedOutcome } from '../src/ui/git_actions';

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
