// End to end against the real daemon with the scripted provider: rewind, older history page by
// page, image attachments, browser notifications while the tab is hidden, an agent in a git
// worktree of its own made from the create form, and the form keeping a title typed while the
// last create is answered.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { Daemon } from './daemon';
import { createAgent, pane, replicaRows, send } from './helpers';
import { checkHttpAnswers } from './http_answers';
import { checkWsFrames } from './ws_frames';

let daemon: Daemon;
checkWsFrames();
checkHttpAnswers();

test.afterEach(async () => {
  await daemon?.dispose(test.info());
});

// An 8x8 red PNG.
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR4nGM4oaGBFTEMLQkAgl1GAWqNFmsAAAAASUVORK5CYII=';

async function expectSameAsDaemon(page: Page, agent: string) {
  await expect
    .poll(async () => {
      const want = (await daemon.allItems(agent)).map((i) => `${i.key}|${i.text ?? ''}|${i.state ?? ''}`);
      const got = (await replicaRows(page, agent)).map((r) => `${r.key}|${r.text}|${r.state ?? ''}`);
      return JSON.stringify(got) === JSON.stringify(want) ? 'same' : JSON.stringify({ got, want });
    })
    .toBe('same');
}

function finishedAnswer(page: Page, agent: string, prompt: string) {
  return pane(page, agent)
    .getByTestId('assistant-message')
    .filter({ hasText: `You asked: ${prompt}` });
}

async function waitIdle(agent: string, minSeq: number) {
  await expect
    .poll(
      async () => {
        const a = await daemon.api('GET', `/v1/agents/${agent}`);
        return a.status === 'idle' && a.queue.length === 0 && Number(a.cursor.split(':')[1]) >= minSeq;
      },
      { timeout: 60000 },
    )
    .toBe(true);
}

test('rewind: the pane shows the rewound agent, its timeline the prefix up to the item', async ({ page }) => {
  daemon = new Daemon(['--scripted-chunk-ms', '20']);
  await daemon.start();
  await page.goto(daemon.url);
  const agent = await createAgent(page);
  await send(page, agent, 'turn one');
  await expect(finishedAnswer(page, agent, 'turn one')).toHaveAttribute('data-finished', 'true');
  await send(page, agent, 'turn two');
  await expect(finishedAnswer(page, agent, 'turn two')).toHaveAttribute('data-finished', 'true');
  await expectSameAsDaemon(page, agent);
  const before = await replicaRows(page, agent);
  const epochBefore = (await daemon.api('GET', `/v1/agents/${agent}`)).cursor.split(':')[0];

  const target = finishedAnswer(page, agent, 'turn one');
  const targetKey = (await target.getAttribute('data-key'))!;
  let dialogs = 0;
  page.on('dialog', (d) => {
    dialogs++;
    void d.accept();
  });
  await target.getByTestId('rewind').click();

  // The daemon moved to a new epoch; the pane shows it and nothing after the rewind point.
  await expect.poll(async () => (await daemon.api('GET', `/v1/agents/${agent}`)).cursor.split(':')[0]).not.toBe(epochBefore);
  expect(dialogs).toBe(1);
  const p = pane(page, agent);
  await expect(p).toBeVisible();
  await expect(p.getByText('turn two')).toHaveCount(0);
  await expect(finishedAnswer(page, agent, 'turn one')).toBeVisible();
  await expectSameAsDaemon(page, agent);
  const after = (await replicaRows(page, agent)).map((r) => `${r.key}|${r.text}`);
  const cut = before.findIndex((r) => r.key === targetKey);
  expect(cut).toBeGreaterThan(0);
  expect(after).toEqual(before.slice(0, cut + 1).map((r) => `${r.key}|${r.text}`));

  // The rewound agent goes on from there.
  await send(page, agent, 'turn three');
  await expect(finishedAnswer(page, agent, 'turn three')).toHaveAttribute('data-finished', 'true');
  await expect(p.getByText('turn two')).toHaveCount(0);
  await expectSameAsDaemon(page, agent);
});

test('scrolling up loads older pages: every row once, in order, as the daemon has them', async ({ page }) => {
  daemon = new Daemon(['--scripted-chunk-ms', '1']);
  await daemon.start();
  const agent = (await daemon.api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'long' })).id as string;
  // About 4 items per turn: 40 turns are over three pages of 50 items.
  const turns = 40;
  for (let i = 0; i < turns; i++)
    await daemon.api('POST', `/v1/agents/${agent}/messages`, {
      text: `prompt ${i}`,
      clientMessageId: `hist-${i}`,
      whileRunning: 'queue',
    });
  await waitIdle(agent, turns * 10);
  const want = (await daemon.allItems(agent)).map((i) => i.key as string);
  expect(want.length).toBeGreaterThan(150);

  await page.goto(daemon.url);
  await page.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-open`).click();
  const p = pane(page, agent);
  await expect(p.locator(`[data-key="${want.at(-1)}"]`)).toBeVisible();
  const hasOlder = () => page.evaluate((id) => (window as any).agentstream.engine.timeline(id).hasOlder as boolean, agent);
  expect(await hasOlder()).toBe(true);
  expect((await replicaRows(page, agent)).length).toBeLessThan(want.length);

  // At the top, an older page is prepended and the row that was at the top stays in place.
  const list = p.getByTestId('timeline');
  const loaded = await replicaRows(page, agent);
  // NaN while the row is between renders (taken out of the list by the one that prepends).
  const topOf = (key: string) =>
    p.locator(`[data-key="${key}"]`).evaluate((el) => {
      const list = el.closest('[data-testid="timeline"]');
      return list ? el.getBoundingClientRect().top - list.getBoundingClientRect().top : Number.NaN;
    });
  // A row's own offset inside its list slot.
  const pad = await p
    .locator('[data-key]')
    .first()
    .evaluate((el) => el.getBoundingClientRect().top - el.parentElement!.getBoundingClientRect().top);
  await list.evaluate((el) => (el.scrollTop = 0));
  await expect.poll(async () => (await replicaRows(page, agent)).length).toBeGreaterThan(loaded.length);
  await expect.poll(async () => Math.abs((await topOf(loaded[0].key)) - pad)).toBeLessThan(2);
  expect(await list.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);

  // Back to the bottom, then up with the wheel through the whole session.
  await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(p.locator(`[data-key="${want.at(-1)}"]`)).toBeVisible();
  // Scroll up with the wheel, collecting the rows the list shows on the way.
  const seen: string[][] = [];
  await list.hover();
  for (let i = 0; i < 400; i++) {
    seen.push(await p.locator('[data-key]').evaluateAll((els) => els.map((e) => e.getAttribute('data-key')!)));
    const atTop = await list.evaluate((el) => el.scrollTop === 0);
    if (atTop && !(await hasOlder())) break;
    await page.mouse.wheel(0, -600);
    await page.waitForTimeout(30);
  }
  expect(await hasOlder()).toBe(false);

  // The replica: the daemon's history, in order, no duplicate, none missing.
  await expectSameAsDaemon(page, agent);
  const got = (await replicaRows(page, agent)).map((r) => r.key);
  expect(new Set(got).size).toBe(got.length);
  expect(got).toEqual(want);
  // The DOM at every step: rows in the daemon's order, each once.
  const position = new Map(want.map((k, i) => [k, i]));
  for (const keys of seen) {
    expect(new Set(keys).size).toBe(keys.length);
    const idx = keys.map((k) => position.get(k) ?? -1);
    expect(idx.every((v) => v >= 0)).toBe(true);
    expect(idx).toEqual([...idx].sort((a, b) => a - b));
  }
  // Every item was shown at some point (the list was scrolled through all of it).
  const shown = new Set(seen.flat());
  expect(want.filter((k) => !shown.has(k))).toEqual([]);
});

test('an image attachment and an image-only prompt: shown in the row, recorded by the daemon', async ({ page }) => {
  daemon = new Daemon(['--scripted-chunk-ms', '20']);
  await daemon.start();
  await page.goto(daemon.url);
  const agent = await createAgent(page);
  const p = pane(page, agent);
  const file = { name: 'red.png', mimeType: 'image/png', buffer: Buffer.from(PNG_BASE64, 'base64') };

  // Text with an image.
  await p.getByTestId('attach').setInputFiles(file);
  await expect(p.locator('.composer .chip img')).toHaveCount(1);
  await send(page, agent, 'look at this picture');
  await expect(finishedAnswer(page, agent, 'look at this picture')).toHaveAttribute('data-finished', 'true');
  // An image and no text, sent with the Send button.
  await p.getByTestId('attach').setInputFiles(file);
  await p.getByTestId('send').click();
  await expect(p.getByTestId('user-message')).toHaveCount(2);
  await expect(p.getByTestId('assistant-message').last()).toHaveAttribute('data-finished', 'true');
  await expect(p.getByTestId('submission-status')).toHaveCount(0);

  const checkRows = async (pg: Page) => {
    const rows = pane(pg, agent).getByTestId('user-message');
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0)).toContainText('look at this picture');
    await expect(rows.nth(1).locator('.text')).toHaveCount(0);
    for (const i of [0, 1]) {
      const img = rows.nth(i).locator('img.attachment');
      await expect(img).toHaveAttribute('src', `data:image/png;base64,${PNG_BASE64}`);
      await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(8);
    }
  };
  await checkRows(page);

  // The daemon recorded both prompts with the image.
  const events = await daemon.api('GET', `/v1/agents/${agent}/events`);
  const users = (Array.isArray(events) ? events : events.events).filter((e: any) => e.kind === 'user.message');
  expect(users.map((e: any) => e.payload.text)).toEqual(['look at this picture', '']);
  for (const u of users) {
    expect(u.payload.attachments).toHaveLength(1);
    expect(u.payload.attachments[0]).toMatchObject({ kind: 'image', mimeType: 'image/png', name: 'red.png', data: PNG_BASE64 });
  }
  await expectSameAsDaemon(page, agent);

  // A fresh page shows the canonical rows (from the daemon's history) the same way.
  const fresh = await page.context().newPage();
  await fresh.goto(daemon.url);
  await fresh.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-open`).click();
  await checkRows(fresh);
});

// Records every Notification constructed and every permission request; `__hidden` drives
// document.visibilityState (the page listens to visibilitychange).
const NOTIFICATION_PROBE = () => {
  const w = window as any;
  const Real = w.Notification;
  w.__notes = [];
  w.__asks = 0;
  w.__hidden = false;
  function Probe(this: any, title: string, options?: NotificationOptions) {
    w.__notes.push({ title, tag: options?.tag ?? '' });
    try {
      return new Real(title, options);
    } catch {
      return { close() {} };
    }
  }
  Object.defineProperty(Probe, 'permission', { get: () => Real.permission });
  (Probe as any).requestPermission = () => {
    w.__asks++;
    return Promise.resolve(Real.permission);
  };
  w.Notification = Probe;
  Object.defineProperty(document, 'visibilityState', { get: () => (w.__hidden ? 'hidden' : 'visible') });
  Object.defineProperty(document, 'hidden', { get: () => w.__hidden });
  w.__setHidden = (hidden: boolean) => {
    w.__hidden = hidden;
    document.dispatchEvent(new Event('visibilitychange'));
  };
};

test('notifications: asked once; shown while hidden for a permission request and a finished turn', async ({ page, context }) => {
  daemon = new Daemon(['--scripted-chunk-ms', '20']);
  await daemon.start();
  await page.addInitScript(NOTIFICATION_PROBE);
  await page.goto(daemon.url);
  const agent = await createAgent(page);

  // Not granted yet: the first send asks, later sends (and a reload) do not ask again.
  await send(page, agent, 'first');
  await expect(finishedAnswer(page, agent, 'first')).toHaveAttribute('data-finished', 'true');
  await send(page, agent, 'second');
  await expect(finishedAnswer(page, agent, 'second')).toHaveAttribute('data-finished', 'true');
  expect(await page.evaluate(() => (window as any).__asks)).toBe(1);
  // Visible tab: no notification for those turns.
  expect(await page.evaluate(() => (window as any).__notes)).toEqual([]);

  await context.grantPermissions(['notifications'], { origin: daemon.url });
  await page.reload();
  await page.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-open`).click();
  await expect(pane(page, agent).getByTestId('sync-state')).toHaveText('live');
  expect(await page.evaluate(() => Notification.permission)).toBe('granted');

  // Hidden (before the send: the status may change within milliseconds): the agent asks
  // permission, then (answered) finishes.
  await page.evaluate(() => (window as any).__setHidden(true));
  await send(page, agent, 'third needs permission');
  expect(await page.evaluate(() => (window as any).__asks)).toBe(0); // granted: nothing to ask
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'permission');
  await expect.poll(() => page.evaluate(() => (window as any).__notes.map((n: any) => n.tag))).toEqual([`${agent}:permission`]);
  const requestId = (await daemon.api('GET', `/v1/agents/${agent}`)).permissions[0].requestId;
  await daemon.api('POST', `/v1/agents/${agent}/permissions/${requestId}`, { decision: 'allow' });
  await expect
    .poll(() => page.evaluate(() => (window as any).__notes.map((n: any) => n.tag)))
    .toEqual([`${agent}:permission`, `${agent}:idle`]);
  const notes = await page.evaluate(() => (window as any).__notes);
  expect(notes[0].title).toContain('needs permission');
  expect(notes[1].title).toContain('finished');

  // Visible again: a finished turn does not notify.
  await page.evaluate(() => (window as any).__setHidden(false));
  await send(page, agent, 'fourth');
  await expect(finishedAnswer(page, agent, 'fourth')).toHaveAttribute('data-finished', 'true');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'idle');
  expect(await page.evaluate(() => (window as any).__notes.length)).toBe(2);
});

test('the create form makes an agent in a git worktree of its own, on the branch given', async ({ page }) => {
  daemon = new Daemon();
  await daemon.start();
  const repo = path.join(daemon.data, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  writeFileSync(path.join(repo, 'README.md'), 'hello\n');
  execFileSync('git', ['-C', repo, 'add', '-A']);
  execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first']);
  await page.goto(daemon.url);
  await page.getByTestId('cwd').fill(repo);
  await page.getByTestId('worktree').check();
  await page.getByTestId('branch').fill('from-the-page');
  const agent = await createAgent(page);
  const snapshot = await daemon.api('GET', `/v1/agents/${agent}`);
  expect(snapshot.cwd).toBe(path.join(daemon.data, 'worktrees', agent));
  const branch = execFileSync('git', ['-C', snapshot.cwd, 'rev-parse', '--abbrev-ref', 'HEAD']).toString().trim();
  expect(branch).toBe('from-the-page');
  await expect(pane(page, agent).getByText(snapshot.cwd)).toBeVisible();
});

test('a title typed while the last create is still being answered is kept for the next agent', async ({ page }) => {
  daemon = new Daemon();
  await daemon.start();
  // The daemon's answers to agents.create reach the page a second late; everything else at once.
  await page.routeWebSocket(/\/ws/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      if (String(message).includes('"type":"agent",')) setTimeout(() => ws.send(message), 1000);
      else ws.send(message);
    });
  });
  await page.goto(daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await page.getByTestId('title').fill('First agent');
  await page.getByTestId('create').click();
  // The new agent is listed (agent.created) before its create is answered: the next title is
  // typed then. The answer opens the agent in the pane, and the form must keep the new title.
  await expect(page.getByTestId('agent-row')).toHaveCount(1);
  await page.getByTestId('title').fill('Second agent');
  await expect(page.locator('[data-testid="pane"][data-agent]')).toHaveCount(1);
  await page.waitForTimeout(200); // a few frames after the answer
  await expect(page.getByTestId('title')).toHaveValue('Second agent');
  await page.getByTestId('create').click();
  await expect(page.getByTestId('agent-row').locator('.agent-title')).toHaveText(['Second agent', 'First agent']);
  await expect(page.getByTestId('title')).toHaveValue('');
});
