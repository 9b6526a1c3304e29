// The page's layout and habits: a phone-sized window (one pane, the agent list as a drawer), the
// dark theme, the shortcuts overlay, titles and unread markers, the permission prompt.
import { expect, type Page, test } from '@playwright/test';
import { daemonPerTest, pane, send, shot } from './helpers';

const run = daemonPerTest(20);

async function noHorizontalScroll(page: Page) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: document.scrollingElement!.scrollWidth,
    width: window.innerWidth,
  }));
  expect(scroll).toBeLessThanOrEqual(width);
}

// Creates an agent from the drawer (the phone layout), titled `title`; returns its id.
async function createFromDrawer(page: Page, title: string): Promise<string> {
  await page.getByTestId('menu').click();
  await expect(page.getByTestId('sidebar')).toBeInViewport();
  await expect(page.getByTestId('connection')).toHaveText('connected');
  const before = await page.getByTestId('agent-row').count();
  await page.getByTestId('title').fill(title);
  await page.getByTestId('create').click();
  await expect(page.getByTestId('agent-row')).toHaveCount(before + 1);
  // Opening it closes the drawer.
  await expect(page.getByTestId('sidebar')).not.toBeInViewport();
  const p = page.locator('[data-testid="pane"][data-agent]:visible');
  await expect(p).toHaveCount(1);
  return (await p.getAttribute('data-agent'))!;
}

test('phone, 390x844: one pane, the agent list as a drawer, every action reachable, no horizontal scroll', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(run.daemon.url);
  await expect(page.getByTestId('sidebar')).not.toBeInViewport();
  await noHorizontalScroll(page);
  await page.getByTestId('open-agents').filter({ visible: true }).click();
  await expect(page.getByTestId('sidebar')).toBeInViewport();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('sidebar')).not.toBeInViewport();

  const first = await createFromDrawer(page, 'Phone one');
  await expect(page.getByTestId('topbar-title')).toHaveText('Phone one');
  await send(page, first, 'hello from the phone');
  const p1 = pane(page, first);
  await expect(p1.getByTestId('assistant-message').filter({ hasText: 'You asked: hello from the phone' })).toHaveAttribute(
    'data-finished',
    'true',
  );
  await noHorizontalScroll(page);

  // A permission request: the prompt pinned above the composer, in view, answered there.
  await send(page, first, 'needs permission please');
  const banner = p1.getByTestId('permission-banner');
  await expect(banner).toBeInViewport();
  await expect(banner).toContainText('touch notes.txt');
  await expect(p1.getByTestId('permission')).toContainText('$ touch notes.txt');
  await expect(page.getByTestId('permission-count')).toHaveText('1 waiting');
  await noHorizontalScroll(page);
  await page.screenshot({ path: shot('web-phone.png') });
  await banner.getByTestId('prompt-allow_once').click();
  await expect(p1.getByTestId('permission')).toHaveAttribute('data-decision', 'allow');
  await expect(banner).toHaveCount(0);
  await expect(p1.getByTestId('assistant-message').filter({ hasText: 'You asked: needs permission please' })).toHaveAttribute(
    'data-finished',
    'true',
  );

  // A second agent, then switch back to the first through the drawer, by title.
  const second = await createFromDrawer(page, 'Phone two');
  expect(second).not.toBe(first);
  await page.getByTestId('menu').click();
  await page.locator(`[data-testid="agent-row"][data-agent="${first}"] .agent-open`).click();
  await expect(page.getByTestId('sidebar')).not.toBeInViewport();
  await expect(pane(page, first)).toBeVisible();
  await expect(pane(page, second)).toHaveCount(0);
  await noHorizontalScroll(page);
  // The composer and Send stay on screen.
  await expect(pane(page, first).getByTestId('send')).toBeInViewport();
});

test('dark theme follows prefers-color-scheme', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(run.daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await page.getByTestId('title').fill('Dark agent');
  await page.getByTestId('create').click();
  const p = page.locator('[data-testid="pane"][data-agent]').first();
  const agent = (await p.getAttribute('data-agent'))!;
  const composer = pane(page, agent).getByTestId('composer');
  await composer.fill('\n\n```cpp\nint main() { return 0; } // done\n```');
  await composer.press('Enter');
  await expect(pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'You asked:' })).toHaveAttribute(
    'data-finished',
    'true',
  );
  const colors = await page.evaluate(() => {
    const css = (sel: string, prop: string) => getComputedStyle(document.querySelector(sel)!).getPropertyValue(prop);
    return {
      body: css('body', 'background-color'),
      text: css('body', 'color'),
      row: css('[data-testid="assistant-message"]', 'background-color'),
      code: css('[data-testid="assistant-message"] pre.md-code', 'background-color'),
      keyword: css('[data-testid="assistant-message"] .hljs-keyword, [data-testid="assistant-message"] .hljs-type', 'color'),
    };
  });
  expect(colors.body).toBe('rgb(21, 22, 26)');
  expect(colors.text).toBe('rgb(232, 232, 238)');
  expect(colors.row).toBe('rgb(29, 31, 36)');
  expect(colors.code).toBe('rgb(16, 17, 22)');
  expect(['rgb(210, 168, 255)', 'rgb(255, 166, 87)']).toContain(colors.keyword);
  await page.screenshot({ path: shot('web-dark.png') });
  // And light when the system is light.
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(247, 247, 248)');
});

test('shortcuts: ? lists them, Alt+arrows switch agents, titles and unread markers in the list', async ({ page }) => {
  await page.goto(run.daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await page.getByTestId('title').fill('First agent');
  await page.getByTestId('create').click();
  await expect(page.getByTestId('agent-row')).toHaveCount(1);
  await page.getByTestId('title').fill('Second agent');
  await page.getByTestId('create').click();
  await expect(page.getByTestId('agent-row')).toHaveCount(2);
  const rows = page.getByTestId('agent-row');
  await expect(rows.locator('.agent-title')).toHaveText(['Second agent', 'First agent']);
  const second = (await rows.first().getAttribute('data-agent'))!;
  const first = (await rows.last().getAttribute('data-agent'))!;

  await page.locator('body').click({ position: { x: 700, y: 400 } });
  await page.keyboard.press('?');
  await expect(page.getByTestId('help')).toBeVisible();
  await expect(page.getByTestId('help')).toContainText('Alt+↑ / Alt+↓');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('help')).toHaveCount(0);

  // The focused pane shows the second agent; Alt+Down opens the next one (the first) there.
  await expect(page.locator('.pane.focused')).toHaveAttribute('data-agent', second);
  await page.keyboard.press('Alt+ArrowDown');
  await expect(page.locator('.pane.focused')).toHaveAttribute('data-agent', first);
  // The second agent is shown nowhere now: a turn it finishes marks it unread.
  await run.daemon.api('POST', `/v1/agents/${second}/messages`, { text: 'work while away', clientMessageId: 'away-1' });
  const secondRow = page.locator(`[data-testid="agent-row"][data-agent="${second}"]`);
  await expect(secondRow).toHaveAttribute('data-unread', 'true');
  await expect(secondRow.getByTestId('unread')).toBeVisible();
  await page.keyboard.press('Alt+ArrowUp');
  await expect(page.locator('.pane.focused')).toHaveAttribute('data-agent', second);
  await expect(secondRow).toHaveAttribute('data-unread', 'false');
  // "/" focuses the composer.
  await page.locator('body').click({ position: { x: 700, y: 400 } });
  await page.keyboard.press('/');
  await expect(pane(page, second).getByTestId('composer')).toBeFocused();
});
