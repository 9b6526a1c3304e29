// `agentstream acp` against the official ACP TypeScript SDK (@agentclientprotocol/sdk 2.4.0, its
// client app over stdio), offline, with a daemon running the scripted agent (docs/acp.md):
//   1. initialize, session/new, a prompt streamed to its stop reason;
//   2. a permission allowed and one denied, through the daemon's API (the log records them);
//   3. session/cancel of a turn waiting on a permission;
//   4. session/list with a cwd filter;
//   5. session/load of a session of ~500 events: the replayed updates, tied to the log by their
//      cursors, match the daemon's timeline item by item;
//   6. two clients on one session see the same turn; the first answer to a permission wins and
//      the other client's request is withdrawn ($/cancel_request);
//   7. kill -9 of the daemon mid-turn: the acp process reconnects (through a proxy: the
//      restarted daemon has a new port) and its updates have no gap and no duplicate;
//      session/resume continues live without replay;
//   8. bad input: malformed JSON, unknown methods, an oversize line; nothing stored changes.
//   node tests/acp/acp_sdk_test.mjs AGENTSTREAM_BIN
// Exit 77 (skipped) when the SDK is not installed (tools/setup.sh installs tests/peers).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { TestEnv, call, check, fail, readEvents, sleep, until } from '../lib/daemons.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node acp_sdk_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const sdkPath = new URL('../peers/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js',
                        import.meta.url);
if (!fs.existsSync(sdkPath)) {
  console.error('SKIP: @agentclientprotocol/sdk is not installed in tests/peers (tools/setup.sh)');
  process.exit(77);
}
const acp = await import(sdkPath);
const sdkVersion = JSON.parse(fs.readFileSync(
  new URL('../peers/node_modules/@agentclientprotocol/sdk/package.json', import.meta.url))).version;
if (sdkVersion !== '2.4.0') console.error(`note: SDK ${sdkVersion}, the reference is 2.4.0`);

async function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const env = await TestEnv.create('acp');
const serve = ['--scripted-chunk-ms', '2'];
const daemon = env.daemon('d', bin);
await daemon.start(serve);
// The acp processes reach the daemon through a proxy whose target follows the daemon's port.
const proxy = await env.proxy({ port: daemon.port });
const proxyUrl = `http://127.0.0.1:${proxy.port}`;

async function timeline(agent) {
  const items = new Map();
  let cursor = '1:0';
  for (;;) {
    const r = await call(daemon.url, 'GET', `/v1/agents/${agent}/timeline?direction=after&cursor=${
      cursor}&limit=500&maxBytes=4194304`);
    check(r.status === 200, `timeline: ${r.status} ${r.text || r.error}`);
    for (const item of r.json.items) items.set(item.key, item);  // a newer version replaces
    cursor = r.json.endCursor;
    if (!r.json.hasNewer) return [...items.values()].sort((a, b) => a.seqStart - b.seqStart);
  }
}
const seqOf = (u) => Number(u._meta.agentstream.cursor.split(':')[1]);

// One editor: the SDK's client app connected to `agentstream acp` over its stdio. `permission`
// answers session/request_permission ({params, signal} -> response).
let clients = 0;
function editor(name, permission = async () => ({ outcome: { outcome: 'cancelled' } })) {
  const proc = spawn(bin, ['acp', '--url', proxyUrl, '--provider', 'scripted'],
                     { stdio: ['pipe', 'pipe', 'pipe'] });
  env.track(proc);
  const log = fs.openSync(`${env.dir}/acp-${name}-${++clients}.log`, 'a');
  proc.stderr.on('data', (chunk) => fs.writeSync(log, chunk));
  const updates = [];  // every session/update notification's params, in order
  const asks = [];
  const app = acp.client({ name })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async (ctx) => {
      asks.push(ctx.params);
      return permission(ctx);
    });
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin),
                                                  Readable.toWeb(proc.stdout)));
  const exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  return { name, proc, connection, agent: connection.agent, updates, asks, exited,
           of: (session) => updates.filter((u) => u.sessionId === session) };
}
async function initialize(e) {
  const init = await within(10000, e.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {},
    clientInfo: { name: e.name, version: '1' } }), 'initialize');
  return init;
}
function allowWith(kind) {  // answers with the first option of `kind`
  return async ({ params }) => ({
    outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === kind).optionId },
  });
}
const prompt = (e, sessionId, text) =>
  e.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

// ---- 1. initialize, new session, a streamed prompt --------------------------------------------
let answer = allowWith('allow_once');
const a = editor('a', (ctx) => answer(ctx));
const init = await initialize(a);
check(init.protocolVersion === 1, `protocol version ${init.protocolVersion}`);
const caps = init.agentCapabilities;
check(caps.loadSession === true && caps.promptCapabilities.image === true,
      `capabilities ${JSON.stringify(caps)}`);
check(caps.sessionCapabilities.list && caps.sessionCapabilities.resume &&
      caps.sessionCapabilities.close, `session capabilities ${JSON.stringify(caps)}`);

const created = await within(15000, a.agent.request(acp.methods.agent.session.new,
  { cwd: env.dir, mcpServers: [] }), 'session/new');
const sid = created.sessionId;
const agentRow = await call(daemon.url, 'GET', `/v1/agents/${sid}`);
check(agentRow.status === 200 && agentRow.json.provider === 'scripted',
      `session/new made no scripted agent: ${agentRow.text}`);

const first = await within(30000, prompt(a, sid, 'hello there'), 'first prompt');
check(first.stopReason === 'end_turn', `stop reason ${first.stopReason}`);
const text = a.of(sid).filter((u) => u.update.sessionUpdate === 'agent_message_chunk')
  .map((u) => u.update.content.text).join('');
check(text.includes('You asked: hello there'), `streamed text: ${text}`);
const tool = a.of(sid).filter((u) => u.update.toolCallId);
check(tool.length >= 2 && tool[0].update.sessionUpdate === 'tool_call' &&
      tool.at(-1).update.status === 'completed', `tool call updates ${JSON.stringify(tool)}`);
check(!a.of(sid).some((u) => u.update.sessionUpdate === 'user_message_chunk'),
      'the editor was sent its own prompt back');
console.log('ok 1 initialize, session/new, streamed prompt');

// ---- 2. permissions allowed and denied ---------------------------------------------------------
answer = allowWith('allow_once');
const allowed = await within(30000, prompt(a, sid, 'ask permission to touch'), 'allowed turn');
check(allowed.stopReason === 'end_turn', `allowed: ${allowed.stopReason}`);
answer = allowWith('reject_once');
await within(30000, prompt(a, sid, 'ask permission again'), 'denied turn');
check(a.asks.length === 2, `asks: ${a.asks.length}`);
const decisions = (await readEvents(daemon.url, sid)).filter((e) => e.kind === 'permission.resolved')
  .map((e) => e.payload.decision);
check(JSON.stringify(decisions) === '["allow","deny"]', `decisions in the log: ${decisions}`);
const deniedCall = a.asks[1].toolCall.toolCallId;
check(a.of(sid).some((u) => u.update.toolCallId === deniedCall && u.update.status === 'failed'),
      'the denied call did not fail');
console.log('ok 2 a permission allowed and one denied');

// ---- 3. cancel -------------------------------------------------------------------------------
let release;
answer = ({ signal }) => new Promise((resolve) => {
  release = () => resolve({ outcome: { outcome: 'cancelled' } });
  signal.addEventListener('abort', () => resolve({ outcome: { outcome: 'cancelled' } }));
});
const canceled = prompt(a, sid, 'ask permission then wait');
await until('the third ask', () => a.asks.length === 3);
await a.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
const stopped = await within(30000, canceled, 'canceled turn');
release();
check(stopped.stopReason === 'cancelled', `canceled: ${stopped.stopReason}`);
check((await readEvents(daemon.url, sid)).some((e) => e.kind === 'turn.canceled'), 'no turn.canceled in the log');
console.log('ok 3 session/cancel');

// ---- 4. list ---------------------------------------------------------------------------------
const other = await call(daemon.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: '/' });
check(other.status === 200, `create: ${other.text}`);
const listed = await a.agent.request(acp.methods.agent.session.list, { cwd: env.dir });
check(listed.sessions.some((s) => s.sessionId === sid) &&
      !listed.sessions.some((s) => s.sessionId === other.json.id),
      `list ${JSON.stringify(listed)}`);
const everything = await a.agent.request(acp.methods.agent.session.list, {});
check(everything.sessions.some((s) => s.sessionId === other.json.id), 'list without cwd');
console.log('ok 4 session/list');

// ---- 5. load a session of ~500 events: replay == timeline, item by item -----------------------
const big = (await call(daemon.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir }))
  .json.id;
for (let i = 0; (await readEvents(daemon.url, big)).length < 500; ++i) {
  const ask = i % 6 === 5;
  const r = await call(daemon.url, 'POST', `/v1/agents/${big}/messages`,
                       { text: ask ? `turn ${i} needs permission` : `turn ${i}`,
                         clientMessageId: `load-${i}` });
  check(r.status === 200, `send: ${r.text}`);
  for (;;) {
    const s = (await call(daemon.url, 'GET', `/v1/agents/${big}`)).json;
    if (s.permissions.length > 0) {
      await call(daemon.url, 'POST', `/v1/agents/${big}/permissions/${s.permissions[0].requestId}`,
                 { decision: i % 12 === 5 ? 'allow' : 'deny' });
    } else if (s.status === 'idle' && !s.activeTurn && s.queue.length === 0) {
      break;
    }
    await sleep(10);
  }
}
const b = editor('b');
await initialize(b);
await within(30000, b.agent.request(acp.methods.agent.session.load,
  { sessionId: big, cwd: env.dir, mcpServers: [] }), 'session/load');
const replay = b.of(big);
const log = await readEvents(daemon.url, big);
const items = await timeline(big);
check(log.length >= 500 && replay.length > 200, `replay ${replay.length} of ${log.length} events`);
for (let i = 1; i < replay.length; ++i)
  check(seqOf(replay[i - 1]) <= seqOf(replay[i]), `replay out of order at ${i}`);
const claimed = new Set();
const textOf = (us, kind) => us.filter((u) => u.update.sessionUpdate === kind)
  .map((u) => u.update.content.text).join('');
for (const item of items) {
  const inItem = (u) => item.sourceSeqRanges.some(([lo, hi]) => seqOf(u) >= lo && seqOf(u) <= hi);
  const us = replay.filter(inItem);
  check(us.length > 0, `no update for ${item.kind} ${item.key}`);
  us.forEach((u) => claimed.add(u));
  const why = `${item.kind} ${item.key}: ${JSON.stringify(us.map((u) => u.update))}`;
  switch (item.kind) {
    case 'user_message':
      check(textOf(us, 'user_message_chunk') === item.text && us[0].update.messageId === item.key, why);
      break;
    case 'assistant_message':
      check(textOf(us, 'agent_message_chunk') === item.text &&
            us.every((u) => u.update.messageId === item.key), why);
      break;
    case 'reasoning':
      check(textOf(us, 'agent_thought_chunk') === item.text, why);
      break;
    case 'tool_call': {
      const last = us.filter((u) => u.update.toolCallId === item.callId).at(-1).update;
      const state = { completed: 'completed', failed: 'failed', canceled: 'failed',
                      running: 'in_progress', pending: 'pending' }[item.state];
      check(us[0].update.sessionUpdate === 'tool_call' && us[0].update.toolCallId === item.callId &&
            last.status === state, why);
      if (last.rawOutput) check(last.rawOutput.output === item.output, why);
      break;
    }
    case 'permission': {
      const statuses = us.map((u) => u.update.status);
      check(us.every((u) => u.update.toolCallId === (item.callId || item.requestId)) &&
            statuses[0] === 'pending', why);
      if (item.decision === 'deny') check(statuses.at(-1) === 'failed', why);
      if (item.decision === 'allow') check(statuses.at(-1) !== 'failed', why);
      break;
    }
    case 'error':
    case 'notice':
      check(us.every((u) => u.update.messageId === item.key), why);
      break;
    default:
      fail(`an item kind this test does not know: ${item.kind}`);
  }
}
// Every replayed update belongs to an item, but the session's own settings, title and commands.
for (const u of replay) {
  if (claimed.has(u)) continue;
  check(['config_option_update', 'current_mode_update', 'session_info_update',
         'available_commands_update'].includes(u.update.sessionUpdate),
        `an update of no item: ${JSON.stringify(u)}`);
}
// The agent's own lists reach the editor: its slash commands, and its thinking options as a
// config option of category thought_level.
const commandsUpdate = replay.find((u) => u.update.sessionUpdate === 'available_commands_update');
check(commandsUpdate?.update.availableCommands.some((c) => c.name === 'help'),
      'the agent\'s slash commands');
const lastConfig = replay.filter((u) => u.update.sessionUpdate === 'config_option_update').at(-1);
check(lastConfig?.update.configOptions.some((o) => o.category === 'thought_level' &&
                                               o.options.some((v) => v.value === 'on')),
      `the thinking option: ${JSON.stringify(lastConfig)}`);
console.log(`ok 5 session/load: ${replay.length} updates of ${log.length} events match ${
  items.length} timeline items`);

// ---- 6. two clients on one session -------------------------------------------------------------
let answerB = allowWith('allow_once');
const c = editor('c', (ctx) => answerB(ctx));
await initialize(c);
const resumed = await within(15000, c.agent.request(acp.methods.agent.session.resume,
  { sessionId: sid, cwd: env.dir }), 'session/resume');
check(resumed !== undefined, 'resume answered nothing');
const fromC = c.of(sid).length;
check(fromC === 0, `session/resume replayed ${fromC} updates`);
let aborted = false;
answer = ({ signal }) => new Promise((resolve, reject) => {  // A never answers; C does first
  signal.addEventListener('abort', () => {
    aborted = true;
    reject(signal.reason);
  });
});
const asksBefore = a.asks.length;
const aUpdatesBefore = a.of(sid).length;
const shared = await within(30000, prompt(a, sid, 'two clients ask permission'), 'shared turn');
check(shared.stopReason === 'end_turn', `shared: ${shared.stopReason}`);
check(a.asks.length === asksBefore + 1 && c.asks.length === 1, 'both clients were not asked');
await until('the withdrawal of the ask to A', () => aborted, 10000);
const turnOf = (us) => us.filter((u) => u.update.sessionUpdate !== 'user_message_chunk')
  .map((u) => JSON.stringify(u));
const seenByA = turnOf(a.of(sid).slice(aUpdatesBefore));
check(seenByA.length > 5, `A saw ${seenByA.length} updates of the shared turn`);
// C follows the same log on its own connection: wait until it has caught up with what A saw.
const deadline6 = Date.now() + 10000;
while (JSON.stringify(turnOf(c.of(sid))) !== JSON.stringify(seenByA)) {
  if (Date.now() > deadline6)
    fail(`the clients saw different turns:\nA ${seenByA.join('\n')}\nC ${turnOf(c.of(sid)).join('\n')}`);
  await sleep(20);
}
check(c.of(sid).some((u) => u.update.sessionUpdate === 'user_message_chunk' &&
                            u.update.content.text === 'two clients ask permission'),
      "C did not see A's prompt");
console.log('ok 6 two clients on one session');

// ---- 7. kill -9 of the daemon mid-turn ---------------------------------------------------------
// Nobody answers the permission: the turn waits on it when the daemon is killed.
const hold = ({ signal }) => new Promise((resolve, reject) => {
  signal.addEventListener('abort', () => reject(signal.reason));
});
answer = hold;
answerB = hold;
const aMark = a.of(sid).length;
const cursorBefore = (await call(daemon.url, 'GET', `/v1/agents/${sid}`)).json.cursor;
const midTurn = prompt(a, sid, 'a turn the daemon will not finish, with permission');
await until('the turn to ask', () => a.asks.length > asksBefore + 1 && c.asks.length > 1);
await daemon.kill('SIGKILL');
await daemon.start(serve);
proxy.target = { port: daemon.port };
const interrupted = await within(60000, midTurn.then((r) => ({ r }), (e) => ({ e })),
                                 'the prompt of the killed turn');
check(interrupted.e && String(interrupted.e.message).includes('turn failed'),
      `the killed turn answered ${JSON.stringify(interrupted)}`);
const after = await within(30000, prompt(a, sid, 'after the restart'), 'prompt after restart');
check(after.stopReason === 'end_turn', `after restart: ${after.stopReason}`);
// Everything A was sent since the mark is the log's, once, in order: a fresh load of the session
// shows the same updates for the same events (but A's own prompts, which it is not sent).
const d = editor('d');
await initialize(d);
await within(30000, d.agent.request(acp.methods.agent.session.load,
  { sessionId: sid, cwd: env.dir, mcpServers: [] }), 'reload');
const since = Number(cursorBefore.split(':')[1]);
const liveUpdates = a.of(sid).slice(aMark);
const until7 = seqOf(liveUpdates.at(-1));  // A has answered its last prompt: it saw this far
const live = liveUpdates.map((u) => JSON.stringify(u));
const stored = d.of(sid).filter((u) => seqOf(u) > since && seqOf(u) <= until7 &&
                                       u.update.sessionUpdate !== 'user_message_chunk')
  .map((u) => JSON.stringify(u));
check(live.length > 5 && JSON.stringify(live) === JSON.stringify(stored),
      `gap or duplicate across kill -9:\nlive ${live.join('\n')}\nstored ${stored.join('\n')}`);
check((await readEvents(daemon.url, sid)).some((e) => e.kind === 'turn.failed' &&
                                      e.payload.code === 'daemon_restarted'), 'no turn.failed');
console.log('ok 7 kill -9 mid-turn: reconnected, no gap, no duplicate');

// ---- 8. bad input: answered, nothing stored changes -----------------------------------------------
const before = { agents: (await call(daemon.url, 'GET', '/v1/agents')).json.agents.length,
                 events: (await readEvents(daemon.url, sid)).length };
const raw = spawn(bin, ['acp', '--url', proxyUrl, '--provider', 'scripted'],
                  { stdio: ['pipe', 'pipe', 'inherit'] });
env.track(raw);
const lines = [];
let pending = '';
raw.stdout.on('data', (chunk) => {
  pending += chunk;
  const parts = pending.split('\n');
  pending = parts.pop();
  lines.push(...parts.map((l) => JSON.parse(l)));
});
const send = (text) => raw.stdin.write(`${text}\n`);
const reply = (pred, what) => until(what, () => lines.find(pred), 20000);
send('{"jsonrpc":"2.0","id":1,"method":"session/list"');
check((await reply((l) => l.error && l.error.code === -32700, 'a parse error')).id === null,
      'a parse error names an id');
send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }));
await reply((l) => l.id === 2 && l.error && l.error.code === -32600, 'initialize first');
send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: 1 } }));
await reply((l) => l.id === 3 && l.result, 'initialize');
send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'session/fly', params: {} }));
await reply((l) => l.id === 4 && l.error && l.error.code === -32601, 'method not found');
send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'session/prompt',
                      params: { sessionId: sid, prompt: [{ type: 'audio', data: '', mimeType: 'a' }] } }));
await reply((l) => l.id === 5 && l.error && l.error.code === -32002, 'prompt of a session not open');
send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'session/load',
                      params: { sessionId: 'ses_nope', cwd: '/', mcpServers: [] } }));
await reply((l) => l.id === 6 && l.error && l.error.code === -32002, 'load of an unknown session');
send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'session/new', params: { cwd: 'relative' } }));
await reply((l) => l.id === 7 && l.error && l.error.code === -32602, 'a relative cwd');
send(`{"jsonrpc":"2.0","id":8,"method":"session/list","params":{"cwd":"${'x'.repeat(9 << 20)}"}}`);
const oversize = await reply((l) => l.error && l.error.message.includes('8388608'), 'oversize');
check(oversize.id === null && oversize.error.code === -32600, `oversize ${JSON.stringify(oversize)}`);
send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'session/list', params: {} }));
await reply((l) => l.id === 9 && l.result && Array.isArray(l.result.sessions), 'alive after it all');
const afterBad = { agents: (await call(daemon.url, 'GET', '/v1/agents')).json.agents.length,
                   events: (await readEvents(daemon.url, sid)).length };
check(JSON.stringify(before) === JSON.stringify(afterBad),
      `bad input changed the store: ${JSON.stringify(before)} -> ${JSON.stringify(afterBad)}`);
raw.stdin.end();
const rawCode = await within(10000, new Promise((resolve) => raw.once('exit', resolve)), 'raw exit');
check(rawCode === 0, `acp exited ${rawCode} at the end of its input`);
console.log('ok 8 bad input');

// ---- the end: closing the session leaves the agent on the daemon ------------------------------
await a.agent.request(acp.methods.agent.session.close, { sessionId: sid });
check((await call(daemon.url, 'GET', `/v1/agents/${sid}`)).json.closed === false,
      'session/close closed the daemon agent');
for (const e of [a, b, c, d]) {
  e.proc.stdin.end();
  check((await within(10000, e.exited, `${e.name} exit`)) === 0, `${e.name} did not exit 0`);
}
await env.close();
console.log('PASS acp_sdk_test');
