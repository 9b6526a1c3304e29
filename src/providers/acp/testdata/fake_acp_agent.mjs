#!/usr/bin/env node
// A scripted ACP agent for the client tests: JSON-RPC 2.0 over stdio, one message per line.
// The prompt text picks the behaviour:
//   garbage     a non-JSON line and an oversize line, then "ok" and end_turn
//   silence     a non-JSON line, then nothing (the prompt never ends)
//   fs          fs/read_text_file outside the cwd, fs/write_text_file and fs/read_text_file inside
//   terminal    terminal/create `echo term-out`, wait_for_exit, output, release
//   perm        session/request_permission with option ids that say nothing about their kind
//   extras      a thought, a plan, a mode change, a usage update; usage in the prompt response
//   stream N G [perm]  N message chunks G ms apart with a tool call halfway, which first asks
//               permission with `perm` (bench/agents_load: a long turn of a working agent)
//   fail        answers the prompt with a JSON-RPC error (-32603), as an agent whose model request
//               failed does
//   anything    "Echo: <prompt>"
// With FAKE_DROP_AFTER_FAILURE_MS=N set, a prompt that arrives within N ms of a failed one is
// accepted and never answered, as codex-acp 0.16.0 does while it is still ending the failed turn.
// session/load replays a short history (user, agent, tool call) before its response.
import readline from 'node:readline';
import path from 'node:path';

let nextId = 100;
const waiting = new Map();
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const update = (sessionId, u) => send({ method: 'session/update', params: { sessionId, update: u } });
const chunk = (sessionId, text) => update(sessionId, { sessionUpdate: 'agent_message_chunk',
  content: { type: 'text', text } });
const call = (method, params) => new Promise((resolve) => {
  const id = nextId++;
  waiting.set(id, resolve);
  send({ id, method, params });
});
let cwd = '/';
const dropAfterFailure = Number(process.env.FAKE_DROP_AFTER_FAILURE_MS || 0);
let failedAt = -Infinity;

async function prompt(id, sessionId, text) {
  if (Date.now() - failedAt < dropAfterFailure) return;
  if (text === 'fail') {
    failedAt = Date.now();
    return send({ id, error: { code: -32603, message: 'Internal error: the model request failed' } });
  }
  if (text === 'garbage') {
    process.stdout.write('this is not json\n');
    process.stdout.write('{"jsonrpc":"2.0","method":"session/update","params":{"x":"' +
      'y'.repeat(Number(process.env.FAKE_BIG || 4096)) + '"}}\n');
    chunk(sessionId, 'ok');
  } else if (text === 'silence') {
    process.stdout.write('garbage before the silence\n');
    return;
  } else if (text === 'fs') {
    const outside = await call('fs/read_text_file', { sessionId, path: '/etc/hostname' });
    const sneaky = await call('fs/write_text_file', { sessionId,
      path: path.join(cwd, '..', 'escaped.txt'), content: 'no' });
    const wrote = await call('fs/write_text_file', { sessionId, path: path.join(cwd, 'sub', 'in.txt'),
      content: 'line1\nline2\nline3\n' });
    const read = await call('fs/read_text_file', { sessionId, path: path.join(cwd, 'sub', 'in.txt'),
      line: 2, limit: 1 });
    chunk(sessionId, `outside:${outside.error ? outside.error.code : 'read'} ` +
      `sneaky:${sneaky.error ? sneaky.error.code : 'wrote'} wrote:${wrote.error ? 'no' : 'yes'} ` +
      `read:${read.result ? read.result.content.trim() : read.error.message}`);
  } else if (text === 'terminal') {
    const created = await call('terminal/create', { sessionId, command: 'echo', args: ['term-out'] });
    const terminalId = created.result.terminalId;
    const exit = await call('terminal/wait_for_exit', { sessionId, terminalId });
    const out = await call('terminal/output', { sessionId, terminalId });
    await call('terminal/release', { sessionId, terminalId });
    const gone = await call('terminal/output', { sessionId, terminalId });
    const outside = await call('terminal/create', { sessionId, command: 'pwd', cwd: '/' });
    chunk(sessionId, `exit:${exit.result.exitCode} out:${out.result.output.trim()} ` +
      `released:${gone.error ? 'yes' : 'no'} outside:${outside.error ? outside.error.code : 'ran'}`);
  } else if (text === 'perm') {
    const toolCallId = `call_${nextId++}`;  // unique within the session, as ACP requires
    update(sessionId, { sessionUpdate: 'tool_call', toolCallId, title: 'Write x',
      kind: 'edit', status: 'pending', rawInput: { path: 'x' } });
    const r = await call('session/request_permission', { sessionId,
      toolCall: { toolCallId, title: 'Write x', kind: 'edit' },
      options: [{ optionId: 'zz-9', name: 'No', kind: 'reject_once' },
        { optionId: 'aa-1', name: 'Always', kind: 'allow_always' },
        { optionId: 'qq-5', name: 'Yes', kind: 'allow_once' }] });
    const o = r.result.outcome;
    update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId,
      status: o.optionId === 'qq-5' ? 'completed' : 'failed',
      content: [{ type: 'content', content: { type: 'text', text: 'tool says hi' } }] });
    chunk(sessionId, `chosen:${o.outcome === 'selected' ? o.optionId : o.outcome}`);
  } else if (text.startsWith('stream ')) {
    const [, n, gap, perm] = text.split(' ');
    const sleep = () => new Promise((resolve) => setTimeout(resolve, Number(gap)));
    for (let i = 0; i < Number(n); ++i) {
      if (i === Math.floor(Number(n) / 2)) {
        const toolCallId = `call_${nextId++}`;
        update(sessionId, { sessionUpdate: 'tool_call', toolCallId, title: 'ls', kind: 'execute',
          status: 'pending', rawInput: { command: 'ls' } });
        let allowed = true;
        if (perm === 'perm') {
          const r = await call('session/request_permission', { sessionId,
            toolCall: { toolCallId, title: 'ls', kind: 'execute' },
            options: [{ optionId: 'yes', name: 'Yes', kind: 'allow_once' },
              { optionId: 'no', name: 'No', kind: 'reject_once' }] });
          allowed = r.result?.outcome?.optionId === 'yes';
        }
        update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId,
          status: allowed ? 'completed' : 'failed',
          content: [{ type: 'content', content: { type: 'text', text: 'README.md src tests' } }] });
      }
      chunk(sessionId, 'token ');
      await sleep();
    }
  } else if (text === 'extras') {
    update(sessionId, { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } });
    update(sessionId, { sessionUpdate: 'plan', entries: [
      { content: 'step one', priority: 'high', status: 'completed' },
      { content: 'step two', priority: 'low', status: 'pending' }] });
    update(sessionId, { sessionUpdate: 'current_mode_update', currentModeId: 'plan' });
    update(sessionId, { sessionUpdate: 'usage_update', used: 10, size: 100 });
    chunk(sessionId, 'done');
    send({ id, result: { stopReason: 'end_turn', usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } } });
    return;
  } else {
    chunk(sessionId, `Echo: ${text}`);
  }
  send({ id, result: { stopReason: 'end_turn' } });
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id !== undefined && !m.method) {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (w) w(m);
    return;
  }
  const p = m.params || {};
  switch (m.method) {
    case 'initialize':
      return send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true },
        agentInfo: { name: 'fake-acp', version: '9.9.9' }, authMethods: [] } });
    case 'session/new':
      cwd = p.cwd;
      send({ id: m.id, result: { sessionId: 'fake-session-1', modes: { currentModeId: 'default',
        availableModes: [{ id: 'default', name: 'Default' }, { id: 'plan', name: 'Plan' }] } } });
      return update('fake-session-1', { sessionUpdate: 'available_commands_update',
        availableCommands: [{ name: 'init', description: 'Set up', input: null }] });
    case 'session/load':
      cwd = p.cwd;
      update(p.sessionId, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'old prompt' } });
      chunk(p.sessionId, 'old answer');
      update(p.sessionId, { sessionUpdate: 'tool_call', toolCallId: 'old_call', title: 'ls', kind: 'execute',
        status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'a b' } }] });
      return send({ id: m.id, result: { modes: { currentModeId: 'default', availableModes: [] } } });
    case 'session/set_mode':
      return send({ id: m.id, result: {} });
    case 'session/prompt':
      return void prompt(m.id, p.sessionId, (p.prompt || []).map((b) => b.text).join(''));
    case 'session/cancel':
      return;
    default:
      if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: `no ${m.method}` } });
  }
});
process.stdin.on('end', () => process.exit(0));
