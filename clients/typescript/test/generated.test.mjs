// src/generated/openapi.ts is what openapi-typescript makes of ../../docs/openapi.yaml today.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import path from 'node:path';
import {test} from 'node:test';
import {fileURLToPath} from 'node:url';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('the generated OpenAPI types are up to date', {timeout: 30000}, () => {
  const run = spawnSync(process.execPath, ['scripts/check-generated.mjs'], {cwd: pkgDir, encoding: 'utf8'});
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
});
