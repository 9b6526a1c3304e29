// Pairing a phone and revoking it (docs/web.md, "Pairing and devices"), against a daemon with an
// owner token: the owner creates a pairing over HTTP, a fresh browser opens its link, keeps the
// device token (never in the address), lists the agents over /ws with it and shows itself in
// Devices; revoking it with the owner token closes the page's socket and the page says so.
import { expect, test } from '@playwright/test';
import { Daemon } from './daemon';

const OWNER = 'owner-token-for-the-pairing-test';

let daemon: Daemon;
test.beforeEach(async () => {
  daemon = new Daemon(['--token', OWNER, '--scripted-chunk-ms', '20']);
  await daemon.start();
});
test.afterEach(async () => {
  await daemon.dispose(test.info());
});

async function owner(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(daemon.url + path, {
    method,
    headers: { authorization: `Bearer ${OWNER}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

test.use({ viewport: { width: 390, height: 844 } });

test('a phone pairs with a link, works with its device token, and is told when it is revoked', async ({ browser }) => {
  const agent = (await owner('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'Paired work' })).id as string;
  const pairing = await owner('POST', '/v1/pairings', { name: 'test phone', expiresInMs: 60000 });
  expect(pairing.code).toMatch(/^asp_[A-Za-z0-9_-]{32}$/);
  expect(pairing.url).toBe(`${daemon.url}/#pair=${pairing.code}`);

  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(pairing.url);
  await expect(page.getByTestId('pairing-ok')).toContainText('test phone');
  // The code left the address at once; the token is kept in the browser, not in any URL.
  expect(await page.evaluate(() => location.href)).toBe(`${daemon.url}/`);
  const token = await page.evaluate(() => localStorage.getItem('agentstream.deviceToken'));
  expect(token).toMatch(/^asd_/);

  // Its token works: the agents come over /ws.
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await page.getByTestId('menu').click();
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toContainText('Paired work');

  // The device is listed, to the owner and in the page's Devices view (as this browser).
  const devices = (await owner('GET', '/v1/devices')).devices as any[];
  const device = devices.find((d) => d.name === 'test phone');
  expect(device).toBeTruthy();
  await page.getByTestId('open-settings').click();
  const row = page.locator(`[data-testid="device"][data-device="${device.id}"]`);
  await expect(row).toContainText('this browser');
  await expect(page.getByTestId('whoami')).toContainText('test phone');
  // Renamed from the page.
  await row.getByTestId('device-rename').click();
  await row.getByTestId('device-name-input').fill('pocket');
  await row.getByTestId('device-save').click();
  await expect(row.getByTestId('device-name')).toContainText('pocket');
  expect(((await owner('GET', '/v1/devices')).devices as any[]).find((d) => d.id === device.id).name).toBe('pocket');
  // This device's notification settings: a kind switched off and previews on, saved on the
  // daemon as the device's settings.
  const notifications = page.getByTestId('notifications');
  await expect(notifications.getByTestId('kind-turnFinished')).toBeChecked();
  await notifications.getByTestId('kind-turnFinished').uncheck();
  await expect(notifications.getByTestId('notifications-status')).toHaveText('Saved.');
  await notifications.getByTestId('previews').check();
  await expect
    .poll(async () => {
      const s = await owner('GET', `/v1/devices/${device.id}/notifications`);
      return [s.kinds.turnFinished, s.kinds.permission, s.previews];
    })
    .toEqual([false, true, true]);
  await page.getByTestId('settings-close').click();

  // The same code does not pair twice.
  const again = await context.newPage();
  await again.goto(pairing.url);
  await expect(again.getByTestId('pairing-error')).toContainText('already used, has expired, or is unknown');
  await again.close();

  // Revoked by the owner: the daemon closes the page's socket, the page says so and forgets the
  // token.
  await owner('DELETE', `/v1/devices/${device.id}`);
  await expect(page.getByTestId('revoked')).toBeVisible({ timeout: 5000 });
  await expect(page.getByTestId('connection')).toHaveText('reconnecting…');
  expect(await page.evaluate(() => localStorage.getItem('agentstream.deviceToken'))).toBeNull();
  await context.close();
});

test('an unknown pairing code says so and leaves no token', async ({ page }) => {
  await page.goto(`${daemon.url}/#pair=asp_${'A'.repeat(32)}`);
  await expect(page.getByTestId('pairing-error')).toContainText('already used, has expired, or is unknown');
  expect(await page.evaluate(() => location.hash)).toBe('');
  expect(await page.evaluate(() => localStorage.getItem('agentstream.deviceToken'))).toBeNull();
});
