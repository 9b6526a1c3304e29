// Editors and the page on one session (docs/acp.md): two `agentstream acp` processes driven by
// the official ACP SDK (@agentclientprotocol/sdk, tests/peers) and this page follow the same
// session of the daemon; one editor's prompt streams to the other editor and to the page, and
// all three end with the same assistant text.
import { expect, test } from '@playwright/test';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BIN } from './daemon';
import { daemonPerTest, pane } from './helpers';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SDK = path.resolve(HERE, '../../tests/peers/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js');

const run = daemonPerTest(20);

interface Editor {
  agent: any;
  updates: any[];
  stop(): void;
}

// One editor: the SDK's client connected to `agentstream acp` over its stdio.
function editor(acp: any, url: string): Editor {
  const proc = spawn(BIN, ['acp', '--url', url, '--provider', 'scripted'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const updates: any[] = [];
  const app = acp
    .client({ name: 'editor' })
    .onNotification(acp.methods.client.session.update, ({ params }: any) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async () => ({ outcome: { outcome: 'cancelled' } }));
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  return { agent: connection.agent, updates, stop: () => proc.kill('SIGKILL') };
}

// The assistant text an editor was sent for `session`, chunks joined.
const assistantText = (e: Editor, session: string) =>
  e.updates
    .filter((u) => u.sessionId === session && u.update.sessionUpdate === 'agent_message_chunk')
    .map((u) => u.update.content.text)
    .join('');

test('two ACP editors and the page see the same turn', async ({ page }) => {
  test.skip(!existsSync(SDK), 'the ACP SDK is not installed in tests/peers (tools/setup.sh)');
  const acp = await import(pathToFileURL(SDK).href);
  const cwd = mkdtempSync(path.join(tmpdir(), 'agentstream-acp-web-'));
  const a = editor(acp, run.daemon.url);
  const c = editor(acp, run.daemon.url);
  try {
    for (const e of [a, c]) {
      await e.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        clientInfo: { name: 'editor', version: '1' },
      });
    }
    const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    await c.agent.request(acp.methods.agent.session.resume, { sessionId, cwd });
    await page.goto(run.daemon.url);
    await page.locator(`[data-testid="agent-row"][data-agent="${sessionId}"] .agent-open`).click();
    await expect(pane(page, sessionId)).toBeVisible();

    const done = await a.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'seen by three' }],
    });
    expect(done.stopReason).toBe('end_turn');
    const text = assistantText(a, sessionId);
    expect(text).toContain('You asked: seen by three');
    // The other editor, on its own connection, catches up with the same text.
    await expect.poll(() => assistantText(c, sessionId), { timeout: 10000 }).toBe(text);
    expect(
      c.updates.some((u) => u.update.sessionUpdate === 'user_message_chunk' && u.update.content.text === 'seen by three'),
    ).toBe(true);
    // The page shows the prompt and the same assistant text, message by message.
    await expect(pane(page, sessionId)).toContainText('seen by three');
    await expect
      .poll(
        () =>
          page.evaluate((id) => {
            const l = (window as any).agentstream.engine.timeline(id).lanes();
            return [...l.rows, ...(l.head ? [l.head] : [])]
              .filter((r: any) => r.item.kind === 'assistant_message')
              .map((r: any) => r.item.text)
              .join('');
          }, sessionId),
        { timeout: 10000 },
      )
      .toBe(text);
  } finally {
    a.stop();
    c.stop();
    rmSync(cwd, { recursive: true, force: true });
  }
});
