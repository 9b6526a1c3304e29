// The Changes view of an agent in a worktree: git's own diff of the worktree (GET
// /v1/agents/{id}/diff), refreshed when a turn ends, and its git actions (POST
// /v1/agents/{id}/git/ACTION). The scripted agent does not touch files, so the test edits the
// worktree itself, as an agent's tools would.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { createAgent, daemonPerTest, pane, send, shot } from './helpers';

const run = daemonPerTest(20);

function makeRepo(dir: string) {
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  writeFileSync(path.join(dir, 'README.md'), '# Project\n\nhello\n');
  writeFileSync(path.join(dir, 'parse.ts'), 'export function parse(s: string): number {\n  return parseInt(s);\n}\n');
  execFileSync('git', ['-C', dir, 'add', '-A']);
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first']);
}

test('the Changes view shows the worktree diff git computes, refreshed at the end of a turn', async ({ page }) => {
  const repo = path.join(run.daemon.data, 'repo');
  makeRepo(repo);
  await page.goto(run.daemon.url);
  await page.getByTestId('cwd').fill(repo);
  await page.getByTestId('worktree').check();
  const agent = await createAgent(page);
  const p = pane(page, agent);
  const worktree = (await run.daemon.api('GET', `/v1/agents/${agent}`)).cwd as string;

  await p.getByTestId('tab-changes').click();
  await expect(p.getByTestId('changes')).toContainText('No changes against the base yet.');
  await expect(p.getByTestId('composer')).toBeVisible();

  // Files change while a turn runs; the view shows them when it ends.
  writeFileSync(
    path.join(worktree, 'parse.ts'),
    'export function parse(s: string): number {\n  return Number(s); // base 10\n}\n',
  );
  writeFileSync(path.join(worktree, 'notes.md'), 'one\ntwo\n');
  await send(page, agent, 'change the parser');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'idle');
  const files = p.getByTestId('change-file');
  await expect(files).toHaveCount(2);
  const want = (await run.daemon.api('GET', `/v1/agents/${agent}/diff`)).files.map((f: any) => `${f.path}|${f.status}`);
  expect(want).toEqual(['parse.ts|modified', 'notes.md|added']);
  await expect(files.nth(0)).toHaveAttribute('data-path', 'parse.ts');
  await expect(files.nth(0)).toHaveAttribute('data-status', 'modified');
  await expect(files.nth(1)).toHaveAttribute('data-status', 'added');
  const parse = files.nth(0);
  await expect(parse.locator('.dl-hunk')).toHaveText(['@@ -1,3 +1,3 @@']);
  await expect(parse.locator('.dl-del')).toHaveText(['-  return parseInt(s);']);
  await expect(parse.locator('.dl-add')).toHaveText(['+  return Number(s); // base 10']);
  // Highlighted as TypeScript, by the file's extension.
  await expect(parse.locator('.dl-add .hljs-comment')).toHaveText('// base 10');
  await expect(files.nth(1).locator('.dl-add')).toHaveText(['+one', '+two']);
  await expect(p.getByTestId('change-list')).toContainText('notes.md');
  await page.screenshot({ path: shot('web-changes.png') });

  // Back to the conversation: the timeline is there.
  await p.getByTestId('tab-conversation').click();
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'You asked: change the parser' })).toBeVisible();
  // An agent without a worktree has no Changes tab.
  await page.getByTestId('cwd').fill('/tmp');
  await page.getByTestId('worktree').uncheck();
  const plain = await createAgent(page);
  await expect(pane(page, plain).getByTestId('timeline')).toBeVisible();
  await expect(pane(page, plain).getByTestId('tab-changes')).toHaveCount(0);
});

test('the Changes view commits, merges into the base and discards, as git then has it', async ({ page }) => {
  const repo = path.join(run.daemon.data, 'repo');
  makeRepo(repo);
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
  await page.goto(run.daemon.url);
  await page.getByTestId('cwd').fill(repo);
  await page.getByTestId('worktree').check();
  const agent = await createAgent(page);
  const p = pane(page, agent);
  const snapshot = await run.daemon.api('GET', `/v1/agents/${agent}`);
  const worktree = snapshot.cwd as string;
  writeFileSync(path.join(worktree, 'notes.md'), 'from the agent\n');

  await p.getByTestId('tab-changes').click();
  const actions = p.getByRole('region', { name: 'Git actions' });
  const message = actions.getByRole('textbox', { name: 'Commit message' });
  await expect(message).toHaveAttribute('placeholder', /agent's last message/);
  await expect(p.getByTestId('change-file')).toHaveCount(1);

  // Commit: the outcome with the short commit id, the branch at that commit, nothing uncommitted.
  await message.fill('Add notes');
  await actions.getByRole('button', { name: 'Commit' }).click();
  const result = p.getByTestId('git-result');
  await expect(result).toHaveAttribute('data-outcome', 'committed');
  await expect(result).toHaveText(/^Committed [0-9a-f]{12}: Add notes$/);
  await expect(message).toHaveValue('');
  const branch = (await run.daemon.api('GET', `/v1/agents/${agent}/diff`)).branch as string;
  const commit = git('rev-parse', branch);
  await expect(result).toContainText(commit.slice(0, 12));
  expect(git('log', '-1', '--format=%s', branch)).toBe('Add notes');
  // Against the base the committed file is still a change; nothing is left uncommitted.
  await expect(p.getByTestId('change-file')).toHaveCount(1);
  await p.getByRole('combobox', { name: 'Show the changes' }).selectOption('HEAD');
  await expect(p.getByTestId('changes')).toContainText('Nothing uncommitted');
  await expect(p.getByTestId('change-file')).toHaveCount(0);
  // Nothing to commit: the daemon's 409, in words.
  await actions.getByRole('button', { name: 'Commit' }).click();
  await expect(p.getByTestId('git-error')).toContainText('Commit failed');
  await expect(p.getByTestId('git-error')).toHaveAttribute('role', 'alert');

  // Merge into the base: main now has the file.
  await actions.getByRole('button', { name: 'Merge into base' }).click();
  await expect(result).toHaveAttribute('data-outcome', 'fast-forward');
  await expect(result).toContainText(`Merged into main (fast-forward): main is now ${commit.slice(0, 12)}`);
  await expect(p.getByTestId('git-error')).toHaveCount(0);
  expect(git('rev-parse', 'main')).toBe(commit);
  expect(git('show', 'main:notes.md')).toBe('from the agent');

  // Open pull request: this repository's origin is a local path, not GitHub, so the daemon refuses
  // (400) before it pushes or runs gh; the page says so in the daemon's words, nothing is pushed,
  // and the title is kept for another try. (No test opens a real pull request.)
  const origin = path.join(run.daemon.data, 'origin.git');
  execFileSync('git', ['init', '-q', '--bare', origin]);
  git('remote', 'add', 'origin', origin);
  const title = actions.getByRole('textbox', { name: 'Pull request title' });
  await expect(title).toHaveAttribute('placeholder', /agent's last message/);
  await title.fill('Add notes');
  await actions.getByRole('button', { name: 'Open pull request' }).click();
  await expect(p.getByTestId('git-error')).toContainText('Open pull request failed: remote "origin" is not a GitHub repository');
  await expect(p.getByTestId('git-result')).toHaveCount(0);
  await expect(title).toHaveValue('Add notes');
  expect(execFileSync('git', ['-C', origin, 'branch', '--list'], { encoding: 'utf8' }).trim()).toBe('');

  // Discard, after a confirmation: the new file is deleted.
  writeFileSync(path.join(worktree, 'scratch.txt'), 'throwaway\n');
  await p.getByTestId('changes-refresh').click();
  await expect(p.getByTestId('change-file')).toHaveCount(1);
  await expect(p.getByTestId('change-file')).toHaveAttribute('data-path', 'scratch.txt');
  await actions.getByRole('button', { name: 'Discard changes' }).click();
  await expect(p.getByTestId('git-discard-warning')).toContainText('deletes its untracked files');
  expect(existsSync(path.join(worktree, 'scratch.txt'))).toBe(true); // not yet
  await actions.getByRole('button', { name: 'Delete the uncommitted changes' }).click();
  await expect(result).toHaveAttribute('data-outcome', 'discarded');
  await expect(p.getByTestId('git-files')).toHaveText('scratch.txt');
  expect(existsSync(path.join(worktree, 'scratch.txt'))).toBe(false);
  expect(existsSync(path.join(worktree, 'notes.md'))).toBe(true);
  await expect(p.getByTestId('change-file')).toHaveCount(0);
  await page.screenshot({ path: shot('web-git-actions.png') });

  // While the agent waits for a permission, commit and discard wait too.
  await send(page, agent, 'please ask permission first');
  await expect(p.getByTestId('git-wait')).toBeVisible();
  await expect(actions.getByRole('button', { name: 'Commit' })).toBeDisabled();
  await expect(actions.getByRole('button', { name: 'Discard changes' })).toBeDisabled();
  await expect(actions.getByRole('button', { name: 'Merge into base' })).toBeEnabled();
  await p.getByTestId('prompt-allow_once').click();
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'idle');
  await expect(actions.getByRole('button', { name: 'Commit' })).toBeEnabled();

  // The timeline shows each action as a notice.
  await p.getByTestId('tab-conversation').click();
  const notices = p.locator('[data-kind="notice"]');
  await expect(notices.filter({ hasText: `git commit committed ${commit.slice(0, 12)}: Add notes` })).toHaveCount(1);
  await expect(notices.filter({ hasText: 'git merge fast-forward' })).toHaveCount(1);
  await expect(notices.filter({ hasText: 'git discard discarded' })).toHaveCount(1);
  await expect(notices.filter({ hasText: 'git pr' })).toHaveCount(0); // refused before it acted: not recorded
});
