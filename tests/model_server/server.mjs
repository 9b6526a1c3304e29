// Scripted model server: answers the Anthropic Messages streaming API (POST /v1/messages), the
// `HEAD /` connectivity probe, /v1/messages/count_tokens and /v1/models (the `claude` CLI, the
// Claude ACP adapter, opencode's built-in anthropic provider), and the Gemini API
// (POST /v1beta/models/<m>:streamGenerateContent, :generateContent, :countTokens; gemini-cli) and
// the OpenAI Responses API (POST /v1/responses, stream:true; codex with wire_api="responses", and
// codex-acp), and the OpenAI Chat Completions API (POST /v1/chat/completions, streamed or not;
// qwen-code with OPENAI_BASE_URL), with replies chosen by directives in the last user message, so
// the real CLIs run fully offline. The shell tool call uses the tool name the request offers: Bash
// (claude), bash (opencode), mcp__acp__Bash (the Claude ACP adapter), run_shell_command (gemini,
// qwen-code), exec_command (codex).
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
//   [recall]           replies "Recall: " + the earlier user prompts of the request, joined by
//                      " | " (a resumed session's request carries its past)
//   [mcp TOOL {ARGS}]  (one or more, in order) calls the MCP tool whose offered name ends in
//                      "__TOOL" (claude names them mcp__SERVER__TOOL) with ARGS, one call per
//                      request; "$agent" in ARGS becomes the agent id (agent.id) of the first
//                      call's result. After the last result it replies "MCP done: <result>".
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
  // A prompt after the tool results (opencode sends a denied call's result together with the
  // next prompt) is what to answer.
  const lastResult = blocks.map((b) => b && b.type).lastIndexOf('tool_result');
  const after = blocks.slice(lastResult + 1).filter((b) => b && b.type === 'text')
    .map((b) => stripReminders(b.text))
    .filter((t) => t.length > 0 && !t.startsWith('<task-notification>'));
  const mcp = mcpPlan(users);
  if (mcp) return mcp;
  if (results.length > 0 && after.length === 0) {
    const r = results[results.length - 1];
    const out = typeof r.content === 'string' ? r.content : userText(r.content);
    // The Claude ACP adapter's terminal tool reports "Exited with code N.Final output:\n\n<out>".
    const final = String(out).match(/Final output:\s*\n+([^\n]*)/);
    const firstLine = (final ? final[1] : String(out).split('\n')[0]).slice(0, 200);
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
  if (/\[recall\]/.test(text)) {
    const earlier = users.slice(0, -1).flatMap((u) => (typeof u.content === 'string' ? [u.content]
      : (Array.isArray(u.content) ? u.content : []).filter((b) => b && b.type === 'text').map((b) => b.text)))
      .map(stripReminders).filter((t) => t.length > 0 && !t.startsWith('<task-notification>'));
    return { kind: 'text', text: `Recall: ${earlier.join(' | ')}` };
  }
  return { kind: 'text', text: `Echo: ${text.slice(0, 200)}` };
}

function resultText(block) {
  return typeof block.content === 'string' ? block.content : userText(block.content);
}

// The next step of the [mcp TOOL {ARGS}] directives of the last text prompt: a tool call per
// tool result received since that prompt, then the final text.
function mcpPlan(users) {
  let at = -1;
  for (let i = users.length - 1; i >= 0 && at < 0; i--) {
    const content = users[i].content;
    const texts = typeof content === 'string' ? [content] : (Array.isArray(content) ? content : [])
      .filter((b) => b && b.type === 'text').map((b) => stripReminders(b.text));
    if (texts.some((t) => t.includes('[mcp '))) at = i;
  }
  if (at < 0) return null;
  const prompt = userText(users[at].content);
  const steps = [...prompt.matchAll(/\[mcp (\w+) (\{[^\]]*\})\]/g)].map((m) => ({ tool: m[1], args: m[2] }));
  const results = users.slice(at).flatMap((u) => (Array.isArray(u.content) ? u.content : [])
    .filter((b) => b && b.type === 'tool_result').map(resultText));
  if (results.length >= steps.length) {
    return { kind: 'text', text: `MCP done: ${(results[results.length - 1] || '').slice(0, 2000)}` };
  }
  let agent = '';
  try {
    agent = JSON.parse(results[0]).agent.id;
  } catch {}
  return { kind: 'mcp', tool: steps[results.length].tool,
           input: JSON.parse(steps[results.length].args.replaceAll('$agent', agent)) };
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

function toolBlock(res, index, command, background, name) {
  const id = `toolu_scripted_${messageCount}_${process.pid}`;
  const input = { command, description: `Run ${command}` };
  if (background) input.run_in_background = true;
  if (name.includes('__')) input.timeout = 120000;  // the adapter's MCP Bash requires it
  frame(res, 'content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } });
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
  if (plan.kind === 'mcp') {
    const offered = (body.tools || []).map((t) => t && t.name);
    const name = offered.find((n) => typeof n === 'string' && n.endsWith(`__${plan.tool}`)) || plan.tool;
    const id = `toolu_scripted_${messageCount}_${process.pid}`;
    frame(res, 'content_block_start', { index: 0, content_block: { type: 'tool_use', id, name, input: {} } });
    frame(res, 'content_block_delta', { index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(plan.input) } });
    frame(res, 'content_block_stop', { index: 0 });
    return finish(res, 'tool_use');
  }
  if (plan.kind === 'tool') {
    textBlock(res, 0, [background(plan) ? 'Starting it in the background.' : 'Running it.']);
    const offered = (body.tools || []).map((t) => t && t.name);
    // Bash (claude), bash (opencode), mcp__acp__Bash (the Claude ACP adapter when the client
    // offers terminals).
    const name = offered.includes('Bash') ? 'Bash'
      : offered.find((n) => typeof n === 'string' && /(^|__)bash$/i.test(n)) || 'Bash';
    toolBlock(res, 1, plan.command, plan.background, name);
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

// ---- OpenAI Responses API (codex, wire_api = "responses") ----

// exec_command answers "Chunk ID: ...\nProcess exited with code 0\n...\nOutput:\n<out>".
function codexToolOutput(output) {
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  const m = text.match(/\nOutput:\n([^\n]*)/);
  return m ? m[1] : text;
}

// Responses `input` items as the Anthropic-shaped messages decide() reads.
function responsesMessages(input) {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out = [];
  for (const item of input || []) {
    if (item.type === 'function_call_output') {
      out.push({ role: 'user', content: [{ type: 'tool_result', content: codexToolOutput(item.output) }] });
    } else if (item.type === 'message' || (!item.type && item.role)) {
      const content = typeof item.content === 'string' ? [{ type: 'text', text: item.content }]
        : (item.content || []).filter((c) => typeof c.text === 'string')
          .map((c) => ({ type: 'text', text: c.text }));
      // Codex sends its environment and instructions as user messages of their own.
      const real = content.filter((c) => !/^\s*<(environment_context|user_instructions|permissions|INSTRUCTIONS)/i.test(c.text)
        && !c.text.startsWith('# AGENTS.md'));
      if (item.role === 'user' && real.length === 0) continue;
      out.push({ role: item.role === 'user' ? 'user' : item.role === 'assistant' ? 'assistant' : 'system',
        content: real });
    }
  }
  return out;
}

function responsesFrame(res, type, data) {
  if (res.destroyed) return;
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function answerResponses(res, body) {
  const plan = decide(responsesMessages(body.input));
  requestCount += 1;
  process.stdout.write(`request ${requestCount} responses-${plan.kind}\n`);
  if (plan.kind === 'error') {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'scripted',
      message: 'scripted failure: the model server was told to fail' } }));
  }
  const id = `resp_scripted_${requestCount}_${process.pid}`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  responsesFrame(res, 'response.created', { response: { id, status: 'in_progress', output: [] } });
  let index = 0;
  const message = (chunks, done) => {
    const itemId = `msg_scripted_${requestCount}_${index}`;
    const outputIndex = index++;
    responsesFrame(res, 'response.output_item.added', { output_index: outputIndex,
      item: { type: 'message', id: itemId, role: 'assistant', status: 'in_progress', content: [] } });
    let text = '';
    const emit = (delta) => {
      text += delta;
      responsesFrame(res, 'response.output_text.delta', { item_id: itemId, output_index: outputIndex,
        content_index: 0, delta });
    };
    const finish = () => responsesFrame(res, 'response.output_item.done', { output_index: outputIndex,
      item: { type: 'message', id: itemId, role: 'assistant', status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }] } });
    if (!chunks) return { emit, finish };
    chunks.forEach(emit);
    finish();
    if (done) done();
    return null;
  };
  const complete = () => {
    responsesFrame(res, 'response.completed', { response: { id, status: 'completed', output: [],
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } } });
    res.end();
  };
  if (plan.kind === 'text') return message(splitText(plan.text), complete);
  if (plan.kind === 'tool') {
    message(['Running it.']);
    const callId = `call_scripted_${requestCount}_${process.pid}`;
    const item = { type: 'function_call', id: `fc_${callId}`, call_id: callId, name: 'exec_command',
      arguments: JSON.stringify({ cmd: plan.command }) };
    responsesFrame(res, 'response.output_item.added', { output_index: index,
      item: { ...item, arguments: '', status: 'in_progress' } });
    responsesFrame(res, 'response.output_item.done', { output_index: index++,
      item: { ...item, status: 'completed' } });
    return complete();
  }
  const m = message(null);
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    m.emit(`chunk ${sent} `);
    if (++sent >= plan.chunks) {
      clearInterval(timer);
      m.finish();
      complete();
    }
  }, 250);
  res.on('close', () => clearInterval(timer));
}

// ---- OpenAI Chat Completions API (qwen-code with OPENAI_BASE_URL; stream:true or not) ----

// A tool message's text: run_shell_command answers "Command: ...\nOutput: <out>\n..." (as gemini).
function chatToolOutput(content) {
  const text = typeof content === 'string' ? content : userText(content);
  const m = text.match(/^Output: ?(.*)$/m);
  return m ? m[1] : text;
}

// Chat `messages` as the Anthropic-shaped messages decide() reads. A role:"tool" message is a
// tool result; qwen-code's set-up message (date, OS, folder listing) is not a prompt.
function chatMessages(messages) {
  const out = [];
  for (const m of messages || []) {
    const text = typeof m.content === 'string' ? m.content : userText(m.content);
    if (m.role === 'tool') {
      out.push({ role: 'user',
        content: [{ type: 'tool_result', content: chatToolOutput(m.content) }] });
    } else if (m.role === 'user') {
      if (/^This is the Qwen Code\. We are setting up the context/.test(text)) continue;
      out.push({ role: 'user', content: [{ type: 'text', text }] });
    } else {
      out.push({ role: m.role === 'assistant' ? 'assistant' : 'system',
        content: [{ type: 'text', text }] });
    }
  }
  return out;
}

function chatFrame(res, id, model, delta, finish, usage) {
  if (res.destroyed) return;
  const data = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model,
    choices: delta ? [{ index: 0, delta, finish_reason: finish || null }] : [] };
  if (usage) data.usage = usage;
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

// The shell tool call: run_shell_command (qwen-code) or whatever shell tool the request offers.
function chatToolCall(body, plan) {
  const tools = (body.tools || []).map((t) => t && t.function).filter(Boolean);
  const id = `call_scripted_${requestCount}_${process.pid}`;
  if (plan.kind === 'mcp') {
    const tool = tools.find((t) => t.name === plan.tool || t.name.endsWith(`__${plan.tool}`));
    return { id, name: tool ? tool.name : plan.tool, args: plan.input };
  }
  const tool = tools.find((t) => t.name === 'run_shell_command')
    || tools.find((t) => /(^|_)(bash|shell)$/i.test(t.name)) || { name: 'run_shell_command' };
  const args = { command: plan.command, description: `Run ${plan.command}` };
  const props = (tool.parameters && tool.parameters.properties) || {};
  if ('is_background' in props) args.is_background = plan.background;
  else if (plan.background) args.run_in_background = true;
  return { id, name: tool.name, args };
}

function answerChat(res, body) {
  const plan = decide(chatMessages(body.messages));
  requestCount += 1;
  process.stdout.write(`request ${requestCount} chat-${plan.kind}\n`);
  if (plan.kind === 'error') {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'scripted',
      message: 'scripted failure: the model server was told to fail' } }));
  }
  const id = `chatcmpl_scripted_${requestCount}_${process.pid}`;
  const model = body.model || 'chat-scripted';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const call = plan.kind === 'tool' || plan.kind === 'mcp' ? chatToolCall(body, plan) : null;
  if (!body.stream) {
    // Side requests (qwen-code's next-speaker checks and the like) and non-streaming clients.
    const message = { role: 'assistant', content: plan.kind === 'text' ? plan.text
      : plan.kind === 'slow' ? Array.from({ length: plan.chunks }, (_, i) => `chunk ${i} `).join('')
        : plan.kind === 'tool' ? 'Running it.' : null };
    if (call) message.tool_calls = [{ id: call.id, type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args) } }];
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ id, object: 'chat.completion',
      created: Math.floor(Date.now() / 1000), model,
      choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }], usage }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const complete = (finish) => {
    chatFrame(res, id, model, {}, finish);
    if (body.stream_options && body.stream_options.include_usage)
      chatFrame(res, id, model, null, null, usage);
    if (!res.destroyed) res.write('data: [DONE]\n\n');
    res.end();
  };
  if (plan.kind === 'text') {
    splitText(plan.text).forEach((t, i) => chatFrame(res, id, model,
      i === 0 ? { role: 'assistant', content: t } : { content: t }));
    return complete('stop');
  }
  if (call) {
    if (plan.kind === 'tool') chatFrame(res, id, model, { role: 'assistant', content: 'Running it.' });
    chatFrame(res, id, model, { ...(plan.kind === 'tool' ? {} : { role: 'assistant' }),
      tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    chatFrame(res, id, model,
      { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(call.args) } }] });
    return complete('tool_calls');
  }
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    const content = `chunk ${sent} `;
    chatFrame(res, id, model, sent === 0 ? { role: 'assistant', content } : { content });
    if (++sent >= plan.chunks) {
      clearInterval(timer);
      complete('stop');
    }
  }, 250);
  res.on('close', () => clearInterval(timer));
}

// ---- Gemini API (gemini-cli with GOOGLE_GEMINI_BASE_URL) ----

// A functionResponse's text: run_shell_command answers "Command: ...\nOutput: <out>\n...".
function geminiToolOutput(response) {
  const r = response && (response.output ?? response.llmContent ?? response.result ?? response);
  const text = typeof r === 'string' ? r : JSON.stringify(r);
  const m = text.match(/^Output: ?(.*)$/m);
  return m ? m[1] : text;
}

// Gemini `contents` as the Anthropic-shaped messages decide() reads.
function geminiMessages(contents) {
  return (contents || []).map((c) => ({
    role: c.role === 'model' ? 'assistant' : 'user',
    content: (c.parts || []).map((p) => {
      if (p.functionResponse)
        return { type: 'tool_result', content: geminiToolOutput(p.functionResponse.response) };
      if (typeof p.text === 'string') return { type: 'text', text: p.text };
      return { type: 'other' };
    }),
  }));
}

function geminiChunk(res, parts, finish) {
  if (res.destroyed) return;
  const candidate = { content: { role: 'model', parts }, index: 0 };
  const data = { candidates: [candidate], modelVersion: 'gemini-scripted' };
  if (finish) {
    candidate.finishReason = 'STOP';
    data.usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  }
  res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
}

function answerGemini(req, res, url, body) {
  const action = url.pathname.split(':').pop();
  if (action === 'countTokens') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ totalTokens: 10 }));
  }
  const plan = decide(geminiMessages(body.contents));
  requestCount += 1;
  process.stdout.write(`request ${requestCount} gemini-${action}-${plan.kind}\n`);
  if (plan.kind === 'error') {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT',
      message: 'scripted failure: the model server was told to fail' } }));
  }
  if (action === 'generateContent') {
    // Side requests (next-speaker checks, summaries): a short JSON-shaped answer.
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{
      text: '{"next_speaker":"user","reasoning":"scripted"}' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (plan.kind === 'text') {
    const parts = splitText(plan.text);
    parts.forEach((t, i) => geminiChunk(res, [{ text: t }], i === parts.length - 1));
    return res.end();
  }
  if (plan.kind === 'tool') {
    geminiChunk(res, [{ text: 'Running it.' }], false);
    geminiChunk(res, [{ functionCall: { name: 'run_shell_command',
      args: { command: plan.command, description: `Run ${plan.command}` } } }], true);
    return res.end();
  }
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    geminiChunk(res, [{ text: `chunk ${sent} ` }], sent + 1 >= plan.chunks);
    if (++sent >= plan.chunks) {
      clearInterval(timer);
      res.end();
    }
  }, 250);
  res.on('close', () => clearInterval(timer));
}

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
    if (url.pathname.startsWith('/v1beta/models/')) return answerGemini(req, res, url, body);
    if (url.pathname === '/v1/responses') return answerResponses(res, body);
    if (url.pathname === '/v1/chat/completions') return answerChat(res, body);
    if (url.pathname !== '/v1/messages') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: url.pathname } }));
    }
    // opencode names its sessions with a tool-less side request: a plain title, whatever the prompt.
    const system = JSON.stringify(body.system || '');
    const plan = (!body.tools || body.tools.length === 0) && /title/i.test(system)
      ? { kind: 'text', text: 'Scripted title' } : decide(body.messages);
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
