// Fails when src/generated/openapi.ts differs from a fresh generation from ../../docs/openapi.yaml.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const committed = path.join(here, 'src/generated/openapi.ts');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentstream-openapi-'));
const fresh = path.join(tmp, 'openapi.ts');
try {
  const bin = path.join(here, 'node_modules/.bin/openapi-typescript');
  execFileSync(bin, [path.join(here, '../../docs/openapi.yaml'), '-o', fresh], {stdio: ['ignore', 'ignore', 'inherit']});
  if (!fs.existsSync(committed) || fs.readFileSync(committed, 'utf8') !== fs.readFileSync(fresh, 'utf8')) {
    console.error('src/generated/openapi.ts is out of date: run `npm run generate` and commit the result');
    process.exit(1);
  }
  console.log('src/generated/openapi.ts is up to date');
} finally {
  fs.rmSync(tmp, {recursive: true, force: true});
}
