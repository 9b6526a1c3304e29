// The page's own WebSocket traffic against docs/ws-protocol.schema.json: a spec file that calls
// checkWsFrames() at its top has every frame its pages send on /ws checked as a ClientMessage and
// every frame they receive as a ServerMessage, by the validators tests/openapi/ws_contract_test.mjs
// uses (tests/openapi/schemas.mjs), with the OpenAPI components the schema references read from
// docs/openapi.json and made strict. A test whose pages sent or received an invalid frame fails
// after it ran, listing each one with what is wrong with it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import Ajv2020 from 'ajv/dist/2020.js';
import { type Side, type WsValidators, wsValidators } from '../../tests/openapi/schemas.mjs';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');
const readJson = (name: string) => JSON.parse(readFileSync(path.join(DOCS, name), 'utf8'));

let validators: WsValidators | null = null;
function schema(): WsValidators {
  // No ajv-formats here: no schema a message reaches names a format (the contract test checks
  // formats too).
  validators ??= wsValidators(
    new Ajv2020({ strict: false, allErrors: true, validateFormats: false }),
    readJson('openapi.json'),
    readJson('ws-protocol.schema.json'),
  );
  return validators;
}

export function checkWsFrames(): void {
  let invalid: string[] = [];
  const watch = (page: Page) =>
    page.on('websocket', (ws) => {
      if (new URL(ws.url()).pathname !== '/ws') return;
      const check = (side: Side, payload: string | Buffer) => {
        const text = typeof payload === 'string' ? payload : payload.toString('utf8');
        const problem = schema().check(side, text);
        if (problem) invalid.push(`${side === 'client' ? 'sent' : 'received'}: ${problem}\n  frame: ${text.slice(0, 400)}`);
      };
      ws.on('framesent', (frame) => check('client', frame.payload));
      ws.on('framereceived', (frame) => check('server', frame.payload));
    });
  test.beforeEach(({ context }) => {
    invalid = [];
    for (const page of context.pages()) watch(page);
    context.on('page', watch);
  });
  test.afterEach(() => {
    expect(invalid, 'frames on /ws that docs/ws-protocol.schema.json refuses').toEqual([]);
  });
}
