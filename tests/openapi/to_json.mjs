// Writes docs/openapi.json, the JSON form of docs/openapi.yaml that the daemon serves at
// GET /v1/openapi.json (embedded at build time, src/server/CMakeLists.txt). With --check it writes
// nothing and exits 1 when the committed JSON is not the YAML's (tools/lint.sh runs that).
// Usage: node to_json.mjs [--check]
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

import {parse} from 'yaml';

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');
const json = JSON.stringify(parse(fs.readFileSync(path.join(docs, 'openapi.yaml'), 'utf8')), null, 1) + '\n';
const target = path.join(docs, 'openapi.json');
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== json) {
    console.error('docs/openapi.json is not docs/openapi.yaml: run node tests/openapi/to_json.mjs');
    process.exit(1);
  }
  console.log('docs/openapi.json is docs/openapi.yaml');
} else {
  fs.writeFileSync(target, json);
  console.log(`wrote ${target} (${json.length} bytes)`);
}
