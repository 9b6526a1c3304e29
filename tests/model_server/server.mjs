// Scripted model server: answers the Anthropic Messages streaming API (POST /v1/messages), the
// `HEAD /` connectivity probe, /v1/messages/count_tokens and /v1/models, with replies chosen by
// directives in the last user message, so the real `claude` CLI runs fully offline.
//
// Usage: node server.mjs [--port N]   (0 or absent: any free port)
// Prints one line "listening <port>" on stdout once it accepts connections; then one line per
// request ("request <n> <scenario>") for diagnostics. Exits when stdin closes.
//
// Directives (in the last user prompt, after <system-reminder> blocks are stripped):
//   [shell CMD]        a Bash tool call running CMD in the foreground, then a text reply
//   [bg-sleep N]       a Bash tool call `sleep N` with run_in_background:true, then a text reply;
//                      "do it again" repeats it (sleep 1 unless the env SCRIPTED_AGAIN_SLEEP says)
//   [slow N]           N text chunks, 250 ms apart (for interrupts)
//   [error]            an HTTP 400 invalid_request_error (fast fail)
//   [say TEXT]         replies TEXT exactly
//   anything else      replies "Echo: <prompt>"
// A request whose last user message carries tool results gets "Tool finished: <output>", one
// carrying a <task-notification> gets "Background task finished: <status>".
import http from 'node:http';

let port = 0;
const portArg = process.argv.indexOf('--port');
if (portArg > 0) port = Number(process.argv[portArg + 1]);
const againSleep = Number(process.env.SCRIPTED_AGAIN_SLEEP || '1');
let requestCount = 0;
let messageCount = 0;

function userText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((b) => b && b.type === 'text').map((b) => b.text).join('\n');
}

function stripReminders(text) {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '')
    .replace(/\[Request interrupted by user[^\]]*\]/g, '').trim();
}

// What to answer, from the last role:"user" message (role:"system" entries may follow it).
export function decide(messages) {
  const users = (messages || []).filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  if (!last) return { kind: 'text', text: 'Echo: (nothing)' };
  const blocks = Array.isArray(last.content) ? last.content : [];
  const results = blocks.filter((b) => b && b.type === 'tool_result');
  if (results.length > 0) {
    const r = results[results.length - 1];
    const out = typeof r.content === 'string' ? r.content : userText(r.content);
    const firstLine = String(out).split('\n')[0].slice(0, 200);
    return { kind: 'text', text: `Tool finished: ${firstLine}` };
  }
  // The CLI merges consecutive user turns (a failed or interrupted turn has no assistant reply)
  // into one message: the prompt is its last text block.
  const texts = (typeof last.content === 'string' ? [last.content] : blocks
    .filter((b) => b && b.type === 'text').map((b) => b.text))
    .map(stripReminders).filter((t) => t.length > 0);
  // Task notifications the CLI folded into a user prompt do not hide the prompt.
  const prompts = texts.filter((t) => !t.startsWith('<task-notification>'));
  if (prompts.length === 0 && texts.length > 0) {
    const note = texts[texts.length - 1].match(/<status>(\w+)<\/status>/);
    return { kind: 'text', text: `Background task finished: ${note ? note[1] : 'unknown'}` };
  }
  const text = prompts.length > 0 ? prompts[prompts.length - 1] : '';
  let m;
  if ((m = text.match(/\[shell ([^\]]+)\]/))) return { kind: 'tool', command: m[1], background: false };
  if ((m = text.match(/\[bg-sleep (\d+(?:\.\d+)?)\]/)))
    return { kind: 'tool', command: `sleep ${m[1]}`, background: true };
  if (/do it again/i.test(text)) return { kind: 'tool', command: `sleep ${againSleep}`, background: true };
  if ((m = text.match(/\[slow (\d+)\]/))) return { kind: 'slow', chunks: Number(m[1]) };
  if (/\[error\]/.test(text)) return { kind: 'error' };
  if ((m = text.match(/\[say ([^\]]*)\]/))) return { kind: 'text', text: m[1] };
  return { kind: 'text', text: `Echo: ${text.slice(0, 200)}` };
}

function frame(res, type, data) {
  if (res.destroyed) return;
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function startMessage(res, model) {
  const id = `msg_scripted_${++messageCount}_${process.pid}`;
  frame(res, 'message_start', {
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null,
      stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  return id;
}

function finish(res, stopReason) {
  frame(res, 'message_delta', { delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 5 } });
  frame(res, 'message_stop', {});
  res.end();
}

function textBlock(res, index, chunks) {
  frame(res, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
  for (const c of chunks)
    frame(res, 'content_block_delta', { index, delta: { type: 'text_delta', text: c } });
  frame(res, 'content_block_stop', { index });
}

function toolBlock(res, index, command, background) {
  const id = `toolu_scripted_${messageCount}_${process.pid}`;
  const input = { command, description: `Run ${command}` };
  if (background) input.run_in_background = true;
  frame(res, 'content_block_start', { index, content_block: { type: 'tool_use', id, name: 'Bash', input: {} } });
  frame(res, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } });
  frame(res, 'content_block_stop', { index });
}

function splitText(text) {
  const mid = Math.max(1, Math.floor(text.length / 2));
  return [text.slice(0, mid), text.slice(mid)].filter((s) => s.length > 0);
}

function answerStream(res, body, plan) {
  if (plan.kind === 'error') {
    res.writeHead(400, { 'content-type': 'application/json', 'request-id': 'req_scripted_err' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error',
      message: 'scripted failure: the model server was told to fail' } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache',
    'request-id': `req_scripted_${requestCount}` });
  startMessage(res, body.model || 'claude-scripted');
  if (plan.kind === 'text') {
    textBlock(res, 0, splitText(plan.text));
    return finish(res, 'end_turn');
  }
  if (plan.kind === 'tool') {
    textBlock(res, 0, [background(plan) ? 'Starting it in the background.' : 'Running it.']);
    toolBlock(res, 1, plan.command, plan.background);
    return finish(res, 'tool_use');
  }
  // slow: one text block streamed over time; stops early when the client goes away.
  frame(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    frame(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: `chunk ${sent} ` } });
    if (++sent >= plan.chunks) {
      clearInterval(timer);
      frame(res, 'content_block_stop', { index: 0 });
      finish(res, 'end_turn');
    }
  }, 250);
  res.on('close', () => clearInterval(timer));
}

function background(plan) { return plan.background === true; }

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (req.method === 'HEAD' || (req.method === 'GET' && url.pathname === '/')) {
    res.writeHead(200);
    return res.end();
  }
  if (req.method === 'GET' && url.pathname === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ data: [{ id: 'claude-scripted', type: 'model' }], has_more: false }));
  }
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (c) => { raw += c; });
  req.on('end', () => {
    let body = {};
    try { body = JSON.parse(raw || '{}'); } catch { body = {}; }
    if (url.pathname === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ input_tokens: 10 }));
    }
    if (url.pathname !== '/v1/messages') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: url.pathname } }));
    }
    const plan = decide(body.messages);
    requestCount += 1;
    process.stdout.write(`request ${requestCount} ${plan.kind}\n`);
    answerStream(res, body, plan);
  });
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
