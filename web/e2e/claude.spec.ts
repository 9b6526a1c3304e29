// The same page driving the real `claude` CLI (tests/peers, pinned) offline against the scripted
// model server (tests/model_server/server.mjs): a prompt streams back, and a shell tool call runs;
// in a worktree, an Edit tool call shows its diff and the Changes view shows git's; a claude
// transcript imported from the daemon's home is listed as imported.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  model = spawn('node', [path.join(ROOT, 'tests/model_server/server.mjs'), '--port', '0'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
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
  await expect(
    pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'hello from the scripted model' }),
  ).toBeVisible({
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
  await expect(pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'Tool finished' })).toBeVisible({
    timeout: 60000,
  });
  await expect(pane(page, agent).getByTestId('user-message')).toHaveCount(2);
  // claude reports each turn's tokens (the model server's counts): a usage row per turn, and
  // their sum in the pane's header.
  const usage = pane(page, agent).getByTestId('usage');
  await expect(usage.first()).toHaveText(/^\d[\d,]* in · \d[\d,]* out/, { timeout: 30000 });
  // The second turn's row may still be on its way when the first one shows.
  await expect.poll(() => usage.count(), { timeout: 30000 }).toBeGreaterThanOrEqual(2);
  await expect(pane(page, agent).getByTestId('usage-total')).toHaveText(/^\d[\d,]* in · \d[\d,]* out/);
});

test('claude in a worktree: an Edit tool call shows its change, and the Changes view the diff git computes', async ({ page }) => {
  test.setTimeout(120000);
  const repo = path.join(home, 'project');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  writeFileSync(path.join(repo, 'parse.ts'), 'export function parse(s: string): number {\n  return parseInt(s);\n}\n');
  execFileSync('git', ['-C', repo, 'add', '-A']);
  execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first']);
  await page.goto(daemon.url);
  await page.getByTestId('provider').selectOption('claude');
  await page.getByTestId('cwd').fill(repo);
  await page.getByTestId('worktree').check();
  await page.getByTestId('create').click();
  const paneEl = page.locator('[data-testid="pane"][data-agent]').first();
  await expect(paneEl).toBeVisible();
  const agent = (await paneEl.getAttribute('data-agent'))!;
  const worktree = (await daemon.api('GET', `/v1/agents/${agent}`)).cwd as string;
  const file = path.join(worktree, 'parse.ts');
  const edit = JSON.stringify({ file_path: file, old_string: 'parseInt(s)', new_string: 'Number(s)' });
  await send(page, agent, `fix it [mcp Read ${JSON.stringify({ file_path: file })}] [mcp Edit ${edit}]`);
  const p = pane(page, agent);
  // Default mode: claude asks before editing; answer inline when it does.
  const allow = p.locator('[data-testid^="permission-allow"]').first();
  const editCall = p.locator('[data-testid="tool-call"][data-tool-kind="edit"]');
  await expect(async () => {
    if (await allow.isVisible()) await allow.click();
    await expect(editCall).toHaveAttribute('data-state', 'completed', { timeout: 1000 });
  }).toPass({ timeout: 60000 });
  await expect(p.getByTestId('assistant-message').filter({ hasText: 'MCP done' })).toBeVisible({ timeout: 60000 });
  expect(readFileSync(file, 'utf8')).toContain('return Number(s);');
  // The call's own input, as a diff.
  const diff = editCall.getByTestId('edit-diff');
  await expect(diff).toHaveAttribute('data-path', file);
  await expect(diff.locator('.dl-del')).toHaveText(['-parseInt(s)']);
  await expect(diff.locator('.dl-add')).toHaveText(['+Number(s)']);
  await expect(p.locator('[data-testid="tool-call"][data-tool-kind="read"]').locator('summary')).toContainText(file);
  await page.screenshot({ path: process.env.UPDATE_SCREENSHOTS ? '../docs/web-edit.png' : 'test-results/web-edit.png' });
  // The worktree's real diff.
  await expect(page.locator(`[data-testid="agent-row"][data-agent="${agent}"]`)).toHaveAttribute('data-status', 'idle', {
    timeout: 60000,
  });
  await p.getByTestId('tab-changes').click();
  const changed = p.getByTestId('change-file');
  await expect(changed).toHaveCount(1);
  await expect(changed).toHaveAttribute('data-path', 'parse.ts');
  await expect(changed.locator('.dl-del')).toHaveText(['-  return parseInt(s);']);
  await expect(changed.locator('.dl-add')).toHaveText(['+  return Number(s);']);
});

test('an imported claude transcript is listed and shown as imported', async ({ page }) => {
  const dir = path.join(home, '.claude/projects/-tmp-cl1-work');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, '11111111-2222-3333-4444-555555555555.jsonl');
  copyFileSync(path.join(ROOT, 'src/providers/claude/testdata/transcript_background_task.jsonl'), file);
  const imported = await fetch(`${daemon.url}/v1/imports`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'claude', path: file }),
  });
  expect(imported.status).toBe(200);
  const { agent } = (await imported.json()) as { agent: { id: string } };
  await page.goto(daemon.url);
  const row = page.locator(`[data-testid="agent-row"][data-agent="${agent.id}"]`);
  await expect(row.getByTestId('imported')).toHaveText('imported from claude');
  await row.locator('.agent-open').click();
  await expect(pane(page, agent.id).getByText('imported from claude')).toBeVisible();
});
