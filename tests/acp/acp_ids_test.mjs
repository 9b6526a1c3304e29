// JSON-RPC ids on `agentstream acp`, as raw lines on its stdio (no SDK), against a daemon running
// the scripted agent (docs/acp.md "Errors"):
//   1. ids are echoed byte for byte: integers beyond 64 bits, negative ones, strings with escapes,
//      null (a request with a null id is answered with id null), on answers given at once and on
//      answers after a daemon call (session/new, session/list, a prompt's turn end);
//   2. an id that is not a string, an integer or null (1e400, 1.5, true, {}, []) is -32600 with
//      id null; a message with an id but no method, result or error is -32600 with that id;
//   3. malformed JSON is -32700 "Parse error: invalid JSON at byte N", naming no library.
//   node tests/acp/acp_ids_test.mjs AGENTSTREAM_BIN
import { spawn } from 'node:child_process';
import { TestEnv, check, until } from '../lib/daemons.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node acp_ids_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const env = await TestEnv.create('acp-ids');
const daemon = env.daemon('d', bin);
await daemon.start(['--scripted-chunk-ms', '2']);

const acp = spawn(bin, ['acp', '--url', daemon.url, '--provider', 'scripted'],
                  { stdio: ['pipe', 'pipe', 'inherit'] });
env.track(acp);
let pending = '';
const lines = [];
acp.stdout.on('data', (chunk) => {
  pending += chunk;
  for (let nl; (nl = pending.indexOf('\n')) >= 0; pending = pending.slice(nl + 1))
    lines.push(pending.slice(0, nl));
});
// Writes `line` and returns the first reply line (a line with an "id" member that is no request
// of the agent and no notification) that came after it.
async function send(line) {
  const from = lines.length;
  acp.stdin.write(line + '\n');
  const isReply = (l) => /^\{"jsonrpc":"2\.0","id":/.test(l) && !/"method":/.test(l);
  return until(`a reply to ${line}`, () => lines.slice(from).find(isReply), 30000);
}
const request = (id, method, params) =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${JSON.stringify(params)}}`;

// ---- 1. ids echoed exactly --------------------------------------------------------------------
const init = await send(request('123456789012345678901234567890', 'initialize', { protocolVersion: 1 }));
check(init.startsWith('{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{'),
      `initialize: ${init}`);
const created = await send(request('"n\\u0065w"', 'session/new', { cwd: env.dir, mcpServers: [] }));
check(created.startsWith('{"jsonrpc":"2.0","id":"n\\u0065w","result":{'), `session/new: ${created}`);
const session = JSON.parse(created).result.sessionId;
const listed = await send(request('-98765432109876543210', 'session/list', {}));
check(listed.startsWith('{"jsonrpc":"2.0","id":-98765432109876543210,"result":{'), `list: ${listed}`);
const prompt = await send(request('18446744073709551616', 'session/prompt',
  { sessionId: session, prompt: [{ type: 'text', text: 'hello' }] }));
check(prompt === '{"jsonrpc":"2.0","id":18446744073709551616,"result":{"stopReason":"end_turn"}}',
      `prompt: ${prompt}`);
const nullId = await send(request('null', 'session/list', {}));
check(nullId.startsWith('{"jsonrpc":"2.0","id":null,"result":{'), `a null id: ${nullId}`);
console.log('ok 1 - ids echoed exactly, also after daemon calls and a turn');

// ---- 2. invalid ids, an id without a method ---------------------------------------------------
for (const id of ['1e400', '1.5', 'true', '{}', '[]', '{"a":1}']) {
  const r = await send(request(id, 'session/list', {}));
  check(r.startsWith('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'), `id ${id}: ${r}`);
}
for (const id of ['2', '123456789012345678901234567890', '"x"']) {
  const r = await send(`{"jsonrpc":"2.0","id":${id}}`);
  check(r.startsWith(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32600,`), `an id alone: ${r}`);
}
console.log('ok 2 - an invalid id is -32600 with id null; an id alone is -32600 with its id');

// ---- 3. parse errors --------------------------------------------------------------------------
for (const line of ['{"jsonrpc":"2.0","id":1,', 'nope', '{"a":"\\u12"}']) {
  const r = await send(line);
  const reply = JSON.parse(r);
  check(reply.id === null && reply.error.code === -32700, `${line}: ${r}`);
  check(/^Parse error: invalid JSON at byte \d+/.test(reply.error.message), reply.error.message);
  check(!/boost|\.hpp|\.ipp|\/usr\//.test(reply.error.message), `a library named: ${r}`);
}
console.log('ok 3 - parse errors say where and name no library');

// Every answer is to a request this test sent: one result with id null (the session/list above),
// none unasked (a session/new once answered a second time, with id null).
const nullResults = lines.filter((l) => l.startsWith('{"jsonrpc":"2.0","id":null,"result":'));
check(nullResults.length === 1, `results with id null: ${nullResults.map((l) => l.slice(0, 80))}`);
console.log('ok 4 - no answer that was not asked for');

acp.stdin.end();
await env.close();
console.log('PASS');
