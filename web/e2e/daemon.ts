// Starts `agentstream serve` on a temporary data directory and a free port, serving web/dist.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.AGENTSTREAM_BIN ?? path.resolve(HERE, '../../build/debug/src/cli/agentstream');
export const WEB_ROOT = path.resolve(HERE, '../dist');

export class Daemon {
  proc: ChildProcess | null = null;
  url = '';
  readonly data: string;

  constructor(
    readonly extraArgs: string[] = [],
    data?: string,
  ) {
    this.data = data ?? mkdtempSync(path.join(tmpdir(), 'agentstream-e2e-'));
  }

  // Starts on `port` (0: any free port). Resolves with the URL the daemon printed.
  async start(port = 0): Promise<string> {
    const args = ['--data', this.data, 'serve', '--listen', `127.0.0.1:${port}`, '--web-root', WEB_ROOT, ...this.extraArgs];
    const proc = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    let stderr = '';
    proc.stderr!.on('data', (d) => (stderr += String(d)));
    this.url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`daemon did not start: ${stderr}`)), 30000);
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
        reject(new Error(`daemon exited ${code}: ${stderr}`));
      });
    });
    return this.url;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(signal);
    });
    this.proc = null;
  }

  async restart(): Promise<void> {
    const port = this.port;
    await this.stop();
    await this.start(port);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.data, { recursive: true, force: true });
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
    let page = await this.api('GET', `/v1/agents/${agent}/timeline?direction=after&cursor=${await this.startCursor(agent)}&limit=500`);
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
