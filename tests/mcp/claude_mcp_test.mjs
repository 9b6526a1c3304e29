// The real `claude` CLI (tests/peers, 2.1.197) with `agentstream mcp` as an MCP server
// (--mcp-config), offline against the scripted model server, which tells it to call the tools:
// it creates a child agent (the scripted provider) on the daemon, prompts it and waits for the
// turn's end, and reads its last message; claude's final answer carries the child's answer, and
// the daemon's log holds the child's turn (docs/mcp.md). claude runs with AGENTSTREAM_AGENT_ID set,
// as the daemon sets it for the agents it runs, and creates the child with notifyParent: true:
// the child's turn end reaches that agent's session once, also for a turn open when the daemon
// is killed (-9) and restarted.
//   node tests/mcp/claude_mcp_test.mjs AGENTSTREAM_BIN
// Exit 77 (skipped) when the claude CLI is not installed (tools/setup.sh installs tests/peers).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TestEnv, call, check, fail, readEvents, until } from '../lib/daemons.mjs';

const bin = process.argv[2] && path.resolve(process.argv[2]);  // claude spawns it from its cwd
if (!bin) {
  console.error('usage: node claude_mcp_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const claude = new URL('../peers/node_modules/.bin/claude', import.meta.url).pathname;
if (!fs.existsSync(claude)) {
  console.error('SKIP: the claude CLI is not installed in tests/peers (tools/setup.sh)');
  process.exit(77);
}

const env = await TestEnv.create('claude-mcp');
const daemon = env.daemon('d', bin);
await daemon.start(['--scripted-chunk-ms', '2']);

// The scripted model server on a port of its own; it exits when its stdin closes.
const model = spawn('node', [new URL('../model_server/server.mjs', import.meta.url).pathname],
                    { stdio: ['pipe', 'pipe', 'inherit'] });
env.track(model);
const modelPort = await new Promise((resolve, reject) => {
  let seen = '';
  model.stdout.on('data', (c) => {
    seen += c;
    const m = seen.match(/listening (\d+)/);
    if (m) resolve(Number(m[1]));
  });
  model.once('exit', () => reject(new Error('the model server exited')));
});

const home = path.join(env.dir, 'home');
fs.mkdirSync(home);
const work = path.join(env.dir, 'work');
fs.mkdirSync(work);
// The agent claude plays: the parent whose session hears of the child's turn end.
const parent = (await call(daemon.url, 'POST', '/v1/agents',
                           { provider: 'scripted', cwd: work, title: 'parent' })).json;
check(parent && parent.id, `the parent agent: ${JSON.stringify(parent)}`);

// Runs `claude -p PROMPT` with agentstream mcp (on the daemon's current URL) as its MCP server;
// its stream-json lines, exit code and stderr.
async function runClaude(name, prompt) {
  const config = path.join(env.dir, `mcp-${name}.json`);
  fs.writeFileSync(config, JSON.stringify({
    mcpServers: { agentstream: { command: bin, args: ['mcp', '--url', daemon.url] } } }));
  const run = spawn(claude, ['-p', prompt, '--output-format', 'stream-json', '--verbose',
                             '--mcp-config', config, '--strict-mcp-config',
                             '--allowedTools', 'mcp__agentstream'], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}`,
           ANTHROPIC_API_KEY: 'sk-ant-offline-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
           DISABLE_AUTOUPDATER: '1', IS_SANDBOX: '1', AGENTSTREAM_AGENT_ID: parent.id,
           // claude -p waits 5 s for its MCP servers, then starts without the ones still
           // "pending"; a sanitizer build on a loaded machine can take longer to answer.
           MCP_CONNECT_TIMEOUT_MS: '60000' },
  });
  env.track(run);
  let out = '';
  let err = '';
  run.stdout.on('data', (c) => { out += c; });
  run.stderr.on('data', (c) => { err += c; });
  const timer = setTimeout(() => run.kill('SIGKILL'), 120000);
  const code = await new Promise((resolve) => run.once('exit', resolve));
  clearTimeout(timer);
  fs.writeFileSync(path.join(env.dir, `claude-${name}.out`), out);
  return { code, err, lines: out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)) };
}

const { code, err, lines } = await runClaude('first',
  `[mcp agent_create {"provider":"scripted","cwd":"${work}","title":"kid","notifyParent":true}] ` +
  '[mcp agent_send {"agent":"$agent","text":"hello from claude","wait":true}] ' +
  '[mcp agent_last_message {"agent":"$agent"}]');
const init = lines.find((l) => l.type === 'system' && l.subtype === 'init');
check(init && init.mcp_servers.some((s) => s.name === 'agentstream' && s.status === 'connected'),
      `agentstream is a connected MCP server: ${JSON.stringify(init?.mcp_servers)} ${err}`);
check(['agent_create', 'agent_send', 'agent_last_message'].every((t) =>
  init.tools.includes(`mcp__agentstream__${t}`)), 'claude offers the tools');
const result = lines.find((l) => l.type === 'result');
check(code === 0 && result && result.subtype === 'success', `claude: exit ${code} ${err.slice(-500)}`);
check(result.result.startsWith('MCP done:') && result.result.includes('You asked: hello from claude'),
      `claude's answer: ${result.result}`);

const { agents } = (await call(daemon.url, 'GET', '/v1/agents')).json;
const kid = agents.find((a) => a.title === 'kid');
check(kid && kid.status === 'idle' && kid.provider === 'scripted', 'the child agent on the daemon');
const events = (await call(daemon.url, 'GET', `/v1/agents/${kid.id}/events?offset=-1`)).json;
check(events.filter((e) => e.kind === 'turn.completed').length === 1, 'the child turn completed once');
console.log('ok - claude created a child agent through agentstream mcp, waited and read its answer');
// notifyParent: true named the agent of AGENTSTREAM_AGENT_ID.
const consumer = await call(daemon.url, 'GET', `/v1/consumers/mcp-notify.${kid.id}.${parent.id}`);
check(consumer.status === 200, `the notify consumer of the calling agent: ${consumer.status}`);
const delivered = async () => {
  const log = (await call(daemon.url, 'GET', `/v1/agents/${parent.id}/events?offset=-1`)).json;
  return log.filter((e) => e.kind === 'subagent.event' && e.payload.child === kid.id);
};
await until('the child turn end in the parent session', async () => (await delivered()).length > 0);
const heard = await delivered();
check(heard.length === 1 && heard[0].payload.childKind === 'turn.completed',
      `the parent heard the child turn end once: ${JSON.stringify(heard)}`);
console.log('ok - notifyParent: true delivered the child turn end to the calling agent once');

// A child whose turn is open (it waits on a permission) when the daemon is killed (-9): its
// turn ends at the restart (daemon_restarted), and that end reaches the parent once.
const second = await runClaude('second',
  `[mcp agent_create {"provider":"scripted","cwd":"${work}","title":"waiting kid","notifyParent":true}] ` +
  '[mcp agent_send {"agent":"$agent","text":"ask permission and wait"}]');
check(second.code === 0, `the second claude run: exit ${second.code} ${second.err.slice(-500)}`);
const waiting = (await call(daemon.url, 'GET', '/v1/agents')).json.agents
  .find((a) => a.title === 'waiting kid');
check(waiting, 'the waiting child agent');
await until('the child waiting on its permission', async () =>
  (await call(daemon.url, 'GET', `/v1/agents/${waiting.id}`)).json.permissions.length > 0);
await daemon.kill('SIGKILL');
await daemon.start(['--scripted-chunk-ms', '2']);
const ends = async () => (await readEvents(daemon.url, parent.id)).filter((e) =>
  e.kind === 'subagent.event' && e.payload.child === waiting.id && e.payload.childKind.startsWith('turn.'));
await until('the restarted turn end in the parent', async () => (await ends()).length > 0);
await new Promise((resolve) => setTimeout(resolve, 1500));  // a duplicate would land meanwhile
const restartedEnds = await ends();
check(restartedEnds.length === 1 && restartedEnds[0].payload.childKind === 'turn.failed' &&
      restartedEnds[0].payload.payload.code === 'daemon_restarted',
      `the parent heard the restarted turn end once: ${JSON.stringify(restartedEnds)}`);
console.log('ok - a child created by claude with notifyParent: its turn end across kill -9 of the daemon arrives once');
await env.close();
console.log('PASS');
