// The Schedules view (docs/web.md, "Schedules"): schedules made from the page's form on a daemon
// whose floor allows a tick a second (`--schedule-floor 1s`), each firing within about two
// seconds and shown in the view's firings with its agent and its turn's outcome; the daemon's
// refusals in its words; pause, the firing's agent opened with the tick's notice in its timeline,
// and delete. The daemon's HTTP API is the reference for what the view shows.
import { expect, type Page, test } from '@playwright/test';
import { createAgent, daemonPerTest, pane, replicaRows, shot } from './helpers';

const run = daemonPerTest(20, {}, ['--schedule-floor', '1s']);

async function openSchedules(page: Page) {
  await page.getByTestId('open-schedules').click();
  await expect(page.getByTestId('schedules')).toBeVisible();
}

test('a schedule made in the view fires into an agent each second; pause, refusals, the agent, delete', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  await openSchedules(page);
  const view = page.getByTestId('schedules');
  await expect(view).toContainText('No schedule yet.');

  const form = view.getByTestId('schedule-form');
  await form.getByTestId('schedule-id').fill('tick');
  await form.getByTestId('schedule-every').fill('1s');
  await form.getByTestId('schedule-target-kind').selectOption('agent');
  await form.getByTestId('schedule-agent').selectOption(agent);
  await form.getByTestId('schedule-prompt').fill('tick {{tick}} of {{schedule}}');
  await form.getByTestId('schedule-create').click();

  const row = view.locator('[data-testid="schedule"][data-schedule="tick"]');
  await expect(row).toHaveAttribute('data-state', 'active');
  await expect(row).toContainText('every 1s');
  await expect(row.getByTestId('schedule-target')).toContainText(`agent ${agent}`);
  await expect(form.getByTestId('schedule-id')).toHaveValue('');
  // Its firings are shown once made: the first tick, a second after the creation.
  const fired = row.locator('[data-testid="firing"][data-outcome="fired"]').last();
  await expect(fired).toBeVisible({ timeout: 15000 });
  await row.getByRole('button', { name: 'Pause' }).click();
  await expect(row).toHaveAttribute('data-state', 'paused');
  await expect(row.getByTestId('schedule-ticks')).toContainText('none while paused');
  const shown = await run.daemon.api('GET', '/v1/schedules/tick?firings=100');
  expect(shown.paused).toBe(true);
  expect(shown.nextTick).toBeNull();
  const first = shown.firings.at(-1);
  expect(first).toMatchObject({ outcome: 'fired', agent, clientMessageId: `schedule:tick:${first.tick}` });
  // The oldest row the view shows is that firing, its turn completed (read again every 2 s).
  await expect(fired.locator('td').first()).toHaveText(first.tick);
  await expect(fired.locator(`button[title="${agent}"]`)).toHaveText(agent);
  await expect(fired.locator('td').nth(3)).toHaveText('completed');
  await page.screenshot({ path: shot('web-schedules.png') });

  // The daemon's refusals, in its words; nothing made.
  await form.getByTestId('schedule-id').fill('tick');
  await form.getByTestId('schedule-create').click();
  await expect(form.getByTestId('schedule-create-error')).toContainText('a schedule tick exists');
  await form.getByTestId('schedule-id').fill('fast');
  await form.getByTestId('schedule-every').fill('500ms');
  await form.getByTestId('schedule-create').click();
  await expect(form.getByTestId('schedule-create-error')).toContainText('an interval is a whole number');
  await expect(form.getByTestId('schedule-create-error')).toHaveAttribute('role', 'alert');
  expect((await run.daemon.api('GET', '/v1/schedules')).schedules.map((s: any) => s.id)).toEqual(['tick']);

  // The firing's agent opens in a pane, whose timeline shows each tick as a notice before its
  // prompt (the newest in view; the first one read from the replica, the list being virtualized).
  await fired.locator(`button[title="${agent}"]`).click();
  await expect(page.getByTestId('schedules')).toHaveCount(0);
  const p = pane(page, agent);
  await expect(p.locator('[data-kind="notice"]').filter({ hasText: 'schedule tick: tick ' }).last()).toBeVisible();
  await expect
    .poll(async () => {
      const rows = await replicaRows(page, agent);
      const notice = rows.findIndex((r) => r.text === `schedule tick: tick ${first.tick}`);
      const prompt = rows.findIndex((r) => r.text === `tick ${first.tick} of tick`);
      return notice >= 0 && prompt > notice;
    })
    .toBe(true);

  // Resume, then delete (asked once more): gone from the view and from the daemon.
  await openSchedules(page);
  await row.getByRole('button', { name: 'Resume' }).click();
  await expect(row).toHaveAttribute('data-state', 'active');
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.getByRole('button', { name: 'Delete: sure?' }).click();
  await expect(row).toHaveCount(0);
  await expect(view).toContainText('No schedule yet.');
  expect((await run.daemon.api('GET', '/v1/schedules')).schedules).toEqual([]);
});

test('a schedule that makes a new agent each tick, titled from the tick', async ({ page }) => {
  await page.goto(run.daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await openSchedules(page);
  const view = page.getByTestId('schedules');
  const form = view.getByTestId('schedule-form');
  await form.getByTestId('schedule-id').fill('fresh');
  await form.getByTestId('schedule-every').fill('1s');
  await form.getByTestId('schedule-provider').fill('scripted');
  await form.getByTestId('schedule-cwd').fill('/tmp');
  await form.getByTestId('schedule-title').fill('Made by {{schedule}}');
  await form.getByTestId('schedule-prompt').fill('hello from {{schedule}}');
  await form.getByTestId('schedule-missed').selectOption('run-once');
  await form.getByTestId('schedule-create').click();

  const row = view.locator('[data-testid="schedule"][data-schedule="fresh"]');
  await expect(row.getByTestId('schedule-target')).toContainText('new scripted agent in /tmp · missed ticks: run-once');
  const fired = row.locator('[data-testid="firing"][data-outcome="fired"]').last();
  await expect(fired).toBeVisible({ timeout: 15000 });
  await row.getByRole('button', { name: 'Pause' }).click();
  await expect(row).toHaveAttribute('data-state', 'paused');
  const made = (await run.daemon.api('GET', '/v1/schedules/fresh?firings=100')).firings.at(-1).agent as string;
  expect((await run.daemon.api('GET', `/v1/agents/${made}`)).title).toBe('Made by fresh');
  // The new agent is listed by the page, and its title names it in the firings.
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${made}"]`)).toContainText('Made by fresh');
  await expect(fired.locator(`button[title="${made}"]`)).toHaveText('Made by fresh');
});
