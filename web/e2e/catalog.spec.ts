// The create form offers the ACP agents installed on the daemon, from its catalog (GET
// /v1/catalog; docs/providers.md, "The catalog"): a catalog file given to `serve --acp-catalog`
// names the tests' fake ACP agent, run by node (installed wherever the tests run). The form lists
// it beside the built-in providers but not the listed agents that are not installed, and an agent
// created from it answers a prompt.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { Daemon } from './daemon';
import { pane, send } from './helpers';
import { checkHttpAnswers } from './http_answers';
import { checkWsFrames } from './ws_frames';

checkWsFrames();
checkHttpAnswers();

const FAKE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/providers/acp/testdata/fake_acp_agent.mjs');

let dir = '';
let daemon: Daemon;
test.beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'agentstream-catalog-'));
  const catalog = path.join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      version: '1.0.0',
      agents: [
        {
          id: 'fake-echo',
          name: 'Fake Echo',
          version: '1.0.0',
          description: 'echoes the prompt',
          distribution: { npx: { package: 'fake-echo@1.0.0', cmd: 'node', args: [FAKE] } },
        },
      ],
      extensions: [],
    }),
  );
  daemon = new Daemon(['--scripted-chunk-ms', '5', '--acp-catalog', catalog]);
  await daemon.start();
});
test.afterEach(async () => {
  await daemon.dispose(test.info());
  rmSync(dir, { recursive: true, force: true });
});

test('the create form offers the installed catalog agents, and one answers', async ({ page }) => {
  await page.goto(daemon.url);
  await expect(page.getByTestId('connection')).toHaveText('connected');
  const provider = page.getByTestId('provider');
  await expect(provider.locator('option[value="acp:fake-echo"]')).toHaveText('Fake Echo (acp:fake-echo)');
  await expect(provider.locator('option[value="acp:cline"]')).toHaveCount(0); // listed, not installed
  await expect(provider.locator('option[value="codex"]')).toHaveCount(1);
  await provider.selectOption('acp:fake-echo');
  await page.getByTestId('cwd').fill(dir);
  await page.getByTestId('create').click();
  const paneEl = page.locator('[data-testid="pane"][data-agent]').first();
  await expect(paneEl).toBeVisible();
  const agent = (await paneEl.getAttribute('data-agent'))!;
  expect((await daemon.api('GET', `/v1/agents/${agent}`)).provider).toBe('acp:fake-echo');
  await send(page, agent, 'hello catalog');
  await expect(pane(page, agent).getByTestId('assistant-message').filter({ hasText: 'Echo: hello catalog' })).toBeVisible({
    timeout: 30000,
  });
});
