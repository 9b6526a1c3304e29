// What agent output looks like: Markdown with highlighted code, and hostile HTML shown as text.
// The scripted agent's answer quotes the prompt ("You asked: PROMPT"), so the prompt decides
// what the agent outputs; the user row renders the same text through the same path.
import { expect, test } from '@playwright/test';
import { createAgent, daemonPerTest, pane, send, shot } from './helpers';

const run = daemonPerTest(20);

const MARKDOWN = [
  '',
  '',
  '## Plan of attack',
  '',
  '1. read the **failing** test',
  '2. fix `parse()` in [the parser](https://example.com/parser)',
  '',
  '```ts',
  'export function parse(input: string): number {',
  '  return Number(input); // base 10',
  '}',
  '```',
  '',
  '| file | change |',
  '|---|---|',
  '| parse.ts | +2 −1 |',
].join('\n');

test('Markdown renders: headings, lists, links, tables and a highlighted code block', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  const composer = pane(page, agent).getByTestId('composer');
  await composer.fill(MARKDOWN);
  await composer.press('Enter');
  const answer = pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'You asked:' });
  await expect(answer).toHaveAttribute('data-finished', 'true');
  await expect(answer.locator('h2')).toHaveText('Plan of attack');
  await expect(answer.locator('ol > li')).toHaveCount(2);
  await expect(answer.locator('strong')).toHaveText('failing');
  await expect(answer.locator('li code')).toHaveText('parse()');
  const link = answer.locator('a[href="https://example.com/parser"]');
  await expect(link).toHaveAttribute('target', '_blank');
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer');
  const code = answer.locator('pre.md-code[data-lang="ts"] code');
  await expect(code).toContainText('export function parse(input: string): number {');
  await expect(code.locator('.hljs-keyword').first()).toHaveText('export');
  await expect(code.locator('.hljs-comment')).toHaveText('// base 10');
  await expect(answer.locator('table td').first()).toHaveText('parse.ts');
  // The user's own message is Markdown too.
  await expect(pane(page, agent).getByTestId('user-message').locator('pre.md-code')).toHaveCount(1);
  await page.screenshot({ path: shot('web-markdown.png') });
});

test('HTML and script in agent output render as text and never run', async ({ page }) => {
  await page.goto(run.daemon.url);
  await page.evaluate(() => ((window as any).__pwned = 0));
  const agent = await createAgent(page);
  const hostile =
    '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> ' +
    '[click](javascript:window.__pwned=3) ![pixel](http://127.0.0.1:9/track.png) <b onclick="window.__pwned=4">bold?</b>';
  await send(page, agent, hostile);
  const answer = pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'You asked:' });
  await expect(answer).toHaveAttribute('data-finished', 'true');
  await expect(answer).toContainText('<script>window.__pwned = 1</script>');
  await expect(answer).toContainText('<img src=x onerror="window.__pwned = 2">');
  const timeline = pane(page, agent).getByTestId('timeline');
  await expect(timeline.locator('script')).toHaveCount(0);
  await expect(timeline.locator('img')).toHaveCount(0);
  await expect(timeline.locator('[onerror], [onclick], b')).toHaveCount(0);
  await expect(timeline.locator('a[href^="javascript:"]')).toHaveCount(0);
  // A Markdown image is a link, never loaded.
  await expect(answer.locator('a.md-image')).toHaveText('pixel');
  await answer.getByText('click', { exact: true }).click();
  await page.waitForTimeout(300);
  expect(await page.evaluate(() => (window as any).__pwned)).toBe(0);
});

test('a shell tool call shows its command, and its output when opened', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  await send(page, agent, 'list the files');
  const p = pane(page, agent);
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'You asked:' })).toHaveAttribute('data-finished', 'true');
  const tool = p.getByTestId('tool-call');
  await expect(tool).toHaveAttribute('data-tool-kind', 'shell');
  await expect(tool.locator('summary')).toContainText('$ ls');
  await tool.locator('summary').click();
  await expect(tool.getByTestId('tool-output')).toContainText('README.md');
});
