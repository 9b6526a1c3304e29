// Editable titles (`agents.rename`) and search (`search`), docs/protocol.md "Titles", "Search".
import { expect, type Page, test } from '@playwright/test';
import { Daemon } from './daemon';
import { createAgent, pane, send } from './helpers';

let daemon: Daemon;
const shot = (name: string) => (process.env.UPDATE_SCREENSHOTS ? `../docs/${name}` : `test-results/${name}`);

test.beforeEach(async () => {
  daemon = new Daemon(['--scripted-chunk-ms', '10']);
  await daemon.start();
});

test.afterEach(async () => {
  await daemon.dispose();
});

// Whether the daemon knows a WebSocket request type (a daemon built before it answers "unknown
// message type"): these tests need a daemon with `agents.rename` and `search`.
async function knows(page: Page, type: string, body: Record<string, unknown>): Promise<boolean> {
  await expect(page.getByTestId('connection')).toHaveText('connected');
  return page.evaluate(
    ([t, b]) =>
      (window as any).agentstream.transport.request({ type: t, ...(b as object) }).then(
        () => true,
        (e: Error) => !String(e.message).includes('unknown message type'),
      ),
    [type, body] as const,
  );
}

test('renaming an agent in one tab shows the new title in every tab', async ({ page, context }) => {
  await page.goto(daemon.url);
  test.skip(!(await knows(page, 'agents.rename', { agent: 'ses_none', title: 'x' })), 'the daemon has no agents.rename');
  const agent = await createAgent(page);
  const other = await context.newPage();
  await other.goto(daemon.url);
  const otherRow = other.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-title`);
  await expect(otherRow).toHaveText(agent);

  await pane(page, agent).getByTestId('pane-title').click();
  const input = pane(page, agent).getByTestId('title-input');
  await input.fill('Parser refactor');
  await input.press('Enter');
  await expect(pane(page, agent).getByTestId('pane-title')).toHaveText('Parser refactor');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-title`)).toHaveText('Parser refactor');
  await expect(otherRow).toHaveText('Parser refactor');
  expect((await daemon.api('GET', `/v1/agents/${agent}`)).title).toBe('Parser refactor');

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
  await page.goto(daemon.url);
  test.skip(!(await knows(page, 'search', { q: 'probe' })), 'the daemon has no search');
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
