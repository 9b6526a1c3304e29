// Starts `agentstream serve` on a temporary data directory, serving web/dist. The daemon binds a
// port of its own choosing (--listen 127.0.0.1:0) and the URL is read from its "serving on"
// line; no test guesses a free port. Every daemon still running is killed when the test process
// exits, whatever the way. A daemon that exits by itself during a test fails it, with its exit
// status and the end of its log.
import type { TestInfo } from '@playwright/test';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.AGENTSTREAM_BIN ?? path.resolve(HERE, '../../build/debug/src/cli/agentstream');
export const WEB_ROOT = path.resolve(HERE, '../dist');

const LOG_TAIL_BYTES = 16384; // how much of a daemon's stderr a failure shows

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

// A TCP front on a port the kernel picks, piping each connection to the daemon's current port:
// the page's origin outlives a daemon restart, while the daemon binds a new port each time (a
// port a stopped daemon freed is anyone's until it is bound again). While the daemon is down a
// connection is closed at once, as a stopped daemon's would be refused.
class Front {
  target = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.pipe(client));

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: net.Socket): void {
    if (this.target === 0) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', end);
      socket.on('close', () => {
        this.sockets.delete(socket);
        end();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

export interface DaemonOptions {
  data?: string; // the data directory (default: a new temporary one, removed by dispose)
  // The page reaches the daemon through a front with one address, so that restart() keeps the
  // page's origin (the daemon allows that origin).
  restartable?: boolean;
  webRoot?: string; // the page served (default: web/dist)
}

export class Daemon {
  proc: ChildProcess | null = null;
  url = ''; // what the page and api() use: the daemon's own URL, or the front's
  readonly data: string;
  private readonly front: Front | null;
  private readonly webRoot: string;
  private frontUrl = '';
  private logTail = ''; // the end of the daemon's stderr, over every start
  private died = ''; // how the daemon exited when nobody stopped it ('' while it did not)

  constructor(
    readonly extraArgs: string[] = [],
    options: DaemonOptions = {},
  ) {
    this.data = options.data ?? mkdtempSync(path.join(tmpdir(), 'agentstream-e2e-'));
    this.front = options.restartable ? new Front() : null;
    this.webRoot = options.webRoot ?? WEB_ROOT;
  }

  // Starts the daemon. Resolves with the URL the page should open.
  async start(): Promise<string> {
    const args = ['--data', this.data, 'serve', '--listen', '127.0.0.1:0', '--web-root', this.webRoot, ...this.extraArgs];
    if (this.front) {
      if (!this.frontUrl) this.frontUrl = `http://127.0.0.1:${await this.front.listen()}`;
      args.push('--allow-origin', this.frontUrl);
    }
    const proc = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    running.add(proc);
    proc.on('exit', (code, signal) => {
      running.delete(proc);
      if (this.proc === proc && !this.died) this.died = signal ? `signal ${signal}` : `code ${code}`;
    });
    proc.stderr!.on('data', (d) => (this.logTail = (this.logTail + String(d)).slice(-LOG_TAIL_BYTES)));
    const own = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`daemon did not start: ${this.logTail}`)), 30000);
      proc.stdout!.on('data', (d) => {
        out += String(d);
        const m = /serving on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`daemon exited ${code}: ${this.logTail}`));
      });
    });
    if (this.front) this.front.target = Number(new URL(own).port);
    this.url = this.front ? this.frontUrl : own;
    return this.url;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    // First the front stops sending it connections, so none reaches whatever takes its port next.
    if (this.front) this.front.target = 0;
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    this.proc = null; // its exit is asked for now
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(signal);
    });
  }

  // Stops and starts the daemon on the same data directory; the page keeps its URL.
  async restart(): Promise<void> {
    if (!this.front) throw new Error('restart() needs new Daemon(args, { restartable: true })');
    await this.stop();
    await this.start();
  }

  // Stops the daemon and removes its data. With the test's info, a failed test gets the end of
  // the daemon's log (printed and attached). Throws when the daemon had exited by itself.
  async dispose(testInfo?: TestInfo): Promise<void> {
    await this.stop();
    await this.front?.close();
    rmSync(this.data, { recursive: true, force: true });
    if (testInfo && testInfo.status !== testInfo.expectedStatus) {
      console.error(`the daemon's log ends:\n${this.logTail}`);
      await testInfo.attach('daemon.log', { body: this.logTail, contentType: 'text/plain' });
    }
    if (this.died) throw new Error(`the daemon exited by itself (${this.died}); its log ends:\n${this.logTail}`);
  }

  async api(method: string, p: string, body?: unknown): Promise<any> {
    const res = await fetch(this.url + p, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  // Every projected item of the session, through the HTTP API (after pages to the tail).
  async allItems(agent: string): Promise<any[]> {
    let page = await this.api(
      'GET',
      `/v1/agents/${agent}/timeline?direction=after&cursor=${await this.startCursor(agent)}&limit=500`,
    );
    const items = new Map<string, any>();
    for (;;) {
      for (const i of page.items) items.set(i.key, i);
      if (!page.hasNewer) break;
      page = await this.api('GET', `/v1/agents/${agent}/timeline?direction=after&cursor=${page.endCursor}&limit=500`);
    }
    return [...items.values()].sort((a, b) => a.seqStart - b.seqStart);
  }

  private async startCursor(agent: string): Promise<string> {
    const tail = await this.api('GET', `/v1/agents/${agent}/timeline?direction=tail&limit=1`);
    return `${tail.epoch}:0`;
  }
}
