// A new build of the page reaches an installed one (docs/web.md, "The service worker"): the
// daemon serves a copy of web/dist, the test turns the copy into another build (a changed
// index.html, and the sw.js of that build: another version), the browser's update check finds
// it, the new worker replaces the old cache with its own, the page says a new version is
// installed, and the shell served offline is the new one.
import { expect, test } from '@playwright/test';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Daemon, WEB_ROOT } from './daemon';

test('a new build replaces the cached shell and the page offers a reload', async ({ page, context }) => {
  const root = mkdtempSync(path.join(tmpdir(), 'agentstream-web-'));
  cpSync(WEB_ROOT, root, { recursive: true });
  const daemon = new Daemon([], { webRoot: root });
  try {
    await daemon.start();
    await page.goto(daemon.url);
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    const before = await page.evaluate(() => caches.keys());
    const shells = before.filter((k) => k.startsWith('agentstream-shell-'));
    expect(shells).toHaveLength(1);
    const oldVersion = shells[0].slice('agentstream-shell-'.length);

    // The next build: another index.html, and a worker of another version.
    const index = path.join(root, 'index.html');
    writeFileSync(index, readFileSync(index, 'utf8').replace('</body>', '<!-- the next build --></body>'));
    const sw = path.join(root, 'sw.js');
    const next = 'feedfacefeedface';
    writeFileSync(sw, readFileSync(sw, 'utf8').replaceAll(oldVersion, next));
    await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r!.update()));

    await expect(page.getByTestId('updated')).toBeVisible();
    // The old build's cache is gone, the new one in its place.
    await expect
      .poll(() => page.evaluate(() => caches.keys().then((ks) => ks.filter((k) => k.startsWith('agentstream-shell-')))))
      .toEqual([`agentstream-shell-${next}`]);
    await context.setOffline(true);
    await page.reload();
    expect(await page.content()).toContain('the next build');
    await expect(page.getByTestId('inbox').or(page.getByTestId('agents')).first()).toBeAttached();
  } finally {
    await daemon.dispose(test.info());
    rmSync(root, { recursive: true, force: true });
  }
});
