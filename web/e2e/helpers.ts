import { expect, type Page, test } from '@playwright/test';
import { Daemon, type DaemonOptions } from './daemon';
import { checkHttpAnswers } from './http_answers';
import { checkWsFrames } from './ws_frames';

// Screenshots of the views: into docs/ with UPDATE_SCREENSHOTS=1, else test-results/.
export const shot = (name: string) => (process.env.UPDATE_SCREENSHOTS ? `../docs/${name}` : `test-results/${name}`);

// A daemon with the scripted agent (its chunks `chunkMs` apart) for each test of the file that
// calls this at its top: started before each test, disposed after it; `args` are more options of
// its `serve`. `run.daemon` is the current test's. The pages' /ws frames are checked against the
// protocol's schema (ws_frames.ts), their HTTP answers against the OpenAPI document
// (http_answers.ts).
export function daemonPerTest(chunkMs: number, options: DaemonOptions = {}, args: string[] = []): { daemon: Daemon } {
  const run = {} as { daemon: Daemon };
  checkWsFrames();
  checkHttpAnswers();
  test.beforeEach(async () => {
    run.daemon = new Daemon(['--scripted-chunk-ms', String(chunkMs), ...args], options);
    await run.daemon.start();
  });
  test.afterEach(async () => {
    await run.daemon.dispose(test.info());
  });
  return run;
}

export async function createAgent(page: Page): Promise<string> {
  // Until the page is connected its agent list is not loaded and a click on create may be lost:
  // on a loaded machine that takes longer than the click.
  await expect(page.getByTestId('connection')).toHaveText('connected');
  const before = await page.getByTestId('agent-row').count();
  await page.getByTestId('create').click();
  await expect(page.getByTestId('agent-row')).toHaveCount(before + 1);
  const pane = page.locator('[data-testid="pane"][data-agent]').first();
  await expect(pane).toBeVisible();
  return (await pane.getAttribute('data-agent'))!;
}

export function pane(page: Page, agent: string) {
  return page.locator(`[data-testid="pane"][data-agent="${agent}"]`).first();
}

export async function send(page: Page, agent: string, text: string): Promise<void> {
  const composer = pane(page, agent).getByTestId('composer');
  await composer.fill(text);
  await composer.press('Enter');
}

// The keys of the rows a pane shows, in order (the list is virtualized: scroll through it).
export async function shownKeys(page: Page, agent: string): Promise<string[]> {
  return pane(page, agent)
    .locator('[data-key]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-key')!));
}

// The replica's rows (all lanes) straight from the engine, for exact comparisons.
export async function replicaRows(
  page: Page,
  agent: string,
): Promise<{ key: string; text: string; state?: string; seqEnd: number }[]> {
  return page.evaluate((id) => {
    const tl = (window as any).agentstream.engine.timeline(id);
    const l = tl.lanes();
    return [...l.rows, ...(l.head ? [l.head] : []), ...l.pending].map((r: any) => ({
      key: r.item.key,
      text: r.item.text ?? '',
      state: r.item.state,
      seqEnd: r.item.seqEnd,
    }));
  }, agent);
}
