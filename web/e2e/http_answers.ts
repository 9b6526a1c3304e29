// The page's own HTTP traffic against docs/openapi.yaml: a spec file that calls checkHttpAnswers()
// at its top has every answer its pages receive from an operation of the document (the /v1 JSON
// API, /healthz) checked as the contract test checks its own (tests/openapi/answers.mjs): a
// status the operation lists, valid headers, and a JSON body its schema accepts, strictly. The
// document is read from docs/openapi.json (the YAML's JSON build). A test whose pages received an
// answer the document does not describe fails after it ran, listing each one. Answers a service
// worker gave and server-sent event streams are not checked.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page, type Response, test } from '@playwright/test';
import Ajv2020 from 'ajv/dist/2020.js';
import { type AnswerChecks, compileAnswers } from '../../tests/openapi/answers.mjs';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');

let checks: AnswerChecks | null = null;
function answers(): AnswerChecks {
  // No ajv-formats here (as ws_frames.ts); the contract test checks formats.
  checks ??= compileAnswers(
    JSON.parse(readFileSync(path.join(DOCS, 'openapi.json'), 'utf8')),
    new Ajv2020({ strict: false, allErrors: true, validateFormats: false }),
  );
  return checks;
}

export function checkHttpAnswers(): void {
  let wrong: string[] = [];
  let pending: Promise<void>[] = [];
  const check = async (response: Response) => {
    const url = new URL(response.url());
    const method = response.request().method();
    const template = answers().templateOf(method, url.pathname);
    if (template === null || response.fromServiceWorker()) return;
    const headers = response.headers();
    if ((headers['content-type'] ?? '').startsWith('text/event-stream')) return;
    let text: string;
    try {
      text = await response.text();
    } catch {
      return; // the page went away before the body was read
    }
    const found = answers().problems(template, method, { status: response.status(), headers, text });
    for (const problem of found.problems) wrong.push(`${method} ${template} ${response.status()}: ${problem}`);
  };
  const watch = (page: Page) => page.on('response', (response) => void pending.push(check(response)));
  test.beforeEach(({ context }) => {
    wrong = [];
    pending = [];
    for (const page of context.pages()) watch(page);
    context.on('page', watch);
  });
  test.afterEach(async () => {
    await Promise.all(pending);
    expect(wrong, 'answers that docs/openapi.yaml does not describe').toEqual([]);
  });
}
