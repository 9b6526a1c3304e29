// The Node side of the end-to-end tests' prelude (tests/lib/e2e.sh is the shell side): daemons
// started on port 0 and found by the port they print, a PostgreSQL database of the test's own, a
// TCP proxy the test can cut (a partition), HTTP calls with time limits, and one cleanup that
// kills every process and drops every database however the test ends.
//
//   const env = await TestEnv.create('chaos');          // a private temporary directory
//   const store = await env.pgDatabase();               // postgresql://... (AGENTSTREAM_TEST_PG)
//   const a = env.daemon('a', bin, ['--store', store]);  // --data env.dir/a.data
//   await a.start();  a.url ... ; await a.kill('SIGKILL'); await a.start();  // same data dir
//   const proxy = await env.proxy(pgEndpoint(store));  proxy.cut(); proxy.heal();
//   await env.close();                                   // also run on exit and on signals
import { spawn, execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import crypto from 'node:crypto';

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Ends the test as failed (the cleanup of TestEnv runs on exit).
export function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}
export function check(ok, message) {
  if (!ok) fail(message);
}
// The first truthy value of `fn`, called every 20 ms; fails the test after `ms`.
export async function until(what, fn, ms = 30000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}

// A libpq URL ("postgresql://USER@HOST:PORT/DB?host=/socket/dir&port=5432"; the host may be empty
// when a socket directory is given), which WHATWG URL parsing refuses.
export function parsePgUrl(url) {
  const m = url.match(/^(postgres(?:ql)?):\/\/(?:([^@/]*)@)?([^/?]*)(?:\/([^?]*))?(?:\?(.*))?$/);
  if (!m) throw new Error(`not a postgresql:// URL: ${url}`);
  return { scheme: m[1], user: m[2] || '', hostport: m[3] || '', database: m[4] || '',
           params: new URLSearchParams(m[5] || '') };
}
export function formatPgUrl(p) {
  const query = p.params.toString();
  return `${p.scheme}://${p.user ? `${p.user}@` : ''}${p.hostport}/${p.database}${
    query ? `?${query}` : ''}`;
}
// Where the server of a libpq URL listens: {path} of its Unix socket, or {host, port}.
export function pgEndpoint(url) {
  const p = parsePgUrl(url);
  const port = Number(p.params.get('port') || p.hostport.split(':')[1] || 5432);
  const dir = p.params.get('host');
  if (dir && dir.startsWith('/')) return { path: `${dir}/.s.PGSQL.${port}` };
  return { host: p.hostport.split(':')[0] || '127.0.0.1', port };
}

// One HTTP exchange with a time limit: {status, json, text} or {error} (never throws).
export async function call(url, method, target, body, timeoutMs = 15000, headers = {}) {
  try {
    const response = await fetch(url + target, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {}
    return { status: response.status, json, text, headers: response.headers };
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
}

class Daemon {
  constructor(env, name, bin, args) {
    this.env = env;
    this.name = name;
    this.bin = bin;
    this.args = args;
    this.dataDir = path.join(env.dir, `${name}.data`);
    this.logFile = path.join(env.dir, `${name}.log`);
    this.proc = null;
    this.url = '';
    this.port = 0;
  }

  // Starts `bin --data DIR ARGS... serve --listen 127.0.0.1:0 SERVE_ARGS` and waits for its
  // "serving on" line. Rejects when it exits first or takes over 60 s.
  start(serveArgs = []) {
    const args = ['--data', this.dataDir, ...this.args, 'serve', '--listen', '127.0.0.1:0',
                  ...serveArgs];
    const log = fs.openSync(this.logFile, 'a');
    fs.writeSync(log, `--- start ${new Date().toISOString()}\n`);
    const proc = spawn(this.bin, args, { stdio: ['ignore', 'pipe', log] });
    fs.closeSync(log);
    this.proc = proc;
    this.env.track(proc);
    return new Promise((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start`)), 60000);
      proc.stdout.on('data', (chunk) => {
        fs.appendFileSync(this.logFile, chunk);
        if (this.url) return;
        seen += chunk.toString();
        const m = seen.match(/serving on (http:\/\/[^\s]+)/);
        if (m) {
          this.url = m[1];
          this.port = Number(new URL(this.url).port);
          clearTimeout(timer);
          resolve(this);
        }
      });
      proc.on('exit', (code, signal) => {
        if (this.proc === proc) this.proc = null;
        if (!this.url) {
          clearTimeout(timer);
          reject(new Error(`${this.name} exited (${code ?? signal}) before serving; see ${this.logFile}`));
        }
      });
    });
  }

  running() {
    return this.proc !== null;
  }

  // Sends `signal` and waits until the process has exited.
  async kill(signal = 'SIGTERM') {
    const proc = this.proc;
    if (!proc) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill(signal);
    await exited;
    this.proc = null;
    this.url = '';
  }

  pid() {
    return this.proc ? this.proc.pid : 0;
  }

  // The daemon id it keeps in its data directory.
  id() {
    return fs.readFileSync(path.join(this.dataDir, 'daemon.id'), 'utf8').trim();
  }
}

const execFileAsync = promisify(execFile);
const psqlArgs = (database, sql) => [database, '-qAtF', '\t', '-c', sql];
const psqlRows = (out) => out.split('\n').filter((l) => l.length > 0).map((l) => l.split('\t'));

// A TCP proxy on 127.0.0.1 (or `host`) in front of `target` ({port} on 127.0.0.1, or {path} of a
// Unix socket) that the test can cut: every connection is destroyed and new ones are closed at
// once, until heal(). tests/lib/tcp_bridge.mjs runs one as a process of its own.
export class CuttableProxy {
  constructor(target) {
    this.target = target;
    this.sockets = new Set();
    this.cutOff = false;
    this.server = net.createServer((client) => {
      if (this.cutOff) return client.destroy();
      const upstream = this.target.path ? net.connect(this.target.path)
                                        : net.connect(this.target.port, this.target.host || '127.0.0.1');
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', end);
        s.on('close', end);
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }
  listen(host = '127.0.0.1') {
    return new Promise((resolve) => this.server.listen(0, host, () => {
      this.port = this.server.address().port;
      resolve(this);
    }));
  }
  cut() {
    this.cutOff = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
  heal() {
    this.cutOff = false;
  }
  close() {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export class TestEnv {
  static async create(name) {
    const env = new TestEnv();
    env.dir = fs.mkdtempSync(path.join(process.env.TMPDIR || os.tmpdir(), `agentstream-${name}.`));
    env.procs = new Set();
    env.databases = [];
    env.proxies = [];
    env.daemons = [];
    env.cleanups = [];
    env.closed = false;
    const onSignal = (signal) => {
      env.closeSync(1);  // a time limit ran out, or someone stopped the test
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('exit', (code) => env.closeSync(code));
    return env;
  }

  // Runs `fn` (synchronous) when the test ends, after its processes were killed; the last one
  // registered runs first.
  atClose(fn) {
    this.cleanups.unshift(fn);
  }

  track(proc) {
    this.procs.add(proc);
    proc.on('exit', () => this.procs.delete(proc));
  }

  daemon(name, bin, args = []) {
    const d = new Daemon(this, name, bin, args);
    this.daemons.push(d);
    return d;
  }

  // The last lines of every daemon's log, on stderr: what a failed run (in CI) leaves to read.
  printLogTails(lines = 40) {
    for (const d of this.daemons) {
      let text = '';
      try {
        text = fs.readFileSync(d.logFile, 'utf8');
      } catch {
        continue;
      }
      const tail = text.split('\n').filter((l) => l.length > 0).slice(-lines);
      console.error(`--- the last ${tail.length} lines of ${d.name}'s log\n${tail.join('\n')}`);
    }
  }

  async proxy(target) {
    const p = await new CuttableProxy(target).listen();
    this.proxies.push(p);
    return p;
  }

  // A database of this test's own on the server AGENTSTREAM_TEST_PG names (dropped on close);
  // null when the variable is unset.
  pgDatabase() {
    const server = process.env.AGENTSTREAM_TEST_PG;
    if (!server) return null;
    const name = `t_${path.basename(this.dir).replace(/[^a-z0-9]/gi, '').toLowerCase()}_${
      crypto.randomBytes(4).toString('hex')}`;
    const admin = formatPgUrl({ ...parsePgUrl(server), database: 'postgres' });
    execFileSync('psql', [admin, '-qAtc', `CREATE DATABASE ${name}`], { stdio: 'pipe' });
    this.databases.push({ admin, name });
    return formatPgUrl({ ...parsePgUrl(server), database: name });
  }

  // Runs psql against `database` (a postgresql:// URL) and returns the rows as arrays of text.
  psql(database, sql) {
    return psqlRows(execFileSync('psql', psqlArgs(database, sql), { encoding: 'utf8' }));
  }
  // The same without blocking this process: its proxies keep answering while psql runs.
  async psqlAsync(database, sql) {
    const { stdout } = await execFileAsync('psql', psqlArgs(database, sql), { encoding: 'utf8' });
    return psqlRows(stdout);
  }

  // `exitCode`: the process's, when it exits; a failure prints the daemons' logs' tails.
  closeSync(exitCode = 0) {
    if (this.closed) return;
    this.closed = true;
    if (exitCode !== 0) this.printLogTails();
    for (const proc of this.procs) {
      try {
        proc.kill('SIGKILL');
      } catch {}
    }
    for (const p of this.proxies) p.cut();
    for (const fn of this.cleanups) {
      try {
        fn();
      } catch {}
    }
    for (const db of this.databases) {
      try {
        execFileSync('psql', [db.admin, '-qAtc', `DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`],
                     { stdio: 'pipe' });
      } catch {}
    }
    if (process.env.E2E_KEEP === '1') {
      console.error(`kept ${this.dir}`);
    } else {
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }

  async close() {
    for (const p of this.proxies) await p.close();
    this.proxies = [];
    this.closeSync();
  }
}

// Every event of agent `agent`'s session log so far, read through the daemon at `url`
// (GET /v1/agents/ID/events, page by page until up to date).
export async function readEvents(url, agent) {
  const out = [];
  let offset = '-1';
  for (;;) {
    const r = await call(url, 'GET', `/v1/agents/${agent}/events?offset=${offset}`);
    check(r.status === 200, `events: ${r.status} ${r.text || r.error}`);
    out.push(...r.json);
    offset = r.headers.get('stream-next-offset');
    if (r.headers.get('stream-up-to-date')) return out;
  }
}
