// The Changes view of an agent in a worktree: git's own diff of the worktree (GET
// /v1/agents/{id}/diff), refreshed when a turn ends. The scripted agent does not touch files, so
// the test edits the worktree itself, as an agent's tools would.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
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
