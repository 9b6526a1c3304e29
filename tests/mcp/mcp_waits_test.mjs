// The daemon's /mcp with many waiting calls, and JSON-RPC ids on every MCP transport, as raw
// JSON-RPC (fetch and a pipe; no SDK), against a daemon running the scripted agent (docs/mcp.md):
//   1. 64 agent_send calls with wait, over four MCP sessions (16 each), on agents held by a
//      permission request: every prompt reaches its agent, and agents_list answers while all 64
//      are still open (a wait holds no /mcp worker);
//   2. the bounds: a 17th waiting call of one session, and of one address without a session, is
//      refused at once with JSON-RPC error -32000 and its prompt is not sent; another client is
//      not refused;
//   3. once the permissions are answered every wait ends with its turn, answered with its id as
//      sent (integers beyond 64 bits included);
//   4. ids: echoed byte for byte (big integers, strings with escapes); 1e400, 1.5, true, {} and []
//      are -32600 with id null; an id without method, result or error is -32600 with that id; a
//      parse error says where and names no library; the same on `agentstream mcp` (stdio).
//   node tests/mcp/mcp_waits_test.mjs AGENTSTREAM_BIN
import { spawn } from 'node:child_process';
import { TestEnv, call, check, until } from '../lib/daemons.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node mcp_waits_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const kPerClient = 16;  // McpHttp::kMaxWaitsPerClient

const env = await TestEnv.create('mcp-waits');
const daemon = env.daemon('d', bin);
await daemon.start(['--scripted-chunk-ms', '2']);

// One POST of `text` (a JSON-RPC message as written) to /mcp: {status, text, json, session}.
async function post(text, session, timeoutMs = 120000) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) headers['mcp-session-id'] = session;
  const r = await fetch(new URL('/mcp', daemon.url), { method: 'POST', body: text, headers,
                                                       signal: AbortSignal.timeout(timeoutMs) });
  const body = await r.text();
  let json = null;
  try {
    json = JSON.parse(body);
  } catch {}
  return { status: r.status, text: body, json, session: r.headers.get('mcp-session-id') };
}
async function initialize() {
  const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }));
  check(r.status === 200 && r.session, `initialize: ${r.status} ${r.text}`);
  return r.session;
}
// A tools/call as text, with `id` written as is (a JSON text).
const toolCall = (id, name, args) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${JSON.stringify({ name, arguments: args })}}`;
const agentsNow = async () => (await call(daemon.url, 'GET', '/v1/agents')).json.agents;

// ---- 1. 64 open waits, and agents_list --------------------------------------------------------
const agents = [];
for (let i = 0; i < 8; i++) {
  const r = await call(daemon.url, 'POST', '/v1/agents', { provider: 'scripted', cwd: env.dir });
  check(r.status === 200 || r.status === 201, `create: ${r.status} ${r.text}`);
  agents.push(r.json.id);
}
const sessions = [await initialize(), await initialize(), await initialize(), await initialize()];
const waits = [];  // {id (JSON text), promise, settled}
function openWait(id, agent, text, session) {
  const w = { id, settled: false };
  w.promise = post(toolCall(id, 'agent_send', { agent, text, wait: true, timeoutSeconds: 600 }),
                   session, 600000)
    .finally(() => { w.settled = true; });
  waits.push(w);
  return w;
}
// Each agent's first prompt asks a permission and holds its turn; the other prompts queue.
const waitId = (i) => (i % 2 === 0 ? `${123456789012345678901234567890n + BigInt(i)}` : `"w\\u00e9${i}"`);
for (let i = 0; i < 8; i++) openWait(waitId(i), agents[i], `permission please ${i}`, sessions[i % 4]);
await until('every agent held by a permission request', async () =>
  (await agentsNow()).filter((a) => agents.includes(a.id) && a.permissions.length > 0).length === 8);
for (let i = 8; i < 64; i++) openWait(waitId(i), agents[i % 8], `queued ${i}`, sessions[i % 4]);
// (A waiting call that held a worker would keep the calls behind it from sending their prompts.)
await until('every prompt at its agent (8 permissions, 56 queued)', async () => {
  const list = (await agentsNow()).filter((a) => agents.includes(a.id));
  return list.reduce((n, a) => n + a.permissions.length, 0) === 8 &&
         list.reduce((n, a) => n + a.queue.length, 0) === 56;
}, 60000);
check(waits.every((w) => !w.settled), 'the 64 waits are open');
const list = await post(toolCall(1, 'agents_list', {}), sessions[0]);
check(list.status === 200 && list.json.result?.structuredContent?.agents?.length >= 8,
      `agents_list: ${list.status} ${list.text.slice(0, 300)}`);
check(waits.every((w) => !w.settled), 'agents_list answered while the 64 waits are open');
console.log('ok 1 - agents_list answers while 64 waits are open over four sessions');

// ---- 2. the bounds ---------------------------------------------------------------------------
const queued = async () => (await agentsNow()).reduce((n, a) => n + a.queue.length, 0);
const before = await queued();
const over = await post(toolCall('"over"', 'agent_send', { agent: agents[0], text: 'one too many',
                                                           wait: true }), sessions[1]);
check(over.status === 200 && over.json.error?.code === -32000 && over.json.id === 'over' &&
      over.json.error.data?.limit === kPerClient && /too many waiting calls/.test(over.json.error.message),
      `a 17th wait of one session: ${over.text}`);
// Without a session the client is its address: 16 waits are taken, the 17th is refused.
const sessionless = [];
for (let i = 0; i < kPerClient; i++)
  sessionless.push(openWait(`${1000 + i}`, agents[i % 8], `sessionless ${i}`, undefined));
await until('the sessionless prompts queued', async () => (await queued()) === before + kPerClient);
const overAddress = await post(toolCall(99, 'agent_send', { agent: agents[1], text: 'too many',
                                                            wait: true }));
check(overAddress.json?.error?.code === -32000 && overAddress.json.id === 99,
      `a 17th sessionless wait: ${overAddress.text}`);
check((await queued()) === before + kPerClient, 'the refused prompts were not sent');
// Another client (a new session) still waits; a call without wait is never counted.
const other = await initialize();
openWait('"fifth"', agents[2], 'another client', other);
await until('the fifth session\'s prompt queued', async () => (await queued()) === before + kPerClient + 1);
const noWait = await post(toolCall(7, 'agent_send', { agent: agents[3], text: 'no wait' }), sessions[1]);
check(noWait.json?.result && !noWait.json.result.isError, `a send without wait: ${noWait.text}`);
check(waits.every((w) => !w.settled), 'the waits are still open');
console.log('ok 2 - 16 waiting calls per client (session or address), the next refused with -32000');

// ---- 3. the waits end with their turns, answered with their ids ------------------------------
await until('every wait answered', async () => {
  for (const a of await agentsNow()) {
    for (const p of a.permissions)
      await call(daemon.url, 'POST', `/v1/agents/${a.id}/permissions/${encodeURIComponent(p.requestId)}`,
                 { decision: 'allow' });
  }
  return waits.every((w) => w.settled);
}, 120000);
for (const w of waits) {
  const r = await w.promise;
  check(r.status === 200, `wait ${w.id}: ${r.status}`);
  check(r.text.startsWith(`{"jsonrpc":"2.0","id":${w.id},"result":`), `id echoed: ${r.text.slice(0, 120)}`);
  check(r.json.result.structuredContent?.turnOutcome === 'completed', `wait ${w.id}: ${r.text.slice(0, 300)}`);
}
console.log('ok 3 - every wait ends with its turn, answered with its id as sent');

// ---- 4. ids, on /mcp and on `agentstream mcp` -------------------------------------------------
const ping = (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
const cases = [
  // [line, expected reply text or {code, id} of an error]
  [ping('123456789012345678901234567890'), '{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}'],
  [ping('-18446744073709551617'), '{"jsonrpc":"2.0","id":-18446744073709551617,"result":{}}'],
  [ping('"a\\u0062\\"c"'), '{"jsonrpc":"2.0","id":"a\\u0062\\"c","result":{}}'],
  [ping('1e400'), { code: -32600, id: 'null' }],
  [ping('1.5'), { code: -32600, id: 'null' }],
  [ping('true'), { code: -32600, id: 'null' }],
  [ping('{}'), { code: -32600, id: 'null' }],
  [ping('[]'), { code: -32600, id: 'null' }],
  ['{"jsonrpc":"2.0","id":2}', { code: -32600, id: '2' }],
  ['{"jsonrpc":"2.0","id":98765432109876543210}', { code: -32600, id: '98765432109876543210' }],
  ['{"jsonrpc":"2.0","id":1,', { code: -32700, id: 'null' }],
];
function checkReply(where, line, expected, text) {
  if (typeof expected === 'string') return check(text === expected, `${where} ${line}: ${text}`);
  check(text.startsWith(`{"jsonrpc":"2.0","id":${expected.id},"error":{"code":${expected.code},`),
        `${where} ${line}: ${text}`);
  const message = JSON.parse(text).error.message;
  check(!/boost|\.hpp|\.ipp|\/usr\//.test(message), `${where}: no library in ${message}`);
  if (expected.code === -32700) check(/^Parse error: invalid JSON at byte \d+/.test(message), message);
}
for (const [line, expected] of cases) checkReply('/mcp', line, expected, (await post(line)).text);

const stdio = spawn(bin, ['mcp', '--url', daemon.url], { stdio: ['pipe', 'pipe', 'inherit'] });
env.track(stdio);
let out = '';
const lines = [];
stdio.stdout.on('data', (chunk) => {
  out += chunk;
  for (let nl; (nl = out.indexOf('\n')) >= 0; out = out.slice(nl + 1)) lines.push(out.slice(0, nl));
});
stdio.stdin.write(ping(0).replace('"ping"', '"initialize","params":{"protocolVersion":"2025-11-25"}') + '\n');
await until('initialize on stdio', () => lines.length === 1);
for (const [line, expected] of cases) {
  const n = lines.length;
  stdio.stdin.write(line + '\n');
  await until(`a reply to ${line}`, () => lines.length > n, 10000);
  checkReply('stdio', line, expected, lines[n]);
}
stdio.stdin.end();
console.log('ok 4 - ids echoed exactly, invalid ids and id-only messages -32600, clean parse errors');

await env.close();
console.log('PASS');
