// What the contract tests of this directory share (contract_test.mjs for HTTP,
// ws_contract_test.mjs for the WebSocket app protocol): the pinned packages, a daemon started on a
// temporary data directory, and plain HTTP requests to it.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');

// The pinned validator and YAML parser (npm ci here; tools/setup.sh does it). Without them the
// test is skipped: exit 77, as ctest is told (SKIP_RETURN_CODE).
export async function loadPackages(test) {
  try {
    return {
      Ajv2020: (await import('ajv/dist/2020.js')).default,
      addFormats: (await import('ajv-formats')).default,
      parseYaml: (await import('yaml')).parse,
    };
  } catch {
    console.log(`${test}: ${here}/node_modules is missing; run tools/setup.sh (npm ci there)`);
    process.exit(77);
  }
}

// The daemon under test: argv[2], else the debug build's.
export function binaryFromArgs() {
  return path.resolve(process.argv[2] ?? path.join(root, 'build/debug/src/cli/agentstream'));
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One request; `auth` (a daemon's owner token) is sent unless the request names its own
// Authorization.
export function request(port, method, target, {body, headers = {}, json, auth} = {}) {
  return new Promise((resolve, reject) => {
    const payload = json !== undefined ? JSON.stringify(json) : body;
    const h = {...headers};
    if (auth && !h.authorization) h.authorization = `Bearer ${auth}`;
    if (json !== undefined && !h['content-type']) h['content-type'] = 'application/json';
    const req = http.request({host: '127.0.0.1', port, method, path: target, headers: h}, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({status: res.statusCode, headers: res.headers,
                                   text: Buffer.concat(chunks).toString('utf8')}));
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const {port} = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Starts `binary serve` on SQLite in `dir` (its log in dir/daemon.log) on a free loopback port,
// with the scripted agent's chunks 1 ms apart, `token` if given and the `args` added; resolves
// once /healthz answers. The caller kills `child`.
export async function startDaemon(binary, dir, {token, args = []} = {}) {
  const extra = token ? ['--token', token] : [];
  const port = await freePort();
  fs.mkdirSync(dir, {recursive: true});
  const log = fs.openSync(path.join(dir, 'daemon.log'), 'w');
  const child = spawn(binary, ['serve', '--data', path.join(dir, 'data'), '--listen',
                               `127.0.0.1:${port}`, '--scripted-chunk-ms', '1',
                               '--long-poll-ms', '400', ...extra, ...args],
                      {stdio: ['ignore', log, log]});
  for (let i = 0; i < 100; i++) {
    try {
      const res = await request(port, 'GET', '/healthz', {auth: token});
      if (res.status === 200) return {port, child};
    } catch {}
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`the daemon did not start; see ${dir}/daemon.log`);
}

// The end of a contract test: the failures counted (exit code 1), or the temporary directory
// removed and "all passed".
export function report(failures, tmp) {
  if (failures.length) {
    console.log(`${failures.length} failures`);
    process.exitCode = 1;
  } else {
    fs.rmSync(tmp, {recursive: true, force: true});
    console.log('all passed');
  }
}

// Runs a contract test's main function; an exception fails the test.
export function run(main) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
