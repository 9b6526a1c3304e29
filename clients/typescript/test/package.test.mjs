// The package as published: `npm pack`, the tarball installed offline into a fresh project
// (with `ws`, its only runtime dependency, packed from the copy the lock file installed: npm's
// cache holds that version's tarball but not the registry's index of `ws`), its types checked
// from a TypeScript consumer, and a script that imports `@agentstream/client` run against a real
// daemon (create, prompt, follow across kill -9 and a restart, a permission).
import assert from 'node:assert/strict';
import {execFileSync, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {after, describe, test} from 'node:test';
import {fileURLToPath} from 'node:url';

import {BINARY, SKIP, tempDir} from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the packed package', {timeout: 90000}, () => {
  const tmp = tempDir('agentstream-pack-');
  after(() => fs.rmSync(tmp, {recursive: true, force: true}));
  let project;

  test('npm pack and an offline install into a fresh project', () => {
    // --ignore-scripts: `npm test` built dist/ already (prepack would build it again).
    const out = execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp],
                             {cwd: pkgDir, encoding: 'utf8'});
    const [info] = JSON.parse(out);
    const tarball = path.join(tmp, info.filename);
    const files = info.files.map((f) => f.path).sort();
    for (const f of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/http.js', 'dist/replica.js',
                     'dist/connection.js', 'dist/catch_up.js', 'dist/stream.js', 'dist/generated/openapi.d.ts'])
      assert.ok(files.includes(f), `${f} is packed`);
    assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('node_modules/')),
              `only dist/ and the docs are packed: ${files}`);

    project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'),
                     JSON.stringify({name: 'consumer', version: '1.0.0', private: true, type: 'module'}));
    const packed = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(packed.dependencies), ['ws'], 'ws is the only runtime dependency');
    const [ws] = JSON.parse(execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp,
                                               path.join(pkgDir, 'node_modules/ws')],
                                         {cwd: tmp, encoding: 'utf8'}));
    const install = spawnSync(npm, ['install', '--offline', '--no-audit', '--no-fund', tarball,
                                    path.join(tmp, ws.filename)],
                              {cwd: project, encoding: 'utf8'});
    assert.equal(install.status, 0, `npm install --offline failed:\n${install.stdout}\n${install.stderr}`);
    const installed = fs.readdirSync(path.join(project, 'node_modules')).filter((d) => !d.startsWith('.')).sort();
    assert.deepEqual(installed, ['@agentstream', 'ws'], 'ws is the only runtime dependency');
  });

  test('its types, from a TypeScript consumer', () => {
    assert.ok(project, 'installed');
    fs.copyFileSync(path.join(here, 'fixtures/consumer.ts'), path.join(project, 'consumer.ts'));
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'],
                        types: [], strict: true, noEmit: true},
      files: ['consumer.ts'],
    }));
    const tsc = spawnSync(process.execPath, [path.join(pkgDir, 'node_modules/typescript/bin/tsc'), '-p', project],
                          {cwd: project, encoding: 'utf8'});
    assert.equal(tsc.status, 0, `tsc:\n${tsc.stdout}${tsc.stderr}`);
  });

  test('a script importing @agentstream/client, against a real daemon', {skip: SKIP}, () => {
    assert.ok(project, 'installed');
    fs.copyFileSync(path.join(here, 'fixtures/consumer.mjs'), path.join(project, 'consumer.mjs'));
    const run = spawnSync(process.execPath, ['consumer.mjs'], {
      cwd: project, encoding: 'utf8', timeout: 60000, env: {...process.env, AGENTSTREAM_BINARY: BINARY},
    });
    assert.equal(run.status, 0, `consumer.mjs:\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /consumer: ok/);
  });
});
