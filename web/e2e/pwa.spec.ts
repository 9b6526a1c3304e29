// The installable app at 390 x 844 (docs/web.md, "Install on a phone"): the manifest and its
// icons, the service worker taking control, a reload with the daemon out of reach showing the
// last known agents marked stale, the inbox answering a permission in one tap, and a
// notification's link opening an agent at an item.
import { expect, test } from '@playwright/test';
import { daemonPerTest, pane, shot } from './helpers';

// Restartable: the out-of-reach part stops the daemon and starts it again (below).
const run = daemonPerTest(20, { restartable: true });

test.use({ viewport: { width: 390, height: 844 } });

test('manifest and icons, service worker, the inbox answering a permission, a reload out of reach with stale agents', async ({
  page,
}) => {
  const daemon = run.daemon;
  const first = (await daemon.api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'Pocket one' })).id as string;
  const second = (await daemon.api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'Pocket two' }))
    .id as string;
  await page.goto(daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');

  // The manifest, as the browser finds it: linked from the page, served as a manifest.
  const manifestHref = await page.locator('link[rel="manifest"]').getAttribute('href');
  const manifestRes = await page.request.get(new URL(manifestHref!, daemon.url).href);
  expect(manifestRes.status()).toBe(200);
  expect(manifestRes.headers()['content-type']).toBe('application/manifest+json');
  const manifest = await manifestRes.json();
  expect(manifest).toMatchObject({
    name: 'agentstream',
    short_name: 'agentstream',
    start_url: '/',
    scope: '/',
    display: 'standalone',
  });
  expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/);
  expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/);
  const purposes = (manifest.icons as any[]).map((i) => `${i.sizes} ${i.purpose}`).sort();
  expect(purposes).toEqual(['192x192 any', '512x512 any', '512x512 maskable']);
  // Each icon loads in the page at the size the manifest says.
  for (const icon of manifest.icons as { src: string; sizes: string }[]) {
    const size = await page.evaluate(
      (src) =>
        new Promise<string>((resolve, reject) => {
          const img = new Image();
          img.onload = () => resolve(`${img.naturalWidth}x${img.naturalHeight}`);
          img.onerror = () => reject(new Error(`icon ${src} did not load`));
          img.src = src;
        }),
      icon.src,
    );
    expect(size).toBe(icon.sizes);
  }
  await expect(page.locator('meta[name="theme-color"]').first()).toHaveAttribute('content', /^#/);
  await expect(page.locator('meta[name="viewport"]')).toHaveAttribute('content', /viewport-fit=cover/);

  // The service worker: served uncached, as JavaScript; it controls the page after a reload.
  const sw = await page.request.get(`${daemon.url}/sw.js`);
  expect(sw.headers()['content-type']).toMatch(/^text\/javascript/);
  expect(sw.headers()['cache-control']).toBe('no-cache');
  expect(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.scope))).toBe(`${daemon.url}/`);
  await page.reload();
  expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(`${daemon.url}/sw.js`);
  await expect(page.getByTestId('connection')).toHaveText('connected');

  // The inbox is the phone's home screen. A permission request of an agent shown nowhere is
  // answered there in one tap.
  const inbox = page.getByTestId('inbox');
  await expect(inbox).toBeInViewport();
  await expect(page.getByTestId('inbox-empty')).toBeVisible();
  await daemon.api('POST', `/v1/agents/${first}/messages`, { text: 'needs permission please', clientMessageId: 'pwa-1' });
  const entry = inbox.locator(`[data-testid="inbox-entry"][data-agent="${first}"]`);
  await expect(entry).toHaveAttribute('data-kind', 'permission');
  await expect(entry).toContainText('Pocket one');
  await expect(page.getByTestId('inbox-button')).toContainText('1');
  await page.screenshot({ path: shot('web-inbox.png') });
  const allow = entry.getByTestId('inbox-allow');
  const box = (await allow.boundingBox())!;
  expect(box.height).toBeGreaterThanOrEqual(44);
  expect(box.width).toBeGreaterThanOrEqual(44);
  await allow.click();
  // The turn goes on and finishes: the daemon recorded the answer, and the agent, not seen since,
  // is in the inbox as finished.
  await expect(entry).toHaveAttribute('data-kind', 'finished');
  const items = await daemon.allItems(first);
  expect(items.find((i) => i.kind === 'permission')?.decision).toBe('allow');
  // Opening it from the inbox shows it; back home, it is no longer news.
  await entry.locator('.inbox-open').click();
  await expect(pane(page, first).getByTestId('assistant-message').last()).toContainText('You asked: needs permission please');
  // Every control on screen is a touch target of at least 44 x 44 px.
  const targets = await page.evaluate(() => {
    const shown = [...document.querySelectorAll('button, select, input:not([type="checkbox"]), textarea, .file')]
      .map((el) => ({ el, r: el.getBoundingClientRect() }))
      .filter(({ el, r }) => r.width > 0 && r.bottom > 0 && r.top < innerHeight && getComputedStyle(el).visibility !== 'hidden');
    const small = shown
      .filter(({ r }) => r.width < 44 || r.height < 44)
      .map(
        ({ el, r }) =>
          `${el.tagName} "${(el.textContent ?? '').trim().slice(0, 20)}" ${Math.round(r.width)}x${Math.round(r.height)}`,
      );
    return { count: shown.length, small };
  });
  expect(targets.count).toBeGreaterThan(8);
  expect(targets.small).toEqual([]);
  await page.getByTestId('inbox-button').click();
  await expect(page.getByTestId('inbox-empty')).toBeVisible();

  // The last known agents are kept in the browser (written at most every 2 s).
  await expect
    .poll(() => page.evaluate(() => JSON.parse(localStorage.getItem('agentstream.agents') ?? '{"agents":[]}').agents.length))
    .toBe(2);

  // The daemon out of reach: the reload is served by the service worker, the page shows the
  // agents it knew, marked stale. The daemon is stopped (its front then closes every connection
  // at once) rather than the browser set offline: Chromium's offline emulation does not reliably
  // cover WebSockets, and a socket left pending, never opened nor closed, would keep the page
  // from knowing that the daemon is out of reach.
  await daemon.stop();
  await page.reload();
  const stale = page.getByTestId('inbox').getByTestId('stale');
  await expect(stale).toBeInViewport();
  await expect(stale).toContainText('last confirmed');
  await expect(page.getByTestId('connection')).toHaveText('reconnecting…');
  await page.getByTestId('menu').click();
  const rows = page.getByTestId('agent-row');
  await expect(rows).toHaveCount(2);
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${second}"]`)).toContainText('Pocket two');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${first}"]`)).toBeInViewport();
  await page.keyboard.press('Escape');

  // In reach again: the page connects and the list is no longer stale.
  await daemon.start();
  await expect(page.getByTestId('connection')).toHaveText('connected', { timeout: 20000 });
  await expect(page.getByTestId('stale')).toHaveCount(0);
});

test('a notification link opens the agent at the item', async ({ page }) => {
  const daemon = run.daemon;
  const agent = (await daemon.api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'Linked' })).id as string;
  await daemon.api('POST', `/v1/agents/${agent}/messages`, { text: 'first words', clientMessageId: 'l-1' });
  await expect.poll(async () => (await daemon.api('GET', `/v1/agents/${agent}`)).status).toBe('idle');
  const items = await daemon.allItems(agent);
  const reply = items.find((i) => i.kind === 'assistant_message' && String(i.text).includes('You asked'))!;
  const cursor = `1:${reply.seqEnd}`;
  await page.goto(`${daemon.url}/#agent=${agent}&cursor=${cursor}`);
  const p = pane(page, agent);
  await expect(p.locator('.history-hit')).toContainText('You asked: first words');
  // The link is not kept in the address.
  await expect.poll(() => page.evaluate(() => location.hash)).toBe('');
});

// Speech cannot be spoken to a headless browser: the recognizer is the page's
// webkitSpeechRecognition replaced by an init script that "hears" a fixed phrase, as the browser's
// would deliver it (an interim result, then the final one, then the end).
test('voice input: hidden without speech recognition, dictates into the composer with it', async ({ page, context }) => {
  const agent = (await run.daemon.api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'Voice' })).id as string;
  const bare = await context.newPage();
  await bare.addInitScript(() => {
    delete (window as any).SpeechRecognition;
    delete (window as any).webkitSpeechRecognition;
  });
  await bare.goto(`${run.daemon.url}/#agent=${agent}`);
  await expect(pane(bare, agent).getByTestId('composer')).toBeVisible();
  await expect(pane(bare, agent).getByTestId('voice')).toHaveCount(0);
  await bare.close();

  await page.addInitScript(() => {
    class Heard {
      lang = '';
      interimResults = false;
      continuous = false;
      onresult: ((e: any) => void) | null = null;
      onerror: ((e: any) => void) | null = null;
      onend: (() => void) | null = null;
      start() {
        const result = (text: string, isFinal: boolean) => Object.assign([{ transcript: text, confidence: 0.9 }], { isFinal });
        setTimeout(() => this.onresult?.({ results: [result('run the', false)] }), 50);
        setTimeout(() => this.onresult?.({ results: [result('run the tests', true)] }), 100);
        setTimeout(() => this.onend?.(), 150);
      }
      stop() {
        this.onend?.();
      }
      abort() {}
    }
    (window as any).webkitSpeechRecognition = Heard;
    delete (window as any).SpeechRecognition;
  });
  await page.goto(`${run.daemon.url}/#agent=${agent}`);
  const p = pane(page, agent);
  await p.getByTestId('composer').fill('please');
  const voice = p.getByTestId('voice');
  const box = (await voice.boundingBox())!;
  expect(box.height).toBeGreaterThanOrEqual(44);
  await voice.click();
  await expect(p.getByTestId('composer')).toHaveValue('please run the tests');
  await expect(voice).toHaveAttribute('aria-pressed', 'false');
  await p.getByTestId('send').click();
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'You asked: please run the tests' })).toHaveAttribute(
    'data-finished',
    'true',
  );
});

// A push message as the push service would hand it to the service worker (Chrome's DevTools
// protocol, ServiceWorker.deliverPushMessage): shown once per agent and cursor, tagged with the
// agent, linking to the agent at the item.
test('push: the service worker shows the daemon notification once per cursor', async ({ page, context }) => {
  await context.grantPermissions(['notifications'], { origin: run.daemon.url });
  await page.goto(run.daemon.url);
  await page.evaluate(() => navigator.serviceWorker.ready);
  const cdp = await context.newCDPSession(page);
  const registrations: { registrationId: string; scopeURL: string }[] = [];
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
  await cdp.send('ServiceWorker.enable');
  await expect.poll(() => registrations.length).toBeGreaterThan(0);
  const registrationId = registrations.find((r) => r.scopeURL === `${run.daemon.url}/`)!.registrationId;
  const push = (payload: unknown) =>
    cdp.send('ServiceWorker.deliverPushMessage', { origin: run.daemon.url, registrationId, data: JSON.stringify(payload) });
  const shown = () =>
    page.evaluate(() =>
      navigator.serviceWorker.ready
        .then((r) => r.getNotifications())
        .then((ns) => ns.map((n) => ({ title: n.title, body: n.body, tag: n.tag, url: n.data?.url }))),
    );
  const notice = { agent: 'ses_p1', cursor: '1:42', kind: 'permission', title: 'Parser', body: 'wants Bash', url: '/#x' };

  await push(notice);
  await expect
    .poll(shown)
    .toEqual([{ title: 'Parser needs your permission', body: 'wants Bash', tag: 'ses_p1', url: '/#agent=ses_p1&cursor=1%3A42' }]);
  // The same cursor again, and an older one: dropped (the shown one stays as it was).
  await push({ ...notice, body: 'again' });
  await push({ ...notice, cursor: '1:41', body: 'older' });
  // (A notice of another agent after them: once it shows, those two were handled.)
  await push({ ...notice, agent: 'ses_s', cursor: '1:1', body: 'sentinel' });
  await expect.poll(async () => (await shown()).map((n) => n.tag).sort()).toEqual(['ses_p1', 'ses_s']);
  expect((await shown()).find((n) => n.tag === 'ses_p1')!.body).toBe('wants Bash');
  // A later one replaces it (same tag); one of another agent is its own.
  await push({ ...notice, cursor: '1:50', kind: 'turnFinished', body: 'done' });
  await push({ ...notice, agent: 'ses_p2', cursor: '1:3', kind: 'turnFailed', title: 'Other', body: 'boom' });
  await expect
    .poll(async () => (await shown()).map((n) => `${n.tag} ${n.title}: ${n.body}`).sort())
    .toEqual(['ses_p1 Parser finished: done', 'ses_p2 Other failed: boom', 'ses_s Parser needs your permission: sentinel']);
  // Not a notice: nothing of ours is shown.
  await push({ agent: 'ses_p3', cursor: 'x', kind: 'permission' });
  await page.waitForTimeout(300);
  expect((await shown()).some((n) => n.tag === 'ses_p3')).toBe(false);
});

// A tap on a notification (the click dispatched in the service worker, which a headless browser
// cannot do from its notification centre): the open page is sent to the agent at the item.
test('a tap on a notification opens the agent at its item in the open page', async ({ page, context }) => {
  const daemon = run.daemon;
  const agent = (await daemon.api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'Tapped' })).id as string;
  await daemon.api('POST', `/v1/agents/${agent}/messages`, { text: 'tap words', clientMessageId: 't-1' });
  await expect.poll(async () => (await daemon.api('GET', `/v1/agents/${agent}`)).status).toBe('idle');
  const reply = (await daemon.allItems(agent)).find(
    (i) => i.kind === 'assistant_message' && String(i.text).includes('You asked'),
  )!;
  await context.grantPermissions(['notifications'], { origin: daemon.url });
  await page.goto(daemon.url);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await expect(page.getByTestId('inbox')).toBeVisible();
  const worker = context.serviceWorkers().find((w) => w.url() === `${daemon.url}/sw.js`)!;
  await worker.evaluate(
    async ({ agent, cursor }) => {
      const sw = self as any;
      await sw.registration.showNotification('Tapped finished', {
        tag: agent,
        data: { url: `/#agent=${agent}&cursor=${encodeURIComponent(cursor)}`, agent, cursor },
      });
      const [n] = await sw.registration.getNotifications({ tag: agent });
      try {
        sw.dispatchEvent(new (sw as any).NotificationEvent('notificationclick', { notification: n }));
      } catch {
        // waitUntil refuses an event the browser did not make; the handler has started its work
      }
    },
    { agent, cursor: `1:${reply.seqEnd}` },
  );
  await expect(pane(page, agent).locator('.history-hit')).toContainText('You asked: tap words');
  await expect.poll(() => page.evaluate(() => location.hash)).toBe('');
});
