// `agentstream store backup` of a running daemon's SQLite store while 64 clients send prompts to
// 64 scripted agents (each send appends its turn's events), then `store restore` into a new
// data directory. The restored store holds, for every session, a prefix of what the live store
// holds at the end (the same events, seqs 1..n dense, nothing torn), at least every event
// acknowledged before the backup began, passes `agentstream check`, and a daemon serves it
// (every agent listed, every event readable); events were appended while the backup ran. Also
// the refusals, each exit 2 with the destination unchanged: a restore while the daemon runs on
// the destination, over a store with sessions without --force, from a missing, non-SQLite or
// newer-schema file; a backup onto an existing file.
//   node tests/store/backup_e2e_test.mjs AGENTSTREAM_BIN
import { TestEnv, call, check, readEvents, sleep, until } from '../lib/daemons.mjs';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node backup_e2e_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const AGENTS = 64;
// Short leases: a daemon of another id on the copy takes the agents over (and ends the turns the
// backup caught running) a second after the leases the copy holds were last renewed.
const serve = ['--scripted-chunk-ms', '0', '--owner-ttl-ms', '1000', '--owner-renew-ms', '300'];
const execFileAsync = promisify(execFile);

const env = await TestEnv.create('backup');
const live = env.daemon('live', bin);
await live.start(serve);
const liveStore = ['--data', live.dataDir];

// `agentstream ARGS...`: {code, out, err}, never throwing.
function run(args) {
  try {
    const out = execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, out, err: '' };
  } catch (error) {
    return { code: error.status, out: error.stdout || '', err: error.stderr || '' };
  }
}
function refused(what, args, pattern) {
  const r = run(args);
  check(r.code === 2, `${what}: exit ${r.code}, expected 2: ${r.out}${r.err}`);
  check(pattern.test(r.err), `${what}: unexpected message: ${r.err}`);
}
const agents = [];
for (let i = 0; i < AGENTS; ++i) {
  const r = await call(live.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
  check(r.status === 200, `create: ${r.status} ${r.text || r.error}`);
  agents.push(r.json.id);
}

// 64 appenders: each sends prompt after prompt to its agent (queued while a turn runs).
let stop = false;
let backupRunning = false;
let ackedDuringBackup = 0;
let acked = 0;
const appenders = agents.map(async (agent, a) => {
  for (let n = 0; !stop; ++n) {
    const r = await call(live.url, 'POST', `/v1/agents/${agent}/messages`,
                         { text: `prompt ${n}`, clientMessageId: `m${a}-${n}` }, 15000);
    check(r.status === 200, `send: ${r.status} ${r.text || r.error}`);
    ++acked;
    if (backupRunning) ++ackedDuringBackup;
    if (n % 4 === 3) await sleep(5);  // let turns run: their events are the bulk of the appends
  }
});
while (acked < 2 * AGENTS) await sleep(20);

// The events the daemon has acknowledged, over every agent (the seqs of their cursors).
async function acknowledged() {
  const r = await call(live.url, 'GET', '/v1/agents');
  check(r.status === 200, `list: ${r.status}`);
  return (r.json.agents || r.json).reduce((sum, a) => sum + Number(a.cursor.split(':')[1]), 0);
}
const backup = path.join(env.dir, 'backup.db');
const before = await acknowledged();
backupRunning = true;
const { stdout } = await execFileAsync(bin, [...liveStore, 'store', 'backup', '--to', backup,
                                             '--pages-per-step', '16']);
backupRunning = false;
const after = await acknowledged();
check(/backed up 64 sessions/.test(stdout), `backup: ${stdout}`);
check(after > before, `no event was appended while the backup ran (${before} before, ${after} after)`);
stop = true;
await Promise.all(appenders);

refused('restore onto the running daemon\'s store',
        [...liveStore, 'store', 'restore', '--from', backup, '--force'], /in use/);
refused('backup onto an existing file', [...liveStore, 'store', 'backup', '--to', backup],
        /exists/);
const restoredData = path.join(env.dir, 'restored.data');
const restoredStore = ['--data', restoredData];
refused('restore from a missing file',
        [...restoredStore, 'store', 'restore', '--from', path.join(env.dir, 'none.db')], /no backup/);
const text = path.join(env.dir, 'notes.txt');
fs.writeFileSync(text, 'not a database\n'.repeat(1000));
refused('restore from a text file', [...restoredStore, 'store', 'restore', '--from', text],
        /not an intact SQLite database/);
const newer = path.join(env.dir, 'newer.db');
fs.copyFileSync(backup, newer);
execFileSync('sqlite3', [newer, 'PRAGMA user_version = 999']);
refused('restore of a newer schema', [...restoredStore, 'store', 'restore', '--from', newer],
        /schema version 999, newer than this build/);
check(!fs.existsSync(path.join(restoredData, 'agentstream.db')), 'a refused restore left a store');

const restore = run([...restoredStore, 'store', 'restore', '--from', backup]);
check(restore.code === 0, `restore: ${restore.err}`);
check(/restored 64 sessions/.test(restore.out), `restore: ${restore.out}`);

// The restored tails, read offline before any daemon runs on the copy (one may append to it).
const tails = new Map();
const sessions = run([...restoredStore, 'sessions', '--json']);
check(sessions.code === 0, `sessions: ${sessions.err}`);
for (const line of sessions.out.split('\n').filter((l) => l.length > 0)) {
  const info = JSON.parse(line);
  tails.set(info.id, info.tail);
}
check(tails.size === AGENTS, `${tails.size} sessions restored`);
const checked = run([...restoredStore, 'check', '--allow-open']);
check(checked.code === 0, `check of the restored store: ${checked.out}${checked.err}`);

// A daemon serves the restored store: every agent listed, and every session of the copy a prefix
// of the live one (the same events, seq 1..n).
const served = env.daemon('restored', bin);
await served.start(serve);
const list = await call(served.url, 'GET', '/v1/agents');
check(list.status === 200, `list: ${list.status}`);
const listed = new Set((list.json.agents || list.json).map((a) => a.id));
let copied = 0;
let longer = 0;
for (const agent of agents) {
  check(listed.has(agent), `${agent} is not listed`);
  const tail = tails.get(agent);
  check(tail > 0, `${agent}: empty in the backup`);
  const [copy, now] = await Promise.all([readEvents(served.url, agent), readEvents(live.url, agent)]);
  check(copy.length >= tail, `${agent}: ${copy.length} events served, ${tail} restored`);
  check(now.length >= tail, `${agent}: ${tail} events restored, ${now.length} live`);
  for (let i = 0; i < tail; ++i) {
    check(copy[i].seq === i + 1, `${agent}: event ${i} has seq ${copy[i].seq}`);
    check(JSON.stringify(copy[i]) === JSON.stringify(now[i]),
          `${agent}: event ${i + 1} differs from the live store's`);
  }
  copied += tail;
  if (now.length > tail) ++longer;
}
check(copied >= before, `the backup holds ${copied} events, ${before} were acknowledged before it`);
// Once it has taken every agent over, it has ended the turns the backup caught running, and run
// the prompts it found queued.
await until('the daemon on the copy to settle every agent', async () => {
  const r = await call(served.url, 'GET', '/v1/agents');
  return r.status === 200 && (r.json.agents || r.json).every(
    (a) => a.status !== 'running' && !a.activeTurn && (a.queue || []).length === 0);
}, 60000);
await served.kill('SIGTERM');
await live.kill('SIGTERM');
refused('restore over sessions without --force',
        [...liveStore, 'store', 'restore', '--from', backup], /holds 64 sessions.*--force/);
const rechecked = run([...restoredStore, 'check']);
check(rechecked.code === 0, `check after the daemon served it: ${rechecked.out}${rechecked.err}`);

console.log(`store backup: ${acked} sends by ${AGENTS} appenders (${ackedDuringBackup} answered ` +
            `during the backup); ${after - before} events appended while it ran; ${copied} ` +
            `events restored (${before} acknowledged before it), ${longer} sessions grew after ` +
            `it; check clean`);
await env.close();
process.exit(0);
