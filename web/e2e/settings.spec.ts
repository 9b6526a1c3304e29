// The agent's mode, model and thinking pickers (`mode.set`, `model.set`, `thinking.set`) and
// slash command completion in the composer, from the runtime's capabilities (docs/protocol.md,
// "Agent capabilities"). The scripted runtime offers modes default ("Ask") and
// bypassPermissions ("Never ask"), models scripted-1 ("Scripted") and scripted-2 ("Scripted
// (fast)"), thinking options off and on, and one command, help.
import { expect, type Page, test } from '@playwright/test';
import { createAgent, daemonPerTest, pane, shot } from './helpers';

const run = daemonPerTest(10);

const snapshot = (agent: string) => run.daemon.api('GET', `/v1/agents/${agent}`);

async function openAgent(page: Page, agent: string) {
  await page.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-open`).click();
  await expect(pane(page, agent)).toBeVisible();
}

test('mode, model and thinking pickers set the agent; slash commands complete in the composer', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  const p = pane(page, agent);

  // Each picker is labelled, lists the runtime's choices by label and shows the current value
  // (thinking: the runtime's default until one is set).
  const mode = p.getByLabel('Mode', { exact: true });
  const model = p.getByLabel('Model', { exact: true });
  const thinking = p.getByLabel('Thinking', { exact: true });
  await expect(mode).toHaveAttribute('data-testid', 'mode-picker');
  await expect(mode.locator('option')).toHaveText(['Ask', 'Never ask']);
  await expect(mode).toHaveValue('default');
  await expect(model.locator('option')).toHaveText(['Scripted', 'Scripted (fast)']);
  await expect(model).toHaveValue('scripted-1');
  await expect(thinking.locator('option')).toHaveText(['Default', 'Off', 'On']);
  await expect(thinking).toHaveValue('');

  // Each change reaches the daemon's snapshot.
  await model.selectOption('scripted-2');
  await expect.poll(async () => (await snapshot(agent)).model).toBe('scripted-2');
  await expect(model).toHaveValue('scripted-2');
  await thinking.selectOption('on');
  await expect.poll(async () => (await snapshot(agent)).thinking).toBe('on');
  await expect(thinking).toHaveValue('on');
  await expect(thinking.locator('option')).toHaveText(['Off', 'On']); // no default once set
  // With the keyboard: the focused picker's next choice.
  await mode.focus();
  await mode.press('ArrowDown');
  await expect.poll(async () => (await snapshot(agent)).mode).toBe('bypassPermissions');
  await expect(mode).toHaveValue('bypassPermissions');
  await expect(p.getByTestId('setting-error')).toHaveCount(0);

  // A reload shows the daemon's values.
  await page.reload();
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await openAgent(page, agent);
  await expect(mode).toHaveValue('bypassPermissions');
  await expect(model).toHaveValue('scripted-2');
  await expect(thinking).toHaveValue('on');

  // Slash completion: `/he` offers help (with its description); a click completes it.
  const composer = p.getByTestId('composer');
  const menu = p.getByTestId('slash-menu');
  await composer.click();
  await composer.pressSequentially('/he');
  await expect(menu).toBeVisible();
  await expect(menu.getByRole('option')).toHaveCount(1);
  await expect(menu.getByRole('option', { name: /help/ })).toContainText('What the scripted agent understands');
  await expect(menu.getByRole('option').first()).toHaveAttribute('aria-selected', 'true');
  await expect(composer).toHaveAttribute('aria-activedescendant', (await menu.getByRole('option').first().getAttribute('id'))!);
  await menu.getByRole('option', { name: /help/ }).click();
  await expect(composer).toHaveValue('/help ');
  await expect(menu).toHaveCount(0);
  await expect(composer).toBeFocused();

  // With the keyboard: Escape closes the list (and interrupts nothing), Tab or Enter completes.
  await composer.fill('');
  await composer.pressSequentially('/h');
  await expect(menu).toBeVisible();
  await composer.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(composer).toHaveValue('/h');
  await composer.pressSequentially('e');
  await expect(menu).toBeVisible();
  await composer.press('ArrowDown'); // one command: stays on it
  await composer.press('Tab');
  await expect(composer).toHaveValue('/help ');
  await composer.fill('');
  await composer.pressSequentially('/');
  await expect(menu.getByRole('option')).toHaveCount(1);
  await composer.press('Enter');
  await expect(composer).toHaveValue('/help ');
  await expect(p.getByTestId('user-message')).toHaveCount(0); // completed, not sent

  // With the list closed, Enter sends.
  await composer.press('Enter');
  await expect(p.getByTestId('user-message')).toHaveCount(1);
  await expect(p.getByTestId('user-message')).toContainText('/help');
  await expect(composer).toHaveValue('');
  await expect(p.getByTestId('assistant-message').last()).toHaveAttribute('data-finished', 'true');
  await composer.pressSequentially('/he');
  await expect(menu).toBeVisible();
  await page.screenshot({ path: shot('web-settings.png') });
  await composer.fill('');
  // No command matches: no list, Enter sends.
  await composer.pressSequentially('/zzz');
  await expect(menu).toHaveCount(0);
  await composer.press('Enter');
  await expect(p.getByTestId('user-message')).toHaveCount(2);
});

test("a change the daemon refuses shows its error and the picker keeps the agent's value", async ({ page }) => {
  // The page's model.set asks for a model the runtime does not offer: the daemon answers with
  // an error frame.
  await page.routeWebSocket(/\/ws/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const text = String(message);
      server.send(text.includes('"type":"model.set"') ? text.replace('"model":"scripted-2"', '"model":"no-such-model"') : text);
    });
  });
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  const p = pane(page, agent);
  const model = p.getByLabel('Model', { exact: true });
  await model.selectOption('scripted-2');
  await expect(p.getByTestId('setting-error')).toContainText('Model:');
  await expect(p.getByTestId('setting-error')).toContainText('no-such-model');
  await expect(model).toHaveValue('scripted-1');
  expect((await snapshot(agent)).model).toBe('scripted-1');
  // The next change that succeeds clears it.
  await p.getByLabel('Thinking', { exact: true }).selectOption('off');
  await expect(p.getByTestId('setting-error')).toHaveCount(0);
  await expect.poll(async () => (await snapshot(agent)).thinking).toBe('off');
});
