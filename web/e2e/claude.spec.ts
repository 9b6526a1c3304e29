// The same page driving the real `claude` CLI (tests/peers, pinned) offline against the scripted
// model server (tests/model_server/server.mjs): a prompt streams back, and a shell tool call runs.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { Daemon } from './daemon';
import { pane, send } from './helpers';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLAUDE_BIN_DIR = path.join(ROOT, 'tests/peers/node_modules/.bin');

let model: ChildProcess;
let daemon: Daemon;
let home: string;

test.beforeAll(async () => {
  if (!existsSync(path.join(CLAUDE_BIN_DIR, 'claude'))) throw new Error('claude is not installed: run tools/setup.sh');
  model = spawn('node', [path.join(ROOT, 'tests/model_server/server.mjs'), '--port', '0'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    model.stdout!.on('data', (d) => {
      out += String(d);
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    model.on('exit', (c) => reject(new Error(`model server exited ${c}`)));
  });
  home = mkdtempSync(path.join(tmpdir(), 'agentstream-claude-home-'));
  // The daemon hands its own environment to claude (ProviderFactoryOptions::claude_env empty).
  Object.assign(process.env, {
    HOME: home,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: 'sk-ant-offline-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    IS_SANDBOX: '1',
    PATH: `${CLAUDE_BIN_DIR}:${process.env.PATH}`,
  });
  daemon = new Daemon();
  await daemon.start();
});

test.afterAll(async () => {
  await daemon?.dispose();
  model?.stdin?.end();
  model?.kill();
  if (home) rmSync(home, { recursive: true, force: true });
});

test('claude: a prompt streams back and a shell tool call runs', async ({ page }) => {
  test.setTimeout(120000);
  await page.goto(daemon.url);
  await page.getByTestId('provider').selectOption('claude');
  await page.getByTestId('cwd').fill(home);
  await page.getByTestId('create').click();
  const paneEl = page.locator('[data-testid="pane"][data-agent]').first();
  await expect(paneEl).toBeVisible();
  const agent = (await paneEl.getAttribute('data-agent'))!;
  await send(page, agent, '[say hello from the scripted model]');
  await expect(pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'hello from the scripted model' })).toBeVisible({
    timeout: 60000,
  });
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'idle', {
    timeout: 60000,
  });
  await send(page, agent, 'run it [shell echo web-e2e-marker]');
  // Default mode: claude asks before running Bash; answer inline when it does.
  const allow = pane(page, agent).locator('[data-testid^="permission-allow"]').first();
  await expect(async () => {
    if (await allow.isVisible()) await allow.click();
    await expect(pane(page, agent).getByTestId('tool-call').last()).toHaveAttribute('data-state', 'completed', { timeout: 1000 });
  }).toPass({ timeout: 60000 });
  await expect(pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'Tool finished' })).toBeVisible({ timeout: 60000 });
  await expect(pane(page, agent).getByTestId('user-message')).toHaveCount(2);
});
