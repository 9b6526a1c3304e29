// Editable titles (`agents.rename`) and search (`search`), docs/protocol.md "Titles", "Search".
import { expect, type Page, test } from '@playwright/test';
import { createAgent, daemonPerTest, pane, send, shot } from './helpers';

const run = daemonPerTest(10);

test('renaming an agent in one tab shows the new title in every tab', async ({ page, context }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  const other = await context.newPage();
  await other.goto(run.daemon.url);
  const otherRow = other.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-title`);
  await expect(otherRow).toHaveText(agent);

  await pane(page, agent).getByTestId('pane-title').click();
  const input = pane(page, agent).getByTestId('title-input');
  await input.fill('Parser refactor');
  await input.press('Enter');
  await expect(pane(page, agent).getByTestId('pane-title')).toHaveText('Parser refactor');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-title`)).toHaveText('Parser refactor');
  await expect(otherRow).toHaveText('Parser refactor');
  expect((await run.daemon.api('GET', `/v1/agents/${agent}`)).title).toBe('Parser refactor');

  // A title the daemon refuses (control characters) shows its error and changes nothing.
  await pane(page, agent).getByTestId('pane-title').click();
  await input.fill('bad\u0007title');
  await input.press('Enter');
  await expect(pane(page, agent).getByTestId('title-error')).toBeVisible();
  await input.press('Escape');
  await expect(pane(page, agent).getByTestId('pane-title')).toHaveText('Parser refactor');
});

async function search(page: Page, q: string) {
  const box = page.getByTestId('search-input');
  await box.fill(q);
  await box.press('Enter');
}

test('search finds a word in any agent; a hit opens the history around it', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  await send(page, agent, 'the zebracorn parser');
  const p = pane(page, agent);
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'You asked: the zebracorn parser' })).toHaveAttribute(
    'data-finished',
    'true',
  );
  for (const text of ['second prompt', 'third prompt']) {
    await send(page, agent, text);
    await expect(p.getByTestId('assistant-message').filter({ hasText: `You asked: ${text}` })).toHaveAttribute(
      'data-finished',
      'true',
    );
  }
  // The index follows the log about 200 ms behind.
  const hits = page.getByTestId('search-hit');
  await expect(async () => {
    await search(page, 'zebracorn');
    await expect(hits.filter({ hasText: 'assistant' })).toHaveCount(1, { timeout: 1000 });
  }).toPass({ timeout: 20000 });
  await expect(hits.first().locator('mark')).toHaveText('zebracorn');
  await page.screenshot({ path: shot('web-search.png') });

  // Open the assistant's hit from another agent: its pane shows the history around the hit.
  const other = await createAgent(page);
  expect(other).not.toBe(agent);
  await hits.filter({ hasText: 'assistant' }).click();
  const history = pane(page, agent).getByTestId('history');
  await expect(history).toBeVisible();
  const hit = history.getByTestId('history-hit');
  await expect(hit).toContainText('You asked: the zebracorn parser');
  await expect(hit).toBeInViewport();
  await history.getByTestId('back-to-live').click();
  await expect(pane(page, agent).getByTestId('timeline')).toContainText('You asked: third prompt');

  // Scoped to the focused agent: the other agent has no such word.
  await page.locator(`[data-testid="agent-row"][data-agent="${other}"] .agent-open`).click();
  await page.getByTestId('search-scope').selectOption('agent');
  await search(page, 'zebracorn');
  await expect(page.getByTestId('search-hits')).toContainText('No match.');
});
