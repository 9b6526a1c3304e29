// End to end against the real daemon with the scripted provider (its demo script: a line of
// text, a Bash tool call, or a permission request when the prompt says "permission", then a
// streamed answer that quotes the prompt).
import { expect, test } from '@playwright/test';
import { Daemon } from './daemon';
import { createAgent, daemonPerTest, pane, replicaRows, send, shot } from './helpers';

// Chunks 40 ms apart: a turn streams for about half a second.
const run = daemonPerTest(40);

async function expectSameAsDaemon(page: import('@playwright/test').Page, agent: string) {
  await expect
    .poll(async () => {
      const want = (await run.daemon.allItems(agent)).map((i) => `${i.key}|${i.text ?? ''}|${i.state ?? ''}`);
      const got = (await replicaRows(page, agent)).map((r) => `${r.key}|${r.text}|${r.state ?? ''}`);
      return JSON.stringify(got) === JSON.stringify(want) ? 'same' : JSON.stringify({ got, want });
    })
    .toBe('same');
}

test('send and stream: one user row, a tool call, the streamed answer', async ({ page }) => {
  await page.goto(run.daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');
  const agent = await createAgent(page);
  await send(page, agent, 'hello there');
  const p = pane(page, agent);
  const answer = p.getByTestId('assistant-message').filter({ hasText: 'You asked: hello there' });
  await expect(answer).toHaveAttribute('data-finished', 'true');
  await expect(p.getByTestId('user-message')).toHaveCount(1);
  await expect(p.getByTestId('user-message')).toContainText('hello there');
  await expect(p.getByTestId('submission-status')).toHaveCount(0);
  await expect(p.getByTestId('tool-call')).toHaveAttribute('data-state', 'completed');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'idle');
  await expectSameAsDaemon(page, agent);
  await page.screenshot({ path: shot('web-conversation.png') });
});

test('a tool call asks permission and is approved inline', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  await send(page, agent, 'needs permission please');
  const p = pane(page, agent);
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'permission');
  await expect(p.getByTestId('permission')).toBeVisible();
  await page.screenshot({ path: shot('web-permission.png') });
  await p.locator('[data-testid^="permission-allow"]').first().click();
  await expect(p.getByTestId('permission')).toHaveAttribute('data-decision', 'allow');
  await expect(p.getByTestId('tool-call')).toHaveAttribute('data-state', 'completed');
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'You asked: needs permission please' })).toHaveAttribute(
    'data-finished',
    'true',
  );
  await expectSameAsDaemon(page, agent);
});

test('Escape interrupts a running turn', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  // The permission prompt keeps the turn open until answered: interrupt it there.
  await send(page, agent, 'wait for permission');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'permission');
  await pane(page, agent).getByTestId('composer').press('Escape');
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).not.toHaveAttribute(
    'data-status',
    /running|permission/,
  );
  const events = await run.daemon.api('GET', `/v1/agents/${agent}/events`);
  expect(events.some((e: any) => e.kind === 'turn.canceled')).toBe(true);
  await expectSameAsDaemon(page, agent);
});

// Resolves once an assistant message of `agent` is streaming (the head lane is not empty);
// with `drop`, the page's WebSocket is cut at that very moment.
async function whenStreaming(page: import('@playwright/test').Page, agent: string, drop: boolean) {
  await page.evaluate(
    ([id, cut]) =>
      new Promise<void>((resolve) => {
        const { engine, transport } = (window as any).agentstream;
        const check = () => {
          if (!engine.timeline(id).lanes().head) return false;
          if (cut) transport.drop();
          resolve();
          return true;
        };
        if (check()) return;
        const unsubscribe = engine.subscribe(() => {
          if (check()) unsubscribe();
        });
      }),
    [agent, drop] as const,
  );
}

test('WebSocket cut and daemon restart mid-stream: no gap, no duplicate', async ({ page }) => {
  // Chunks 250 ms apart, so a reply streams over several commits even on a loaded machine.
  await run.daemon.dispose();
  // Restartable: the page reaches it through a front whose address outlives the restart.
  run.daemon = new Daemon(['--scripted-chunk-ms', '250'], { restartable: true });
  await run.daemon.start();
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  await send(page, agent, 'first prompt');
  await expect(pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'You asked: first prompt' })).toHaveAttribute(
    'data-finished',
    'true',
  );
  // Cut the socket in the middle of the second turn's stream.
  const streaming = whenStreaming(page, agent, true);
  await send(page, agent, 'second prompt streaming');
  await streaming;
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await expect(
    pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'You asked: second prompt streaming' }),
  ).toHaveAttribute('data-finished', 'true');
  await expectSameAsDaemon(page, agent);
  // Restart the daemon while the third turn streams (the turn ends failed: daemon_restarted).
  const third = whenStreaming(page, agent, false);
  await send(page, agent, 'third prompt before restart');
  await third;
  await run.daemon.restart();
  // A prompt sent while the page reconnects is not lost.
  await send(page, agent, 'fourth prompt after restart');
  await expect(page.getByTestId('connection')).toHaveText('connected');
  await expect(
    pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'You asked: fourth prompt after restart' }),
  ).toHaveAttribute('data-finished', 'true');
  await expectSameAsDaemon(page, agent);
  const rows = await replicaRows(page, agent);
  expect(rows.filter((r) => r.text === 'fourth prompt after restart')).toHaveLength(1);
  expect(rows.filter((r) => r.text === 'third prompt before restart')).toHaveLength(1);
  await expect(pane(page, agent).getByTestId('submission-status')).toHaveCount(0);
});

test('two tabs stay identical', async ({ page, context }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  const other = await context.newPage();
  await other.goto(run.daemon.url);
  await other.locator(`[data-testid="agent-row"][data-agent="${agent}"] .agent-open`).click();
  await send(page, agent, 'from tab one');
  await expect(
    pane(other, agent).getByTestId('assistant-message').filter({ hasText: 'You asked: from tab one' }),
  ).toHaveAttribute('data-finished', 'true');
  await send(other, agent, 'from tab two');
  for (const p of [page, other])
    await expect(pane(p, agent).getByTestId('assistant-message').filter({ hasText: 'You asked: from tab two' })).toHaveAttribute(
      'data-finished',
      'true',
    );
  await expectSameAsDaemon(page, agent);
  await expectSameAsDaemon(other, agent);
  const a = (await replicaRows(page, agent)).map((r) => `${r.key}|${r.text}`);
  const b = (await replicaRows(other, agent)).map((r) => `${r.key}|${r.text}`);
  expect(b).toEqual(a);
});

test('fork from an assistant item opens the fork in the other pane', async ({ page }) => {
  await page.goto(run.daemon.url);
  const agent = await createAgent(page);
  await send(page, agent, 'before the fork');
  const p = pane(page, agent);
  const answer = p.getByTestId('assistant-message').filter({ hasText: 'You asked: before the fork' });
  await expect(answer).toHaveAttribute('data-finished', 'true');
  await send(page, agent, 'after the fork point');
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'You asked: after the fork point' })).toHaveAttribute(
    'data-finished',
    'true',
  );
  await answer.getByTestId('fork').click();
  const forkPane = page.locator('[data-testid="pane"][data-agent]').nth(1);
  await expect(forkPane).toBeVisible();
  const forkId = (await forkPane.getAttribute('data-agent'))!;
  expect(forkId).not.toBe(agent);
  await expect(forkPane.getByTestId('assistant-message').filter({ hasText: 'You asked: before the fork' })).toBeVisible();
  await expect(forkPane.getByText('after the fork point')).toHaveCount(0);
  const snap = await run.daemon.api('GET', `/v1/agents/${forkId}`);
  expect(snap.forkedFrom.agent).toBe(agent);
  await page.screenshot({ path: shot('web-fork.png') });
});
