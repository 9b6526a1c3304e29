// The contract test of docs/ws-protocol.schema.json: starts a real daemon (with --token, so that a
// paired device can connect too), drives the WebSocket app protocol at /ws through every client
// message type and the refusals among them, subscriptions from the tail and from a resume cursor,
// a permission, a queued prompt, a runtime that cannot start, a fork, a rewind, a paired device
// and its revocation, and a message over the size limit, and checks every frame: each one sent
// must be a valid ClientMessage (or, for a frame the daemon is meant to refuse, an invalid one, so
// the schema and the daemon agree), each one received a valid ServerMessage. The OpenAPI
// components the schema references (agent snapshot, timeline page, event envelope, error body...)
// are made strict, as in contract_test.mjs: a member the documents do not name fails. Event frames
// are also checked for delivery: each event once, in order, with no gap, across replays, live
// delivery and resets. Every message type the schema defines must have been seen, unless listed
// in NOT_EXERCISED with its reason.
//
// Usage: node ws_contract_test.mjs [AGENTSTREAM_BINARY]   (default: build/debug/src/cli/agentstream)
// Exit 0 when every check passed; 1 otherwise, each failure printed; 77 (skipped) without the
// pinned packages. Needs a WebSocket client: Node 22's global one, or Node 20's behind
// --experimental-websocket (the test runs itself again with the flag).
import {execFileSync, spawnSync} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {binaryFromArgs, loadPackages, report, request, root, run, sleep, startDaemon} from './common.mjs';
import {WS_ENVELOPE, wsValidators} from './schemas.mjs';

if (typeof WebSocket === 'undefined') {
  const flags = ['--experimental-websocket', '--disable-warning=ExperimentalWarning'];
  const again = spawnSync(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)],
                          {stdio: 'inherit'});
  process.exit(again.status ?? 1);
}

const {Ajv2020, addFormats, parseYaml} = await loadPackages('ws contract');
const binary = binaryFromArgs();
const openapi = parseYaml(fs.readFileSync(path.join(root, 'docs/openapi.yaml'), 'utf8'));
const wsSchema = JSON.parse(fs.readFileSync(path.join(root, 'docs/ws-protocol.schema.json'), 'utf8'));
const ajv = new Ajv2020({strict: false, allErrors: true, validateFormats: true});
addFormats(ajv);
const schema = wsValidators(ajv, openapi, wsSchema);

// Message types the scenarios cannot provoke, with the reason. (None at present.)
const NOT_EXERCISED = {client: {}, server: {}};

// ---- Results ----

const results = {sent: 0, received: 0, failures: [],
                 seen: {client: new Set(), server: new Set()}};

function fail(what, detail) {
  results.failures.push(`${what}: ${detail}`);
  console.log(`FAIL ${what}: ${detail}`);
}

// A check of behaviour docs/protocol.md describes.
function expectDoc(what, ok, detail) {
  if (!ok) fail(what, detail);
}

// ---- The schema itself ----

// A message that carries an HTTP body (`x-body`) holds exactly that body's members beside the
// envelope, and requires what the body requires.
function bodiesMatch() {
  const resolve = (ref) => ref.split('#')[1].split('/').slice(1).reduce((o, k) => o[k], openapi);
  const check = (name, def) => {
    if (!def['x-body']) return;
    const body = resolve(def['x-body']);
    const own = Object.keys(def.properties).filter((m) => !WS_ENVELOPE.includes(m)).sort();
    const theirs = Object.keys(body.properties).sort();
    if (JSON.stringify(own) !== JSON.stringify(theirs))
      fail(`schema ${name}`, `members ${own} are not ${def['x-body']}'s ${theirs}`);
    for (const member of body.required ?? [])
      if (!def.required.includes(member)) fail(`schema ${name}`, `${member} is required by ${def['x-body']}`);
  };
  for (const [name, def] of Object.entries(wsSchema.$defs)) {
    check(name, def);
    for (const [i, branch] of (def.oneOf ?? []).entries()) check(`${name}/oneOf/${i}`, branch);
  }
}

// The validators refuse what they must, else every check below would pass vacuously.
function selfCheck() {
  const snapshot = {id: 'ses_1', provider: 'scripted', cwd: '/', title: '', model: '', mode: '',
                    thinking: '', status: 'idle', activeTurn: null, cursor: '1:1', queue: [], permissions: [],
                    createdAt: 1, forkedFrom: null, loaded: true, closed: false, owner: null,
                    usage: null, capabilities: null};
  const good = [['server', {type: 'agent', id: 'r1', agent: snapshot}],
                ['server', {type: 'ok'}],
                ['client', {type: 'subscribe', agent: 'ses_1', cursor: null}]];
  const bad = [['server', {type: 'agent', id: 'r1', agent: {...snapshot, extra: 1}}],
               ['server', {type: 'agent', agent: {...snapshot, usage: undefined}}],
               ['server', {type: 'ok', id: 'r1', ok: true}],
               ['server', {type: 'error', id: '', error: {code: 'not_found', message: 'x'}}],
               ['server', {type: 'events', agent: 'ses_1', epoch: 1, from: '1:2', to: '1:2', events: []}],
               ['client', {type: 'send', agent: 'ses_1', clientMessageId: 'c', whileRuning: 'queue'}],
               ['client', {type: 'timeline.fetch', agent: 'ses_1', direction: 'after'}],
               ['client', {type: 'agents.create', agent: {provider: 'p', cwd: '/'}, title: 't'}],
               ['client', {type: 'unknown'}]];
  for (const [side, msg] of good) {
    const problem = schema.check(side, JSON.stringify(msg));
    if (problem) throw new Error(`the schema refuses a valid ${side} message ${JSON.stringify(msg)}: ${problem}`);
  }
  for (const [side, msg] of bad) {
    if (!schema.check(side, JSON.stringify(msg)))
      throw new Error(`the schema accepts a bad ${side} message: ${JSON.stringify(msg)}`);
  }
}

// ---- A connection whose every frame is checked ----

const parseCursor = (c) => {
  const [epoch, seq] = c.split(':').map(Number);
  return {epoch, seq};
};

class Connection {
  // Resolves once the socket is open.
  static open(label, url) {
    const conn = new Connection(label, url);
    return new Promise((resolve, reject) => {
      conn.ws.onopen = () => resolve(conn);
      conn.ws.onerror = () => reject(new Error(`${label}: the WebSocket to ${url} did not open`));
    });
  }

  constructor(label, url) {
    this.label = label;
    this.frames = [];
    this.waiters = new Set();
    this.nextId = 0;
    this.positions = new Map();  // agent -> the last {epoch, seq} delivered
    this.ws = new WebSocket(url);
    this.closed = new Promise((resolve) => {
      this.ws.onclose = (e) => {
        this.isClosed = true;
        resolve({code: e.code, reason: e.reason});
        this.wake();
      };
    });
    this.ws.onmessage = (e) => this.received(String(e.data));
  }

  received(text) {
    results.received++;
    const problem = schema.check('server', text);
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      msg = {};
    }
    if (problem) fail(`${this.label} received ${msg.type}`, `${problem}\n  frame: ${text.slice(0, 400)}`);
    else results.seen.server.add(msg.type);
    this.delivery(msg);
    this.frames.push(msg);
    this.wake();
  }

  // Each event once, in order, with no gap: from the subscription's cursor, and after a reset
  // from its page's end.
  delivery(msg) {
    const what = `${this.label} ${msg.type} of ${msg.agent}`;
    if (msg.type === 'subscribed') this.positions.set(msg.agent, parseCursor(msg.cursor));
    if (msg.type === 'reset') {
      if (msg.epoch !== msg.page?.epoch) fail(what, `epoch ${msg.epoch}, its page's ${msg.page?.epoch}`);
      this.positions.set(msg.agent, parseCursor(msg.page.endCursor));
    }
    if (msg.type !== 'events') return;
    const at = this.positions.get(msg.agent);
    const from = parseCursor(msg.from);
    const to = parseCursor(msg.to);
    if (!at) return fail(what, 'events of an agent never subscribed');
    if (at.epoch !== msg.epoch) fail(what, `epoch ${msg.epoch} after ${at.epoch}:${at.seq} without a reset`);
    else if (from.seq !== at.seq + 1) fail(what, `from ${msg.from} after ${at.epoch}:${at.seq} (a gap or a duplicate)`);
    const seqs = msg.events.map((e) => e.seq);
    const epochs = new Set([msg.epoch, from.epoch, to.epoch, ...msg.events.map((e) => e.epoch)]);
    if (epochs.size !== 1 || seqs[0] !== from.seq || seqs.at(-1) !== to.seq ||
        seqs.some((s, i) => i > 0 && s !== seqs[i - 1] + 1))
      fail(what, `from ${msg.from} to ${msg.to} holds ${msg.events.map((e) => `${e.epoch}:${e.seq}`)}`);
    this.positions.set(msg.agent, {epoch: msg.epoch, seq: to.seq});
  }

  wake() {
    for (const waiter of [...this.waiters]) waiter();
  }

  // Sends `msg`; `valid` says whether the schema must accept it (false: a frame the daemon must
  // refuse, which the schema must refuse too).
  send(msg, {valid = true} = {}) {
    this.sendText(JSON.stringify(msg), {valid});
  }

  sendText(text, {valid = true} = {}) {
    results.sent++;
    const problem = schema.check('client', text);
    if (valid && problem) fail(`${this.label} sent`, `${problem}\n  frame: ${text.slice(0, 400)}`);
    if (!valid && !problem) fail(`${this.label} sent`, `the schema accepts a frame the daemon refuses: ${text}`);
    if (valid && !problem) results.seen.client.add(JSON.parse(text).type);
    this.ws.send(text);
  }

  mark() {
    return this.frames.length;
  }

  // The first frame received since `from` (an index of this.frames) that `predicate` accepts.
  waitFor(predicate, what, {from = 0, ms = 15000} = {}) {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.frames.slice(from).find(predicate);
        if (found || this.isClosed) {
          clearTimeout(timer);
          this.waiters.delete(look);
          if (found) return resolve(found);
          reject(new Error(`${this.label}: closed before ${what}`));
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(look);
        const last = this.frames.slice(-5).map((f) => JSON.stringify(f).slice(0, 200)).join('\n  ');
        reject(new Error(`${this.label}: no ${what} within ${ms} ms; the last frames:\n  ${last}`));
      }, ms);
      this.waiters.add(look);
      look();
    });
  }

  // A request with an id of its own; resolves with its reply. `expect`: the reply's type.
  async request(msg, {valid = true, expect} = {}) {
    const id = `${this.label}-${++this.nextId}`;
    const from = this.mark();
    this.send({...msg, id}, {valid});
    const reply = await this.waitFor((f) => f.id === id, `the reply to ${msg.type} ${id}`, {from});
    if (expect && reply.type !== expect)
      fail(`${this.label} ${msg.type}`, `expected ${expect}, got ${JSON.stringify(reply).slice(0, 300)}`);
    return reply;
  }

  // A request the daemon must refuse with `code`. `valid`: whether the schema accepts it (a
  // well-formed request for something that does not exist, or a value only the daemon knows
  // is wrong) or not (a malformed one, the default).
  async refused(msg, code, {valid = false} = {}) {
    const reply = await this.request(msg, {valid});
    if (reply.type !== 'error' || reply.error?.code !== code)
      fail(`${this.label} ${JSON.stringify(msg).slice(0, 200)}`,
           `expected error ${code}, got ${JSON.stringify(reply).slice(0, 300)}`);
    return reply;
  }

  // A frame with no id after `from` that `predicate` accepts (replies to requests without one).
  untagged(predicate, what, from) {
    return this.waitFor((f) => f.id === undefined && predicate(f), what, {from});
  }

  close() {
    this.ws.close();
  }
}

// ---- Scenarios ----

async function agentOf(port, token, id) {
  return JSON.parse((await request(port, 'GET', `/v1/agents/${id}`, {auth: token})).text);
}

async function waitAgent(port, token, id, predicate, what) {
  for (let i = 0; i < 200; i++) {
    const agent = await agentOf(port, token, id);
    if (predicate(agent)) return agent;
    await sleep(50);
  }
  throw new Error(`agent ${id} never became ${what}`);
}

const idle = (a) => a.status === 'idle' && !a.activeTurn && a.queue.length === 0;

async function scenarios(port, token, tmp) {
  const url = `ws://127.0.0.1:${port}/ws?token=${token}`;
  const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
  const a = await Connection.open('owner', url);
  const waitIdle = (id) => waitAgent(port, token, id, idle, 'idle');

  // hello, with and without an id.
  await a.request({type: 'hello'}, {expect: 'server_info'});
  let from = a.mark();
  a.send({type: 'hello'});
  await a.untagged((f) => f.type === 'server_info', 'server_info without an id', from);

  // What is not a message: an error without an id.
  for (const text of ['{not json', '[1]', '"hello"']) {
    from = a.mark();
    a.sendText(text, {valid: false});
    const e = await a.untagged((f) => f.type === 'error', `the error for ${text}`, from);
    if (e.error.code !== 'invalid_argument') fail(`sent ${text}`, JSON.stringify(e));
  }
  from = a.mark();
  results.sent++;
  a.ws.send(new Uint8Array([1, 2, 3]));
  const binary = await a.untagged((f) => f.type === 'error', 'the error for a binary frame', from);
  expectDoc('binary frame error', /binary/.test(binary.error.message),
            `a binary frame is refused with ${JSON.stringify(binary.error)}`);
  await a.refused({type: 'agents.remove', agent: 'ses_x'}, 'invalid_argument');
  await a.refused({agent: 'ses_x'}, 'invalid_argument');

  // agents.list
  await a.request({type: 'agents.list', includeClosed: false}, {expect: 'agents'});
  from = a.mark();
  a.send({type: 'agents.list'});
  await a.untagged((f) => f.type === 'agents', 'agents without an id', from);
  await a.refused({type: 'agents.list', includeClosed: 'yes'}, 'invalid_argument');

  // agents.create: the config as `agent`, or beside type and id; idempotent; refusals.
  from = a.mark();
  let r = await a.request({type: 'agents.create', agent: {provider: 'scripted', cwd, title: 'ws contract'}},
                          {expect: 'agent'});
  const id = r.agent.id;
  await a.waitFor((f) => f.type === 'agent.created' && f.agent.id === id, 'agent.created', {from});
  const key = `ws-contract-${process.pid}`;
  r = await a.request({type: 'agents.create', provider: 'scripted', cwd, clientRequestId: key}, {expect: 'agent'});
  const again = await a.request({type: 'agents.create', provider: 'scripted', cwd, clientRequestId: key},
                                {expect: 'agent'});
  if (again.agent?.id !== r.agent?.id) fail('agents.create', 'a retry with its clientRequestId made another agent');
  const second = r.agent.id;
  await a.refused({type: 'agents.create', agent: {provider: 'scripted', cwd}, title: 'x'}, 'invalid_argument');
  await a.refused({type: 'agents.create', agent: {provider: 'scripted', cwd, worktre: true}}, 'invalid_argument');
  await a.refused({type: 'agents.create', provider: 'scripted'}, 'invalid_argument');
  await a.refused({type: 'agents.create', provider: 'scripted', cwd: path.join(cwd, 'none')}, 'invalid_argument',
                  {valid: true});
  // A runtime that cannot start (--claude-program names no program): the watching clients get agent.error.
  from = a.mark();
  await a.refused({type: 'agents.create', agent: {provider: 'claude', cwd}}, 'unavailable', {valid: true});
  await a.waitFor((f) => f.type === 'agent.error', 'agent.error', {from});

  // Subscribed from the tail, a turn arrives as events frames.
  await a.request({type: 'subscribe', agent: id}, {expect: 'subscribed'});
  from = a.mark();
  r = await a.request({type: 'send', agent: id, text: 'hello parser', clientMessageId: 'm1'}, {expect: 'send.reply'});
  if (r.outcome !== 'accepted') fail('send', `outcome ${r.outcome}`);
  await waitIdle(id);
  await a.waitFor((f) => f.type === 'events' && f.agent === id && f.events.some((e) => e.kind === 'turn.completed'),
                  'the events of a turn', {from});
  await a.waitFor((f) => f.type === 'agent.status' && f.agent.id === id, 'agent.status', {from});
  r = await a.request({type: 'send', agent: id, text: 'hello parser', clientMessageId: 'm1'}, {expect: 'send.reply'});
  if (r.outcome !== 'duplicate') fail('send', `a retry answered ${JSON.stringify(r)}`);
  await a.refused({type: 'send', agent: id, text: 'x', clientMessageId: 'm2', whileRuning: 'queue'}, 'invalid_argument');
  await a.refused({type: 'send', agent: id, text: 'x'}, 'invalid_argument');
  await a.refused({type: 'send', agent: id, text: 'x', clientMessageId: 'm2', whileRunning: 'later'}, 'invalid_argument');
  await a.refused({type: 'send', agent: id, text: '', clientMessageId: 'm2'}, 'invalid_argument', {valid: true});
  await a.refused({type: 'send', agent: 'ses_none', text: 'x', clientMessageId: 'm2'}, 'not_found', {valid: true});

  // A permission request holds the turn: a prompt sent meanwhile is queued; the reply releases it.
  from = a.mark();
  r = await a.request({type: 'send', agent: id, text: 'ask permission please', clientMessageId: 'm3'},
                      {expect: 'send.reply'});
  const asking = await a.waitFor((f) => f.type === 'agent.status' && f.agent.id === id && f.agent.permissions.length > 0,
                                 'agent.status with a permission request', {from});
  r = await a.request({type: 'send', agent: id, text: 'and then?', clientMessageId: 'm4', whileRunning: 'queue'},
                      {expect: 'send.reply'});
  if (r.outcome !== 'queued') fail('send', `while a turn runs: ${JSON.stringify(r)}`);
  await a.waitFor((f) => f.type === 'agent.queued' && f.agent.id === id && f.message === 'm4', 'agent.queued', {from});
  const requestId = asking.agent.permissions[0].requestId;
  const reply = {type: 'permission.reply', agent: id, requestId};
  await a.refused({...reply, decision: 'allow', optionID: 'x'}, 'invalid_argument');
  await a.refused({...reply, decision: 'maybe'}, 'invalid_argument');
  await a.refused({type: 'permission.reply', agent: id, decision: 'allow'}, 'invalid_argument');
  await a.request({...reply, decision: 'allow', optionId: 'allow_once', message: 'ok'}, {expect: 'ok'});
  await waitIdle(id);
  await a.refused({...reply, decision: 'deny'}, 'not_found', {valid: true});

  // interrupt: idle, unknown, and a turn held by a permission request.
  await a.request({type: 'interrupt', agent: id}, {expect: 'ok'});
  await a.refused({type: 'interrupt', agent: 'ses_none'}, 'not_found', {valid: true});
  await a.request({type: 'send', agent: id, text: 'ask permission again', clientMessageId: 'm5'}, {expect: 'send.reply'});
  await waitAgent(port, token, id, (x) => x.permissions.length > 0, 'asking permission');
  await a.request({type: 'interrupt', agent: id}, {expect: 'ok'});
  await waitIdle(id);

  // mode.set, model.set, thinking.set
  await a.request({type: 'mode.set', agent: id, mode: 'default'}, {expect: 'ok'});
  await a.refused({type: 'mode.set', agent: id, mode: 'plan'}, 'invalid_argument', {valid: true});
  await a.refused({type: 'mode.set', agent: id, mode: 'default', model: 'x'}, 'invalid_argument');
  await a.refused({type: 'mode.set', agent: id}, 'invalid_argument');
  await a.refused({type: 'mode.set', agent: 'ses_none', mode: 'default'}, 'not_found', {valid: true});
  await a.request({type: 'model.set', agent: id, model: 'scripted-2'}, {expect: 'ok'});
  await a.refused({type: 'model.set', agent: id, model: 7}, 'invalid_argument');
  await a.request({type: 'thinking.set', agent: id, thinking: 'on'}, {expect: 'ok'});
  await a.refused({type: 'thinking.set', agent: id, thinking: 'loud'}, 'invalid_argument', {valid: true});
  // The snapshot publishes what the runtime offers, and the option set.
  await waitAgent(port, token, id, (x) => x.thinking === 'on' &&
      x.capabilities?.thinkingOptions?.some((o) => o.id === 'on') &&
      x.capabilities?.models?.some((m) => m.id === 'scripted-2'), 'the thinking option set');

  // agents.rename: the watching clients get agent.status with the title.
  from = a.mark();
  r = await a.request({type: 'agents.rename', agent: id, title: 'Parser refactor'}, {expect: 'agent'});
  if (r.agent?.title !== 'Parser refactor') fail('agents.rename', JSON.stringify(r).slice(0, 300));
  await a.waitFor((f) => f.type === 'agent.status' && f.agent.title === 'Parser refactor', 'agent.status with the title',
                  {from});
  await a.refused({type: 'agents.rename', agent: 'ses_none', title: 'a'}, 'not_found', {valid: true});
  await a.refused({type: 'agents.rename', agent: id, title: 'x'.repeat(300)}, 'invalid_argument', {valid: true});
  await a.refused({type: 'agents.rename', agent: id}, 'invalid_argument');
  await a.request({type: 'agents.rename', agent: id, title: ''}, {expect: 'agent'});

  // timeline.fetch
  r = await a.request({type: 'timeline.fetch', agent: id}, {expect: 'timeline'});
  await a.request({type: 'timeline.fetch', agent: id, direction: 'after', cursor: '1:1', limit: 2}, {expect: 'timeline'});
  await a.request({type: 'timeline.fetch', agent: id, direction: 'before', cursor: r.page.endCursor, maxBytes: 1024},
                  {expect: 'timeline'});
  await a.refused({type: 'timeline.fetch', agent: id, direction: 'before'}, 'invalid_argument');
  await a.refused({type: 'timeline.fetch', agent: id, direction: 'sideways'}, 'invalid_argument');
  await a.refused({type: 'timeline.fetch', agent: id, limit: 501}, 'invalid_argument');
  await a.refused({type: 'timeline.fetch', agent: 'ses_none'}, 'not_found', {valid: true});
  await a.refused({type: 'timeline.fetch'}, 'invalid_argument');

  // search (the indexer runs 200 ms after a commit, its rounds at least 1 s apart)
  for (let tries = 0; tries < 10; ++tries) {
    await sleep(600);
    r = await a.request({type: 'search', q: 'parser'}, {expect: 'search'});
    if (r.hits?.length > 0) break;
  }
  if (!(r.hits?.length > 0)) fail('search', `no hit for a word of a prompt: ${JSON.stringify(r)}`);
  await a.request({type: 'search', q: 'parser', agent: id, limit: 1}, {expect: 'search'});
  await a.refused({type: 'search'}, 'invalid_argument');
  await a.refused({type: 'search', q: 'parser', limit: 0}, 'invalid_argument');
  await a.refused({type: 'search', q: 'parser', agent: 5}, 'invalid_argument');

  // heartbeat: ok with an id, nothing without.
  await a.request({type: 'heartbeat', focusedAgent: id, visible: true, deviceType: 'desktop'}, {expect: 'ok'});
  from = a.mark();
  a.send({type: 'heartbeat', focusedAgent: '', visible: false});
  await a.request({type: 'hello'}, {expect: 'server_info'});
  if (a.frames.slice(from).some((f) => f.type === 'ok' && f.id === undefined))
    fail('heartbeat', 'a heartbeat without an id was answered');

  // subscribe with a cursor on a second connection: the log replayed, then live.
  const b = await Connection.open('replay', url);
  const tail = (await agentOf(port, token, id)).cursor;
  from = b.mark();
  r = await b.request({type: 'subscribe', agent: id, cursor: '1:1'}, {expect: 'subscribed'});
  if (r.cursor !== '1:1') fail('subscribe', `from 1:1 answered ${JSON.stringify(r)}`);
  await b.waitFor((f) => f.type === 'events' && f.to === tail, `events up to the tail ${tail}`, {from});
  await b.refused({type: 'subscribe', agent: id, cursor: '1:999999'}, 'invalid_argument', {valid: true});
  await b.refused({type: 'subscribe', agent: id, cursor: 'one'}, 'invalid_argument');
  await b.refused({type: 'subscribe', agent: 'ses_none'}, 'not_found', {valid: true});
  await b.refused({type: 'subscribe'}, 'invalid_argument');

  // fork: a new agent (agent.created), its history this one's up to the cursor.
  from = a.mark();
  r = await a.request({type: 'fork', agent: id, cursor: '1:5'}, {expect: 'agent'});
  const fork = r.agent;
  if (fork?.forkedFrom?.agent !== id) fail('fork', JSON.stringify(r).slice(0, 300));
  await a.waitFor((f) => f.type === 'agent.created' && f.agent.id === fork.id, 'agent.created of the fork', {from});
  await a.refused({type: 'fork', agent: id, cursor: '1:5', at: 1}, 'invalid_argument');
  await a.refused({type: 'fork', agent: id, cursor: 'one'}, 'invalid_argument');
  await a.refused({type: 'fork', agent: 'ses_none', cursor: '1:5'}, 'not_found', {valid: true});

  // rewind while two connections follow the agent: each gets a reset, then the new epoch live.
  const fromA = a.mark();
  const fromB = b.mark();
  r = await a.request({type: 'rewind', agent: id, cursor: '1:5'}, {expect: 'agent'});
  const epoch = parseCursor(r.agent.cursor).epoch;
  if (epoch !== 2) fail('rewind', `the snapshot's cursor ${r.agent.cursor}`);
  await a.waitFor((f) => f.type === 'reset' && f.agent === id && f.epoch === epoch, 'reset after a rewind', {from: fromA});
  await b.waitFor((f) => f.type === 'reset' && f.agent === id && f.epoch === epoch, 'reset after a rewind', {from: fromB});
  await a.refused({type: 'rewind', agent: id}, 'invalid_argument');
  await a.refused({type: 'rewind', agent: id, cursor: '1:5', extra: true}, 'invalid_argument');
  await a.request({type: 'send', agent: id, text: 'after the rewind', clientMessageId: 'm6'}, {expect: 'send.reply'});
  await waitIdle(id);
  const newTail = (await agentOf(port, token, id)).cursor;
  for (const [conn, start] of [[a, fromA], [b, fromB]])
    await conn.waitFor((f) => f.type === 'events' && f.epoch === epoch && f.to === newTail,
                       `the new epoch's events up to ${newTail}`, {from: start});
  // A cursor of the replaced epoch: subscribed, then a reset.
  from = b.mark();
  await b.request({type: 'subscribe', agent: id, cursor: '1:3'}, {expect: 'subscribed'});
  await b.waitFor((f) => f.type === 'reset' && f.agent === id, 'reset for a replaced epoch\'s cursor', {from});

  // unsubscribe: ok with an id, nothing without.
  await a.request({type: 'unsubscribe', agent: id}, {expect: 'ok'});
  from = b.mark();
  b.send({type: 'unsubscribe', agent: id});
  await b.request({type: 'hello'}, {expect: 'server_info'});
  if (b.frames.slice(from).some((f) => f.type === 'ok' && f.id === undefined))
    fail('unsubscribe', 'an unsubscribe without an id was answered');
  await a.refused({type: 'unsubscribe'}, 'invalid_argument');

  // git: an action on an agent's worktree, answered with its result.
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-contract-repo-'));
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], {stdio: 'pipe'});
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
  r = await a.request({type: 'agents.create', agent: {provider: 'scripted', cwd: repo, worktree: true}},
                      {expect: 'agent'});
  const worked = r.agent;
  fs.writeFileSync(path.join(worked.cwd, 'b.txt'), 'two\n');
  r = await a.request({type: 'git', agent: worked.id, action: 'commit', message: 'add b'}, {expect: 'git'});
  if (r.result?.outcome !== 'committed') fail('git commit', JSON.stringify(r).slice(0, 300));
  r = await a.request({type: 'git', agent: worked.id, action: 'merge'}, {expect: 'git'});
  if (r.result?.outcome !== 'fast-forward' || !fs.existsSync(path.join(repo, 'b.txt')))
    fail('git merge', JSON.stringify(r).slice(0, 300));
  await a.refused({type: 'git', agent: worked.id, action: 'commit', message: 'nothing'}, 'conflict', {valid: true});
  await a.refused({type: 'git', agent: worked.id, action: 'rebase'}, 'not_found');
  await a.refused({type: 'git', agent: worked.id, action: 'push', message: 'x'}, 'invalid_argument', {valid: true});
  // A pull request needs an origin on GitHub; this repository has none.
  await a.refused({type: 'git', agent: worked.id, action: 'pr', title: 'contract', base: 'main'}, 'invalid_argument',
                  {valid: true});
  await a.refused({type: 'git', agent: id, action: 'discard'}, 'not_found', {valid: true});
  await a.request({type: 'agents.close', agent: worked.id}, {expect: 'ok'});
  fs.rmSync(repo, {recursive: true, force: true});

  // schedules.*: the same calls as /v1/schedules (docs/automation.md, "Schedules").
  r = await a.request({type: 'schedules.create', schedule: {id: 'ws', every: '1h', agent: id, prompt: 'tick {{tick}}'}},
                      {expect: 'schedule'});
  if (r.schedule?.id !== 'ws' || r.schedule?.paused !== false) fail('schedules.create', JSON.stringify(r).slice(0, 300));
  r = await a.request({type: 'schedules.list'}, {expect: 'schedules'});
  if (!r.schedules?.some((s) => s.id === 'ws')) fail('schedules.list', JSON.stringify(r).slice(0, 300));
  r = await a.request({type: 'schedules.show', schedule: 'ws'}, {expect: 'schedule'});
  if (!Array.isArray(r.schedule?.firings)) fail('schedules.show', JSON.stringify(r).slice(0, 300));
  r = await a.request({type: 'schedules.pause', schedule: 'ws'}, {expect: 'schedule'});
  if (r.schedule?.paused !== true || r.schedule?.nextTick !== null) fail('schedules.pause', JSON.stringify(r).slice(0, 300));
  r = await a.request({type: 'schedules.resume', schedule: 'ws'}, {expect: 'schedule'});
  if (r.schedule?.paused !== false) fail('schedules.resume', JSON.stringify(r).slice(0, 300));
  await a.refused({type: 'schedules.create', schedule: {id: 'ws', every: '1h', agent: id, prompt: 'x'}}, 'already_exists',
                  {valid: true});
  await a.refused({type: 'schedules.create', schedule: {id: 'bad', every: '1h', agent: id, prompt: 'x', colour: 1}},
                  'invalid_argument');
  await a.refused({type: 'schedules.create'}, 'invalid_argument');
  await a.refused({type: 'schedules.show', schedule: 'none'}, 'not_found', {valid: true});
  await a.refused({type: 'schedules.pause'}, 'invalid_argument');
  r = await a.request({type: 'schedules.delete', schedule: 'ws'}, {expect: 'schedule.deleted'});
  if (r.schedule !== 'ws') fail('schedules.delete', JSON.stringify(r).slice(0, 300));
  await a.refused({type: 'schedules.delete', schedule: 'ws'}, 'not_found', {valid: true});

  // agents.close: the watching clients get agent.disposed; the closed agents are listed on request.
  from = a.mark();
  await a.request({type: 'agents.close', agent: fork.id}, {expect: 'ok'});
  await a.waitFor((f) => f.type === 'agent.disposed' && f.agent.id === fork.id, 'agent.disposed', {from});
  await a.request({type: 'agents.close', agent: second}, {expect: 'ok'});
  await a.refused({type: 'agents.close', agent: 'ses_none'}, 'not_found', {valid: true});
  await a.refused({type: 'agents.close'}, 'invalid_argument');
  r = await a.request({type: 'agents.list', includeClosed: true}, {expect: 'agents'});
  if (!r.agents?.some((x) => x.id === fork.id && x.closed)) fail('agents.list', 'the closed fork is not listed');
  a.close();
  b.close();
}

// A paired device speaks the same protocol; revoking it closes its WebSocket (policy violation).
async function device(port, token) {
  let res = await request(port, 'POST', '/v1/pairings', {json: {name: 'ws contract'}, auth: token});
  const {code} = JSON.parse(res.text);
  res = await request(port, 'POST', '/v1/pairings/exchange', {json: {code}});
  const paired = JSON.parse(res.text);
  const d = await Connection.open('device', `ws://127.0.0.1:${port}/ws?token=${paired.token}`);
  await d.request({type: 'hello'}, {expect: 'server_info'});
  await d.request({type: 'heartbeat', focusedAgent: '', visible: true, deviceType: 'phone'}, {expect: 'ok'});
  await d.request({type: 'agents.list'}, {expect: 'agents'});
  res = await request(port, 'DELETE', `/v1/devices/${paired.device.id}`, {auth: token});
  if (res.status !== 200) fail('DELETE /v1/devices/{id}', `${res.status} ${res.text}`);
  const closed = await Promise.race([d.closed, sleep(5000).then(() => null)]);
  if (!closed) return fail('device', 'a revoked device\'s WebSocket stays open');
  if (closed.reason !== 'device revoked') fail('device', `closed with ${JSON.stringify(closed)}`);
  expectDoc('revoked device close code', closed.code === 1008,
            `a revoked device's WebSocket closes with ${closed.code} ${JSON.stringify(closed.reason)}, not 1008`);
}

// A message over limits.maxMessageBytes closes the connection: with 1009 (message too big), or
// 1006 when the daemon drops the socket before the client has read its close frame (the client
// is still sending).
async function tooLarge(url) {
  const c = await Connection.open('large', url);
  const info = await c.request({type: 'hello'}, {expect: 'server_info'});
  c.sendText(JSON.stringify({type: 'hello', pad: 'x'.repeat(info.limits.maxMessageBytes)}), {valid: false});
  const closed = await Promise.race([c.closed, sleep(5000).then(() => null)]);
  if (![1009, 1006].includes(closed?.code))
    fail('a message over maxMessageBytes', `the connection: ${JSON.stringify(closed)}`);
}

// ---- Main ----

async function main() {
  if (!fs.existsSync(binary)) throw new Error(`no daemon at ${binary}`);
  bodiesMatch();
  selfCheck();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentstream-ws-contract-'));
  const token = crypto.randomBytes(16).toString('hex');
  const daemon = await startDaemon(binary, path.join(tmp, 'daemon'),
                                   {token, args: ['--claude-program', path.join(tmp, 'no-such-claude')]});
  try {
    await scenarios(daemon.port, token, tmp);
    await device(daemon.port, token);
    await tooLarge(`ws://127.0.0.1:${daemon.port}/ws?token=${token}`);
  } finally {
    daemon.child.kill('SIGTERM');
  }
  console.log(`\n${results.sent} frames sent and ${results.received} received, each checked against ` +
              'docs/ws-protocol.schema.json');
  for (const side of ['client', 'server']) {
    const types = schema.types[side];
    const unseen = types.filter((t) => !results.seen[side].has(t));
    console.log(`${side} messages: ${types.length - unseen.length} of ${types.length} types seen` +
                (unseen.length ? `; not seen: ${unseen.join(' ')}` : ''));
    for (const type of unseen) {
      if (NOT_EXERCISED[side][type]) console.log(`  ${type} not exercised: ${NOT_EXERCISED[side][type]}`);
      else fail(`${side} message ${type}`, 'defined by the schema, never exercised');
    }
  }
  report(results.failures, tmp);
}

run(main);
