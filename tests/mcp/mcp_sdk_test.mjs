// `agentstream mcp` against the official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.32.2, its
// Client over StdioClientTransport), offline, with a daemon running the scripted agent
// (docs/mcp.md):
//   1. initialize (the negotiated protocol version), tools/list: the nine tools;
//   2. agent_create, agent_send with wait (the turn's end and its last message), agent_timeline,
//      agent_last_message, agents_list, agent_settings;
//   3. permission_answer of a waiting turn; agent_interrupt; a wait that times out; waits the
//      client cancels free their workers;
//   4. bad input: tool errors for bad arguments, JSON-RPC errors for an unknown tool, malformed
//      JSON, an unknown method and an oversize line; nothing stored changes;
//   5. notifyParent: a child's turn, open when the daemon is killed (-9), ends after the restart
//      (daemon_restarted) and that end reaches the parent's log once, then the next turn's end;
//   6. streamable HTTP at /mcp (StreamableHTTPClientTransport): the tools; waits the client
//      cancels free their workers (Mcp-Session-Id); an unknown session is 404; a foreign Origin is
//      refused (403); with --token a client without it is refused (401), with it served; a
//      non-loopback listen address without --token is refused at start.
//   node tests/mcp/mcp_sdk_test.mjs AGENTSTREAM_BIN
// Exit 77 (skipped) when the SDK is not installed (tools/setup.sh installs tests/peers).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { TestEnv, call, check, fail, readEvents, sleep, until } from '../lib/daemons.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node mcp_sdk_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const sdkDir = new URL('../peers/node_modules/@modelcontextprotocol/sdk/', import.meta.url);
if (!fs.existsSync(new URL('dist/esm/client/stdio.js', sdkDir))) {
  console.error('SKIP: @modelcontextprotocol/sdk is not installed in tests/peers (tools/setup.sh)');
  process.exit(77);
}
const { Client } = await import(new URL('dist/esm/client/index.js', sdkDir));
const { StdioClientTransport } = await import(new URL('dist/esm/client/stdio.js', sdkDir));
const { StreamableHTTPClientTransport } =
  await import(new URL('dist/esm/client/streamableHttp.js', sdkDir));
const { LATEST_PROTOCOL_VERSION } = await import(new URL('dist/esm/types.js', sdkDir));
const sdkVersion = JSON.parse(fs.readFileSync(new URL('package.json', sdkDir))).version;
if (sdkVersion !== '1.32.2') console.error(`note: SDK ${sdkVersion}, the reference is 1.32.2`);

const env = await TestEnv.create('mcp');
const daemon = env.daemon('d', bin);
await daemon.start(['--scripted-chunk-ms', '2', '--schedule-floor', '1s']);

// An MCP client connected to `agentstream mcp --url URL` over its stdio.
async function connect(name) {
  const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--url', daemon.url],
                                               stderr: 'pipe' });
  const log = fs.openSync(`${env.dir}/mcp-${name}.log`, 'a');
  const client = new Client({ name, version: '1' });
  await client.connect(transport);
  transport.stderr.on('data', (chunk) => fs.writeSync(log, chunk));
  // A tool's structured result; fails the test on a tool error unless `allowError`.
  client.tool = async (tool, args, { allowError = false, timeout = 60000 } = {}) => {
    const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout });
    if (r.isError && !allowError) fail(`${tool}: ${r.content?.[0]?.text}`);
    if (r.isError) return { error: r.content[0].text };
    check(r.content[0].type === 'text' &&
          JSON.stringify(JSON.parse(r.content[0].text)) === JSON.stringify(r.structuredContent),
          `${tool}: the text block is the structured result`);
    return r.structuredContent;
  };
  return { client, transport };
}

// ---- 1. initialize, tools/list ----------------------------------------------------------------
const { client: mcp, transport } = await connect('a');
check(mcp.getServerVersion()?.name === 'agentstream', 'serverInfo.name');
check(transport.protocolVersion === undefined || transport.protocolVersion === LATEST_PROTOCOL_VERSION,
      'protocol version');
const { tools } = await mcp.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(['agent_create', 'agent_git', 'agent_interrupt',
  'agent_last_message', 'agent_send', 'agent_settings', 'agent_timeline', 'agents_list',
  'agents_search', 'permission_answer', 'schedule_create', 'schedule_delete', 'schedule_pause',
  'schedule_resume', 'schedule_show', 'schedules_list']),
      `tools: ${names}`);
console.log(`ok 1 - initialize (SDK ${sdkVersion}) and tools/list`);

// ---- 2. create, send and wait, read -----------------------------------------------------------
const created = await mcp.tool('agent_create', { provider: 'scripted', cwd: env.dir, title: 'kid' });
const agent = created.agent.id;
check(created.agent.title === 'kid' && created.agent.provider === 'scripted', 'created snapshot');
const sent = await mcp.tool('agent_send', { agent, text: 'hello there', wait: true });
check(sent.turnOutcome === 'completed' && sent.timedOut === false, `send: ${JSON.stringify(sent)}`);
check(typeof sent.lastMessage === 'string' && sent.lastMessage.includes('You asked: hello there'),
      `lastMessage: ${sent.lastMessage}`);
const last = await mcp.tool('agent_last_message', { agent });
check(last.text === sent.lastMessage && last.turn === sent.turnId, 'agent_last_message');
const page = await mcp.tool('agent_timeline', { agent, limit: 3 });
check(page.items.length === 3 && page.hasOlder === true, `tail page: ${page.items.length}`);
const older = await mcp.tool('agent_timeline', { agent, direction: 'before',
                                                  cursor: page.startCursor });
check(older.items.some((i) => i.kind === 'user_message' && i.text === 'hello there'),
      'the older page holds the prompt');
const listed = await mcp.tool('agents_list', {});
check(listed.agents.some((a) => a.id === agent && a.status === 'idle'), 'agents_list');
// The daemon indexes the turn in the background; naming the agent makes the search current.
const found = await mcp.tool('agents_search', { query: 'hello there', agent, limit: 5 });
check(found.hits.some((h) => h.agent === agent && h.kind === 'user.message' &&
                             h.snippet.includes('\u0002hello\u0003')),
      `agents_search: ${JSON.stringify(found)}`);
const settings = await mcp.tool('agent_settings', { agent, thinking: 'on', model: 'scripted-2' });
check(settings.thinking === 'on' && settings.model === 'scripted-2' &&
      settings.capabilities.thinkingOptions.some((o) => o.id === 'on') &&
      settings.capabilities.commands.some((c) => c.name === 'help'),
      `agent_settings: ${JSON.stringify(settings)}`);
const refusedSetting = await mcp.tool('agent_settings', { agent, thinking: 'loud' },
                                      { allowError: true });
check(/loud/.test(refusedSetting.error ?? ''), 'agent_settings refuses an option the agent lacks');
console.log('ok 2 - agent_create, agent_send with wait, agent_timeline, agent_last_message, ' +
            'agents_search, agent_settings');

// ---- 2b. git actions on an agent's worktree ---------------------------------------------------
{
  const repo = `${env.dir}/repo`;
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], { stdio: 'pipe' }).toString();
  fs.mkdirSync(repo);
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(`${repo}/a.txt`, 'one\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
  const made = await call(daemon.url, 'POST', '/v1/agents',
                          { provider: 'scripted', cwd: repo, worktree: true });
  check(made.status === 200, `create with a worktree: ${made.text}`);
  fs.writeFileSync(`${made.json.cwd}/b.txt`, 'two\n');
  const committed = await mcp.tool('agent_git', { agent: made.json.id, action: 'commit',
                                                  message: 'add b' });
  check(committed.outcome === 'committed' && committed.message === 'add b',
        `agent_git commit: ${JSON.stringify(committed)}`);
  const merged = await mcp.tool('agent_git', { agent: made.json.id, action: 'merge' });
  check(merged.outcome === 'fast-forward' && merged.commit === committed.commit &&
        fs.existsSync(`${repo}/b.txt`), `agent_git merge: ${JSON.stringify(merged)}`);
  const wrong = await mcp.tool('agent_git', { agent: made.json.id, action: 'push', message: 'x' },
                               { allowError: true });
  check(/message is for commit/.test(wrong.error ?? ''), `agent_git refuses: ${wrong.error}`);
  const kinds = (await readEvents(daemon.url, made.json.id)).filter((e) => e.kind === 'workspace.action');
  check(kinds.length === 2, `two workspace.action events: ${kinds.length}`);
  console.log('ok 2b - agent_git commit and merge, recorded in the agent\'s log');
}

// ---- 2c. a schedule made, fired, shown, paused and deleted through the tools --------------------
{
  const made = await mcp.tool('schedule_create', { id: 'tick', every: '1s', template: {
    provider: 'scripted', cwd: env.dir, title: 'tick {{time}}' }, prompt: 'hello at {{tick}}' });
  check(made.id === 'tick' && made.every === '1s' && made.paused === false,
        `schedule_create: ${JSON.stringify(made)}`);
  const fired = await until('a firing with its turn completed', async () => {
    const shown = await mcp.tool('schedule_show', { schedule: 'tick' });
    return shown.firings.find((f) => f.outcome === 'fired' && f.turnOutcome === 'completed');
  });
  const events = await readEvents(daemon.url, fired.agent);
  const marks = events.filter((e) => e.kind === 'automation.fired');
  check(marks.length === 1 && marks[0].payload.source === 'schedule' &&
        marks[0].payload.id === 'tick' && marks[0].payload.key === fired.tick,
        `automation.fired names the schedule and the tick: ${JSON.stringify(marks)}`);
  const paused = await mcp.tool('schedule_pause', { schedule: 'tick' });
  check(paused.paused === true && paused.nextTick === null, `schedule_pause: ${JSON.stringify(paused)}`);
  const { schedules } = await mcp.tool('schedules_list', {});
  check(schedules.length === 1 && schedules[0].paused, `schedules_list: ${JSON.stringify(schedules)}`);
  const resumed = await mcp.tool('schedule_resume', { schedule: 'tick' });
  check(resumed.paused === false, `schedule_resume: ${JSON.stringify(resumed)}`);
  await mcp.tool('schedule_delete', { schedule: 'tick' });
  const gone = await mcp.tool('schedule_show', { schedule: 'tick' }, { allowError: true });
  check(/no schedule|not found/i.test(gone.error ?? ''), `deleted: ${gone.error}`);
  const refused = await mcp.tool('schedule_create', { id: 'bad', cron: '0 0 30 2 *', agent: 'x',
                                                      prompt: 'p' }, { allowError: true });
  check(/never fires/.test(refused.error ?? ''), `a cron that never fires: ${refused.error}`);
  console.log('ok 2c - schedule_create fires a new agent per tick; show, pause, list, resume, delete');
}

// ---- 3. permissions, interrupt, a wait that times out -----------------------------------------
async function pendingPermission() {
  return until('a pending permission', async () => {
    const { agents } = await mcp.tool('agents_list', {});
    const a = agents.find((x) => x.id === agent);
    return a.permissions.length > 0 && a.permissions[0].requestId;
  });
}
let waiting = mcp.tool('agent_send', { agent, text: 'ask permission first', wait: true });
await mcp.tool('permission_answer', { agent, requestId: await pendingPermission(),
                                      decision: 'allow' });
let ended = await waiting;
check(ended.turnOutcome === 'completed', `allowed turn: ${JSON.stringify(ended)}`);

waiting = mcp.tool('agent_send', { agent, text: 'ask permission again', wait: true });
await pendingPermission();
await mcp.tool('agent_interrupt', { agent });
ended = await waiting;
check(ended.turnOutcome === 'canceled', `interrupted turn: ${JSON.stringify(ended)}`);

const timed = await mcp.tool('agent_send', { agent, text: 'permission, then wait', wait: true,
                                             timeoutSeconds: 1 });
check(timed.timedOut === true && timed.turnId, `timed out: ${JSON.stringify(timed)}`);
await mcp.tool('agent_interrupt', { agent });

// Waits the client gives up on (notifications/cancelled) free their workers: more cancelled
// waits than the server has workers (8), and it still answers at once.
const aborts = [];
const cancelled = [];
const waitFor = (text) => {
  const abort = new AbortController();
  aborts.push(abort);
  cancelled.push(mcp.callTool({ name: 'agent_send', arguments: {
    agent, text, wait: true, timeoutSeconds: 600 } }, undefined,
  { signal: abort.signal, timeout: 600000 }).then(() => 'answered', () => 'aborted'));
};
waitFor('permission, and hold');  // holds the turn; the others queue behind it
await pendingPermission();
for (let i = 1; i <= 6; i++) waitFor(`queued ${i}`);
await until('the queued prompts', async () => {  // 7 workers wait; the 8th answers this
  const { agents } = await mcp.tool('agents_list', {});
  return agents.find((x) => x.id === agent).queue.length === 6;
});
for (let i = 7; i <= 9; i++) waitFor(`queued ${i}`);  // the last two wait for a worker
for (const abort of aborts) abort.abort('the test gives up');
check((await Promise.all(cancelled)).every((r) => r === 'aborted'), 'the cancelled calls');
const t0 = Date.now();
await mcp.tool('agents_list', {}, { timeout: 10000 });
check(Date.now() - t0 < 10000, 'a call after cancelled waits');
await mcp.tool('agent_interrupt', { agent });
await until('the queued prompts done', async () => {
  const { agents } = await mcp.tool('agents_list', {});
  const a = agents.find((x) => x.id === agent);
  return a.status === 'idle' && a.queue.length === 0;
});
console.log('ok 3 - permission_answer, agent_interrupt, a wait that times out, cancelled waits');

// ---- 4. bad input -------------------------------------------------------------------------------
const before = JSON.stringify((await readEvents(daemon.url, agent)).length) +
  JSON.stringify((await call(daemon.url, 'GET', '/v1/agents')).json.agents.length);
for (const [tool, args] of [['agent_create', { provider: 'scripted', cwd: 'relative' }],
                            ['agent_send', { agent, text: 'x', timeoutSeconds: 99999 }],
                            ['agent_send', { agent: 'ses_nope', text: 'x' }],
                            ['agent_timeline', { agent, direction: 'after' }],
                            ['permission_answer', { agent, requestId: 'r', decision: 'maybe' }],
                            ['agents_list', { extra: true }]]) {
  const r = await mcp.tool(tool, args, { allowError: true });
  check(typeof r.error === 'string' && r.error.length > 0, `${tool} ${JSON.stringify(args)}: error`);
}
let refused = null;
try {
  await mcp.callTool({ name: 'rm_rf', arguments: {} });
} catch (e) {
  refused = e;
}
check(refused && refused.code === -32602, `unknown tool: ${refused}`);

// The raw pipe: malformed JSON, an unknown method, a request before initialize, an oversize line.
const raw = spawn(bin, ['mcp', '--url', daemon.url], { stdio: ['pipe', 'pipe', 'pipe'] });
env.track(raw);
let out = '';
raw.stdout.on('data', (c) => { out += c; });
const replies = () => out.split('\n').filter((l) => l).map((l) => JSON.parse(l));
raw.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
raw.stdin.write('{not json\n');
raw.stdin.write('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}\n');
raw.stdin.write('{"jsonrpc":"2.0","id":3,"method":"no/such"}\n');
raw.stdin.write('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"agent_create","arguments":{"provider":"scripted","cwd":"' +
                'x'.repeat(9 << 20) + '"}}}\n');
raw.stdin.write('{"jsonrpc":"1.0","id":5,"method":"ping"}\n');
raw.stdin.write('{"jsonrpc":"2.0","id":6,"method":"ping"}\n');
await until('the raw replies', () => replies().some((r) => r.id === 6));
const byId = (id) => replies().find((r) => r.id === id);
const r0 = replies();
check(byId(1)?.error?.code === -32600, 'tools/list before initialize');
check(r0.some((r) => r.id === null && r.error?.code === -32700), 'malformed JSON: -32700');
check(byId(2)?.result?.protocolVersion === '2024-11-05', 'an older version is spoken');
check(byId(3)?.error?.code === -32601, 'unknown method: -32601');
check(r0.some((r) => r.id === null && r.error?.code === -32600 &&
                     r.error.message.includes('8388608')), 'oversize line: names the bound');
check(r0.some((r) => r.id === 5 && r.error?.code === -32600), 'jsonrpc 1.0 refused');
raw.stdin.end();
check(await new Promise((resolve) => raw.once('exit', resolve)) === 0, 'raw: exit 0 at input end');
const after = JSON.stringify((await readEvents(daemon.url, agent)).length) +
  JSON.stringify((await call(daemon.url, 'GET', '/v1/agents')).json.agents.length);
check(before === after, `nothing stored changed: ${before} vs ${after}`);
console.log('ok 4 - bad input: tool errors, JSON-RPC errors, nothing stored changes');

// ---- 5. notifyParent across a daemon restart ------------------------------------------------
const parent = (await mcp.tool('agent_create', { provider: 'scripted', cwd: env.dir })).agent.id;
const child = await mcp.tool('agent_create', { provider: 'scripted', cwd: env.dir,
                                               notifyParent: parent });
const kid = child.agent.id;
check(child.notifyConsumer, 'a notify consumer');
const open = await mcp.tool('agent_send', { agent: kid, text: 'permission please' });
check(open.outcome === 'accepted', `child send: ${JSON.stringify(open)}`);
await until('the child waiting on its permission', async () =>
  (await call(daemon.url, 'GET', `/v1/agents/${kid}`)).json.permissions.length > 0);
await mcp.close();
await daemon.kill('SIGKILL');
await daemon.start(['--scripted-chunk-ms', '2']);
const { client: mcp2 } = await connect('b');
const terminals = async () => (await readEvents(daemon.url, parent)).filter((e) => e.kind === 'subagent.event' &&
  e.payload.child === kid && e.payload.childKind.startsWith('turn.'));
await until('the restarted turn end in the parent', async () => (await terminals()).length >= 1);
// The next turn of the child (same consumer: asking again is idempotent) ends after the first in
// the parent's log, so a duplicate of the first would sit before it.
const again = await mcp2.tool('agent_send', { agent: kid, text: 'hello again', wait: true,
                                              notifyParent: parent });
check(again.turnOutcome === 'completed' && again.notifyConsumer === child.notifyConsumer,
      `second child turn: ${JSON.stringify(again)}`);
await until('the second turn end in the parent', async () => (await terminals()).length >= 2);
const seen = await terminals();
check(seen.length === 2, `turn ends in the parent: ${seen.length}`);
check(seen[0].payload.childKind === 'turn.failed' &&
      seen[0].payload.payload.code === 'daemon_restarted', `first: ${JSON.stringify(seen[0].payload)}`);
check(seen[1].payload.childKind === 'turn.completed' && seen[1].payload.childTurn === again.turnId,
      'second: the completed turn');
console.log('ok 5 - notifyParent: the child turn end reaches the parent once across kill -9');

await mcp2.close();

// ---- 6. streamable HTTP at /mcp --------------------------------------------------------------
async function httpClient(url, headers = {}) {
  const client = new Client({ name: 'http', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url),
                                                         { requestInit: { headers } }));
  return client;
}
async function refusedWith(url, headers) {
  try {
    const c = await httpClient(url, headers);
    await c.close();
  } catch (e) {
    return `${e.code} ${e}`;
  }
  return 'connected';
}
const overHttp = await httpClient(daemon.url);
const httpTools = (await overHttp.listTools()).tools.map((t) => t.name);
check(httpTools.length === 16, `tools over http: ${httpTools}`);
const httpList = await overHttp.callTool({ name: 'agents_list', arguments: {} });
check(!httpList.isError && httpList.structuredContent.agents.some((a) => a.id === kid),
      'agents_list over http');
const httpSend = await overHttp.callTool({ name: 'agent_send',
  arguments: { agent: kid, text: 'over http', wait: true } });
check(httpSend.structuredContent?.turnOutcome === 'completed', 'agent_send over http');
const httpBad = await overHttp.callTool({ name: 'agent_create', arguments: { cwd: '/' } });
check(httpBad.isError === true, 'a bad argument over http is a tool error');
// Over HTTP too, waits the client cancels (notifications/cancelled under the Mcp-Session-Id the
// initialize answer gave) free their workers: more cancelled waits than /mcp has workers (8).
const httpAgents = async () => (await overHttp.callTool({ name: 'agents_list', arguments: {} }))
  .structuredContent.agents.find((x) => x.id === kid);
const httpAborts = [];
const httpCancelled = [];
const httpWait = (text) => {
  const abort = new AbortController();
  httpAborts.push(abort);
  httpCancelled.push(overHttp.callTool({ name: 'agent_send', arguments: {
    agent: kid, text, wait: true, timeoutSeconds: 600 } }, undefined,
  { signal: abort.signal, timeout: 600000 }).then(() => 'answered', () => 'aborted'));
};
httpWait('permission, and hold');  // holds the turn; the others queue behind it
await until('a pending permission over http', async () => (await httpAgents()).permissions.length > 0);
for (let i = 1; i <= 6; i++) httpWait(`http queued ${i}`);
await until('the queued prompts over http', async () => (await httpAgents()).queue.length === 6);
for (let i = 7; i <= 9; i++) httpWait(`http queued ${i}`);  // the last two wait for a worker
for (const abort of httpAborts) abort.abort('the test gives up');
check((await Promise.all(httpCancelled)).every((r) => r === 'aborted'), 'the cancelled http calls');
const h0 = Date.now();
await overHttp.callTool({ name: 'agents_list', arguments: {} }, undefined, { timeout: 10000 });
check(Date.now() - h0 < 10000, 'an http call after cancelled waits');
await overHttp.callTool({ name: 'agent_interrupt', arguments: { agent: kid } });
await until('the http queue done', async () => {
  const a = await httpAgents();
  return a.status === 'idle' && a.queue.length === 0;
});
await overHttp.close();
const post = async (body) => {
  const r = await fetch(new URL('/mcp', daemon.url), { method: 'POST', body,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
  return { status: r.status, json: await r.json().catch(() => null) };
};
for (const [body, code] of [['', -32600], ['{nope', -32700], ['[1,2]', -32600],
                            ['{"jsonrpc":"2.0","id":1,"method":"nope"}', -32601]]) {
  const r = await post(body);
  check((code === -32601 ? r.status === 200 : r.status === 400) && r.json?.error?.code === code,
        `POST /mcp ${body}: ${r.status} ${JSON.stringify(r.json)}`);
}
const bigBody = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping',
                                            params: { pad: 'x'.repeat(2 << 20) } }));
check(bigBody.status === 413, `an oversize body: ${bigBody.status}`);
const rawGet = await call(daemon.url, 'GET', '/mcp');
check(rawGet.status === 405, `GET /mcp: ${rawGet.status}`);
// Sessions: initialize answers a new Mcp-Session-Id; DELETE ends it, and then it is unknown (404).
const mcpFetch = (method, body, session) => fetch(new URL('/mcp', daemon.url), { method, body,
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
             ...(session ? { 'mcp-session-id': session } : {}) } });
const init = await mcpFetch('POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
const session = init.headers.get('mcp-session-id');
check(init.status === 200 && /^mcps_[0-9a-f]{32}$/.test(session ?? ''), `initialize: ${init.status} ${session}`);
const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
check((await mcpFetch('POST', ping, session)).status === 200, 'a ping in the session');
check((await mcpFetch('POST', ping, 'mcps_unknown')).status === 404, 'an unknown session is 404');
check((await mcpFetch('DELETE', undefined, undefined)).status === 400, 'DELETE without a session');
check((await mcpFetch('DELETE', undefined, session)).status === 204, 'DELETE ends the session');
check((await mcpFetch('POST', ping, session)).status === 404, 'an ended session is 404');
check((await mcpFetch('DELETE', undefined, session)).status === 404, 'DELETE of an ended session');
const foreign = await refusedWith(daemon.url, { Origin: 'http://evil.example' });
check(foreign.includes('403'), `a foreign Origin: ${foreign}`);

const guarded = env.daemon('t', bin);
await guarded.start(['--token', 's3cret']);
const noToken = await refusedWith(guarded.url, {});
check(noToken.includes('401'), `no token: ${noToken}`);
const withToken = await httpClient(guarded.url, { Authorization: 'Bearer s3cret' });
const guardedCreate = await withToken.callTool({ name: 'agent_create',
  arguments: { provider: 'scripted', cwd: env.dir } });
check(!guardedCreate.isError, `a tool with the token: ${guardedCreate.content?.[0]?.text}`);
await withToken.close();
const open0 = spawn(bin, ['--data', `${env.dir}/open.data`, 'serve', '--listen', '0.0.0.0:0'],
                    { stdio: ['ignore', 'pipe', 'pipe'] });
env.track(open0);
let open0Err = '';
open0.stderr.on('data', (c) => { open0Err += c; });
const open0Code = await new Promise((resolve) => open0.once('exit', resolve));
check(open0Code !== 0 && /token/.test(open0Err), `0.0.0.0 without a token: ${open0Code} ${open0Err}`);
console.log('ok 6 - /mcp over streamable HTTP: tools, Origin refused, token required');

await env.close();
console.log('PASS');
