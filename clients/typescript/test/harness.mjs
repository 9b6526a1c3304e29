// Starts a real agentstream daemon for the tests: AGENTSTREAM_BINARY (required; without it every
// test that needs a daemon is skipped, loudly), a temporary data directory, a free loopback port
// (read from the daemon's "agentstream: serving on http://127.0.0.1:PORT" line), kill -9 and a
// restart on the same data directory and port.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const BINARY = process.env.AGENTSTREAM_BINARY || '';
export const SKIP = BINARY ? false : 'AGENTSTREAM_BINARY is not set: no daemon to test against';
if (!BINARY) {
  console.error('\n*** AGENTSTREAM_BINARY is not set: the tests that need a real daemon are SKIPPED ***\n' +
                '*** run: AGENTSTREAM_BINARY=/path/to/agentstream npm test                       ***\n');
} else if (!fs.existsSync(BINARY)) {
  throw new Error(`AGENTSTREAM_BINARY=${BINARY} does not exist`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function tempDir(prefix = 'agentstream-client-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export class Daemon {
  // `env`: entries added to the daemon's environment (HOME, say).
  constructor({dir = tempDir(), token, chunkMs = 5, longPollMs = 2000, args = [], env = {}} = {}) {
    this.dir = dir;
    this.env = env;
    this.token = token;
    this.chunkMs = chunkMs;
    this.longPollMs = longPollMs;
    this.args = args;
    this.port = 0;
    this.child = null;
    this.runs = 0;
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.port}`;
  }

  // Starts the daemon (on this.port when set: a restart) and resolves once it serves.
  async start(timeoutMs = 15000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.startOnce(Math.max(1000, deadline - Date.now()));
      } catch (e) {
        // The port of a restart may still be held for a moment: try again until the deadline.
        if (Date.now() + 300 >= deadline) throw e;
        await sleep(200);
      }
    }
  }

  startOnce(timeoutMs) {
    const run = ++this.runs;
    const logPath = path.join(this.dir, `daemon-${run}.log`);
    const log = fs.createWriteStream(logPath);
    const args = ['--data', path.join(this.dir, 'data'), 'serve', '--listen', `127.0.0.1:${this.port}`,
                  '--scripted-chunk-ms', String(this.chunkMs), '--long-poll-ms', String(this.longPollMs),
                  ...(this.token ? ['--token', this.token] : []), ...this.args];
    const child = spawn(BINARY, args, {stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, ...this.env}});
    return new Promise((resolve, reject) => {
      let buf = '';
      let done = false;
      const finish = (err, port) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) {
          child.kill('SIGKILL');
          reject(err);
        } else {
          this.child = child;
          this.port = port;
          resolve(this);
        }
      };
      const onData = (d) => {
        log.write(d);
        if (done) return;
        buf += d;
        const m = /agentstream: serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(buf);
        if (m) finish(null, Number(m[1]));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('exit', (code, signal) => finish(new Error(`the daemon exited (${code ?? signal}) before serving; see ${logPath}`)));
      const timer = setTimeout(() => finish(new Error(`the daemon did not serve within ${timeoutMs} ms; see ${logPath}`)), timeoutMs);
    });
  }

  // kill -9, and wait for the process to be gone.
  async kill9() {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await Promise.race([gone, sleep(5000)]);
  }

  async restart() {
    await this.kill9();
    return this.start();
  }

  async stop({keep = false} = {}) {
    await this.kill9();
    if (!keep) fs.rmSync(this.dir, {recursive: true, force: true});
  }
}

// Polls `fn` until it returns a truthy value, else throws after `timeoutMs`.
export async function until(fn, what, timeoutMs = 20000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last})`);
    await sleep(everyMs);
  }
}

// Rejects when `promise` takes longer than `ms`.
export function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

export const key = (e) => `${e.epoch}:${e.seq}`;
