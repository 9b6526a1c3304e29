// The contract test of docs/openapi.yaml: starts a real daemon (and a second one with --token),
// drives it through the endpoints the document describes, and checks every answer against the
// document: the status must be one the operation lists, and a JSON body (or a server-sent event of
// the session log) must validate against that response's schema. Object schemas are checked
// strictly here (a member the document does not name fails), so the document stays complete,
// although clients must ignore unknown members.
//
// Usage: node contract_test.mjs [AGENTSTREAM_BINARY]   (default: build/debug/src/cli/agentstream)
// Exit 0 when every check passed; 1 otherwise, each failure printed; 77 (skipped) without the
// pinned packages.
import {execFileSync} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import {escape, loadAnswers} from './answers.mjs';
import {binaryFromArgs, report, request, run, sleep, startDaemon as start} from './common.mjs';

const {doc, ajv, validator, problems} = await loadAnswers('openapi contract');
const binary = binaryFromArgs();
const startDaemon = (dir, token, args = []) => start(binary, dir, {token, args});

// The validator itself: bodies the document refuses must fail, else every check above would
// pass vacuously.
function selfCheck() {
  const schema = (name) => validator(`/components/schemas/${name}`);
  const event = {v: 1, session: 's', epoch: 1, seq: 1, time: 1, kind: 'turn.started',
                 payload: {origin: 'foreground'}};
  const refused = [
    ['Event', {...event, payload: {origin: 'sideways'}}],
    ['Event', {...event, kind: 'tool_call.end', payload: {callId: 'c'}}],
    ['Event', {...event, extra: 1}],
    ['Error', {error: {code: 'not_found'}}],
    ['TimelineItem', {kind: 'user_message', key: '#3', seqStart: 3, seqEnd: 3,
                      sourceSeqRanges: [[3, 3]], collapsed: false}],
    ['WhoAmI', {principal: 'owner', device: {}}],
  ];
  if (!schema('Event')(event)) throw new Error('the validator refuses a valid event');
  for (const [name, body] of refused) {
    if (schema(name)(body)) throw new Error(`the validator accepts a bad ${name}: ${JSON.stringify(body)}`);
  }
}

// ---- Results ----

const results = {checks: 0, failures: [], operations: new Set(), responses: new Set(),
                 kinds: new Set()};

function fail(what, detail) {
  results.failures.push(`${what}: ${detail}`);
  console.log(`FAIL ${what}: ${detail}`);
}

// Checks an answer against the document: status listed, content type listed, body valid,
// documented headers valid when present. `expect` (a status or a list) is what the scenario
// meant to provoke; another status is a failure of the scenario even when documented.
function check(template, method, res, expect) {
  const label = `${method} ${template} ${res.status}`;
  results.checks++;
  results.operations.add(`${method} ${template}`);
  const expected = [].concat(expect ?? []);
  if (expected.length && !expected.includes(res.status)) {
    fail(label, `expected ${expected.join(' or ')}; body ${res.text.slice(0, 300)}`);
  }
  const {problems: wrong, body} = problems(template, method, res);
  for (const problem of wrong) fail(label, problem);
  if (wrong.length === 0 || !wrong[0].startsWith('status not')) results.responses.add(label);
  if (template === '/v1/agents/{id}/events' && Array.isArray(body))
    for (const e of body) results.kinds.add(e.kind);
}

// ---- HTTP ----

// Reads server-sent events until `enough(events)` or the time runs out; then hangs up. A fresh
// connection unless `agent` (an http.Agent) is given.
function readSse(port, target, enough, ms = 5000, agent = false) {
  return new Promise((resolve, reject) => {
    const events = [];
    let buffer = '';
    let head = null;
    const req = http.get({host: '127.0.0.1', port, path: target, agent}, (res) => {
      head = res;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = {event: 'message', data: ''};
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data:')) event.data += line.slice(5).replace(/^ /, '');
          }
          if (block.startsWith(':')) continue;
          events.push(event);
        }
        if (enough(events)) finish();
      });
    });
    const timer = setTimeout(() => finish(), ms);
    function finish() {
      clearTimeout(timer);
      req.destroy();
      resolve({status: head?.statusCode, headers: head?.headers ?? {}, events});
    }
    req.on('error', (e) => (head ? null : reject(e)));
  });
}

// ---- Scenarios ----

async function waitFor(port, id, predicate, what) {
  for (let i = 0; i < 100; i++) {
    const res = await request(port, 'GET', `/v1/agents/${id}`);
    const agent = JSON.parse(res.text);
    if (predicate(agent)) return agent;
    await sleep(50);
  }
  throw new Error(`agent ${id} never became ${what}`);
}

async function agents(port, tmp) {
  const P = (m, t, o) => request(port, m, t, o);
  const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));

  check('/healthz', 'GET', await P('GET', '/healthz'), 200);
  check('/metrics', 'GET', await P('GET', '/metrics'), 200);

  let res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd, title: 'contract'}});
  check('/v1/agents', 'POST', res, 200);
  const id = JSON.parse(res.text).id;
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd, worktre: true}});
  check('/v1/agents', 'POST', res, 400);
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted'}});
  check('/v1/agents', 'POST', res, 400);
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd: path.join(cwd, 'none')}});
  check('/v1/agents', 'POST', res, 400);
  res = await P('POST', '/v1/agents', {body: '{not json', headers: {'content-type': 'application/json'}});
  check('/v1/agents', 'POST', res, 400);
  const key = `contract-${process.pid}`;
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd}, headers: {'idempotency-key': key}});
  check('/v1/agents', 'POST', res, 200);
  const again = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd}, headers: {'idempotency-key': key}});
  check('/v1/agents', 'POST', again, 200);
  if (JSON.parse(again.text).id !== JSON.parse(res.text).id) fail('POST /v1/agents', 'Idempotency-Key retry made another agent');
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd: '/', clientRequestId: key}});
  check('/v1/agents', 'POST', res, 409);

  check('/v1/agents', 'GET', await P('GET', '/v1/agents'), 200);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents?closed=true'), 200);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents?closed=TRUE'), 400);
  check('/v1/agents/{id}', 'GET', await P('GET', `/v1/agents/${id}`), 200);
  check('/v1/agents/{id}', 'GET', await P('GET', '/v1/agents/ses_none'), 404);

  // A prompt, a duplicate, and refused bodies.
  res = await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'hello parser', clientMessageId: 'm1'}});
  check('/v1/agents/{id}/messages', 'POST', res, 200);
  await waitFor(port, id, (a) => a.status === 'idle' && !a.activeTurn, 'idle');
  res = await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'hello parser', clientMessageId: 'm1'}});
  check('/v1/agents/{id}/messages', 'POST', res, 200);
  if (JSON.parse(res.text).outcome !== 'duplicate') fail('POST messages', `a retry answered ${res.text}`);
  for (const bad of [{text: 'x', clientMessageId: 'm2', whileRuning: 'queue'}, {text: '', clientMessageId: 'm3'},
                     {text: 'x'}, {text: 'x', clientMessageId: 'm4', whileRunning: 'later'},
                     {text: 'x', clientMessageId: 'm5', attachments: [{kind: 'image', mimeType: 'image/png', size: 1}]}]) {
    check('/v1/agents/{id}/messages', 'POST', await P('POST', `/v1/agents/${id}/messages`, {json: bad}), 400);
  }
  res = await P('POST', '/v1/agents/ses_none/messages', {json: {text: 'x', clientMessageId: 'm6'}});
  check('/v1/agents/{id}/messages', 'POST', res, 404);

  // A permission request holds the turn: a prompt sent meanwhile is queued, then removed.
  res = await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'ask permission please', clientMessageId: 'm7'}});
  check('/v1/agents/{id}/messages', 'POST', res, 200);
  const asking = await waitFor(port, id, (a) => a.permissions.length > 0, 'asking permission');
  check('/v1/agents/{id}', 'GET', await P('GET', `/v1/agents/${id}`), 200);
  res = await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'and then?', clientMessageId: 'm8', whileRunning: 'queue'}});
  check('/v1/agents/{id}/messages', 'POST', res, 200);
  if (JSON.parse(res.text).outcome !== 'queued') fail('POST messages', `while a turn runs: ${res.text}`);
  check('/v1/agents/{id}', 'GET', await P('GET', `/v1/agents/${id}`), 200);
  check('/v1/agents/{id}/messages/{clientMessageId}', 'DELETE', await P('DELETE', `/v1/agents/${id}/messages/m8`), 200);
  const rid = asking.permissions[0].requestId;
  res = await P('POST', `/v1/agents/${id}/permissions/${rid}`, {json: {decision: 'allow', optionID: 'x'}});
  check('/v1/agents/{id}/permissions/{requestId}', 'POST', res, 400);
  res = await P('POST', `/v1/agents/${id}/permissions/${rid}`, {json: {decision: 'maybe'}});
  check('/v1/agents/{id}/permissions/{requestId}', 'POST', res, 400);
  res = await P('POST', `/v1/agents/${id}/permissions/${rid}`, {json: {decision: 'allow', optionId: 'allow_once', message: 'ok'}});
  check('/v1/agents/{id}/permissions/{requestId}', 'POST', res, 200);
  await waitFor(port, id, (a) => a.status === 'idle' && !a.activeTurn, 'idle');
  check('/v1/agents/{id}/messages/{clientMessageId}', 'DELETE', await P('DELETE', `/v1/agents/${id}/messages/m8`), 404);
  check('/v1/agents/{id}/permissions/{requestId}', 'POST', await P('POST', `/v1/agents/${id}/permissions/${rid}`, {json: {decision: 'deny'}}), 404);
  check('/v1/agents/{id}/messages', 'POST', await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'a'.repeat(1100000), clientMessageId: 'big'}}), 413);
  check('/v1/agents/{id}/interrupt', 'POST', await P('POST', `/v1/agents/${id}/interrupt`), 200);
  check('/v1/agents/{id}/interrupt', 'POST', await P('POST', '/v1/agents/ses_none/interrupt'), 404);
  // A background task wakes the agent for an autonomous turn; a long prompt interrupted.
  res = await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'build it [background]', clientMessageId: 'm9'}});
  check('/v1/agents/{id}/messages', 'POST', res, 200);
  await sleep(800);
  await waitFor(port, id, (a) => a.status === 'idle' && !a.activeTurn, 'idle');
  res = await P('POST', `/v1/agents/${id}/messages`, {json: {text: 'ask permission again', clientMessageId: 'm10'}});
  await waitFor(port, id, (a) => a.permissions.length > 0, 'asking permission');
  check('/v1/agents/{id}/interrupt', 'POST', await P('POST', `/v1/agents/${id}/interrupt`), 200);
  await waitFor(port, id, (a) => a.status === 'idle' && !a.activeTurn, 'idle');

  check('/v1/agents/{id}/mode', 'POST', await P('POST', `/v1/agents/${id}/mode`, {json: {mode: 'default'}}), 200);
  check('/v1/agents/{id}/mode', 'POST', await P('POST', `/v1/agents/${id}/mode`, {json: {mode: 'plan'}}), 400);
  check('/v1/agents/{id}/mode', 'POST', await P('POST', `/v1/agents/${id}/mode`, {json: {mode: 'default', model: 'x'}}), 400);
  check('/v1/agents/{id}/mode', 'POST', await P('POST', `/v1/agents/${id}/mode`, {json: {}}), 400);
  check('/v1/agents/{id}/model', 'POST', await P('POST', `/v1/agents/${id}/model`, {json: {model: 'scripted-2'}}), 200);
  check('/v1/agents/{id}/model', 'POST', await P('POST', `/v1/agents/${id}/model`, {json: {model: 7}}), 400);
  check('/v1/agents/{id}/thinking', 'POST', await P('POST', `/v1/agents/${id}/thinking`, {json: {thinking: 'on'}}), 200);
  check('/v1/agents/{id}/thinking', 'POST', await P('POST', `/v1/agents/${id}/thinking`, {json: {thinking: 'loud'}}), 400);
  check('/v1/agents/{id}/thinking', 'POST', await P('POST', `/v1/agents/${id}/thinking`, {json: {}}), 400);
  check('/v1/agents/{id}/title', 'POST', await P('POST', `/v1/agents/${id}/title`, {json: {title: 'Parser refactor'}}), 200);
  check('/v1/agents/{id}/title', 'POST', await P('POST', '/v1/agents/ses_none/title', {json: {title: 'a'}}), 404);
  check('/v1/agents/{id}/mode', 'POST', await P('POST', '/v1/agents/ses_none/mode', {json: {mode: 'a'}}), 404);
  check('/v1/agents/{id}', 'DELETE', await P('DELETE', '/v1/agents/ses_none'), 404);
  check('/v1/agents/{id}/title', 'POST', await P('POST', `/v1/agents/${id}/title`, {json: {title: 'x'.repeat(300)}}), 400);
  check('/v1/agents/{id}/title', 'POST', await P('POST', `/v1/agents/${id}/title`, {json: {title: ''}}), 200);
  return {id, cwd};
}

async function history(port, id) {
  const P = (m, t, o) => request(port, m, t, o);
  let res = await P('GET', `/v1/agents/${id}/timeline`);
  check('/v1/agents/{id}/timeline', 'GET', res, 200);
  const page = JSON.parse(res.text);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', `/v1/agents/${id}/timeline?direction=after&cursor=1:1&limit=2`), 200);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', `/v1/agents/${id}/timeline?direction=before&cursor=${page.endCursor}&maxBytes=1024`), 200);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', `/v1/agents/${id}/timeline?direction=before`), 400);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', `/v1/agents/${id}/timeline?direction=sideways`), 400);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', `/v1/agents/${id}/timeline?limit=501`), 400);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', '/v1/agents/ses_none/timeline'), 404);

  res = await P('GET', `/v1/agents/${id}/events`);
  check('/v1/agents/{id}/events', 'GET', res, 200);
  const events = JSON.parse(res.text);
  const next = res.headers['stream-next-offset'];
  if (!next || res.headers['stream-up-to-date'] !== 'true') fail('GET events', 'no Stream-Next-Offset or Stream-Up-To-Date');
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?offset=1:3`), 200);
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?offset=now`), 200);
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?offset=1:999999`), 400);
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?offset=7:1`), 400);
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?offset=x`), 400);
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?live=`), 400);
  check('/v1/agents/{id}/events', 'GET', await P('GET', '/v1/agents/ses_none/events'), 404);
  // Long-poll: at the tail it times out (--long-poll-ms 400); behind it answers at once.
  res = await P('GET', `/v1/agents/${id}/events?offset=${next}&live=long-poll`);
  check('/v1/agents/{id}/events', 'GET', res, 204);
  if (!res.headers['stream-cursor']) fail('GET events long-poll', 'no Stream-Cursor');
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${id}/events?offset=1:1&live=long-poll`), 200);

  // SSE: the data and control events against x-sse-events.
  const sse = await readSse(port, `/v1/agents/${id}/events?offset=-1&live=sse`,
                            (evs) => evs.some((e) => e.event === 'control'));
  sseCheck(sse, 'GET /v1/agents/{id}/events sse');
  // The same read on a keep-alive connection that answered a long-poll first.
  const keepAlive = new http.Agent({keepAlive: true, maxSockets: 1});
  await new Promise((resolve) => http.get({host: '127.0.0.1', port, agent: keepAlive,
                                           path: `/v1/agents/${id}/events?offset=1:1&live=long-poll`},
                                          (r) => r.resume().on('end', resolve)));
  const after = await readSse(port, `/v1/agents/${id}/events?offset=-1&live=sse`,
                              (evs) => evs.some((e) => e.event === 'control'), 1500, keepAlive);
  keepAlive.destroy();
  if (after.events.length === 0) fail('GET /v1/agents/{id}/events sse after a long-poll', 'no events');
  else sseCheck(after, 'GET /v1/agents/{id}/events sse after a long-poll');

  // Fork and rewind, then a read from the replaced epoch.
  const cursor = `${events[0].epoch}:${events[Math.min(4, events.length - 1)].seq}`;
  res = await P('POST', `/v1/agents/${id}/fork`, {json: {cursor}});
  check('/v1/agents/{id}/fork', 'POST', res, 200);
  check('/v1/agents/{id}/fork', 'POST', await P('POST', `/v1/agents/${id}/fork`, {json: {cursor: 'one'}}), 400);
  check('/v1/agents/{id}/fork', 'POST', await P('POST', `/v1/agents/${id}/fork`, {json: {cursor: '1:999999'}}), 400);
  check('/v1/agents/{id}/fork', 'POST', await P('POST', `/v1/agents/${id}/fork`, {json: {cursor: '7:1'}}), 409);
  check('/v1/agents/{id}/fork', 'POST', await P('POST', `/v1/agents/${id}/fork`, {json: {cursor, at: 1}}), 400);
  check('/v1/agents/{id}/fork', 'POST', await P('POST', '/v1/agents/ses_none/fork', {json: {cursor}}), 404);
  res = await P('POST', `/v1/agents/${id}/rewind`, {json: {cursor}});
  check('/v1/agents/{id}/rewind', 'POST', res, 200);
  check('/v1/agents/{id}/rewind', 'POST', await P('POST', `/v1/agents/${id}/rewind`, {json: {}}), 400);
  res = await P('GET', `/v1/agents/${id}/events?offset=${next}`);
  check('/v1/agents/{id}/events', 'GET', res, 200);
  if (res.headers['stream-reset'] !== 'true') fail('GET events', 'no Stream-Reset after a rewind');
  const reset = await readSse(port, `/v1/agents/${id}/events?offset=${next}&live=sse`,
                              (evs) => evs.some((e) => e.event === 'control'));
  sseCheck(reset, 'GET /v1/agents/{id}/events sse after a rewind');
  if (!reset.events.some((e) => e.event === 'control' && JSON.parse(e.data).reset === true))
    fail('GET events sse', 'no control event with reset after a rewind');

  // Search (the indexer runs 200 ms after a commit, its rounds at least 1 s apart).
  for (let tries = 0; tries < 10; ++tries) {
    await sleep(600);
    res = await P('GET', '/v1/search?q=parser');
    if (res.status !== 200 || JSON.parse(res.text).hits.length > 0) break;
  }
  check('/v1/search', 'GET', res, 200);
  if (JSON.parse(res.text).hits.length === 0) fail('GET /v1/search', 'no hit for a word of a prompt');
  check('/v1/search', 'GET', await P('GET', `/v1/search?q=parser&agent=${id}&limit=1`), 200);
  check('/v1/search', 'GET', await P('GET', '/v1/search'), 400);
  check('/v1/search', 'GET', await P('GET', '/v1/search?q=x&limit=0'), 400);
}

function sseCheck(sse, label) {
  results.checks++;
  results.operations.add('GET /v1/agents/{id}/events');
  const media = doc.paths['/v1/agents/{id}/events'].get.responses['200'].content['text/event-stream'];
  if (sse.status !== 200 || !(sse.headers['content-type'] ?? '').startsWith('text/event-stream'))
    return fail(label, `status ${sse.status} ${sse.headers['content-type']}`);
  results.responses.add('GET /v1/agents/{id}/events 200 text/event-stream');
  const base = `/paths/${escape('/v1/agents/{id}/events')}/get/responses/200/content/text~1event-stream/x-sse-events`;
  if (!media['x-sse-events']) return fail(label, 'no x-sse-events in the document');
  for (const event of sse.events) {
    const validate = validator(`${base}/${event.event}`);
    const data = JSON.parse(event.data);
    if (!validate(data))
      fail(label, `${event.event}: ${ajv.errorsText(validate.errors)}: ${event.data.slice(0, 200)}`);
    if (event.event === 'data') for (const e of data) results.kinds.add(e.kind);
  }
  if (!sse.events.some((e) => e.event === 'data'))
    fail(label, `no data event among ${sse.events.map((e) => e.event + ' ' + e.data.slice(0, 80)).join(' | ')}`);
}

async function worktrees(port, tmp, plainId) {
  const P = (m, t, o) => request(port, m, t, o);
  const repo = fs.mkdtempSync(path.join(tmp, 'repo-'));
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], {stdio: 'pipe'});
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
  git('add', 'a.txt');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'one');

  check('/v1/agents/{id}/diff', 'GET', await P('GET', `/v1/agents/${plainId}/diff`), 404);
  let res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd: repo, worktree: {branch: 'contract/one', brnch: 'x'}}});
  check('/v1/agents', 'POST', res, 400);
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd: repo, worktree: {branch: 'contract/one'}}});
  check('/v1/agents', 'POST', res, 200);
  const agent = JSON.parse(res.text);
  res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd: repo, worktree: {branch: 'contract/one'}}});
  check('/v1/agents', 'POST', res, 409);
  fs.writeFileSync(path.join(agent.cwd, 'a.txt'), 'one\nTWO\n');
  fs.writeFileSync(path.join(agent.cwd, 'b.txt'), 'new\n');
  res = await P('GET', `/v1/agents/${agent.id}/diff`);
  check('/v1/agents/{id}/diff', 'GET', res, 200);
  if (JSON.parse(res.text).files?.length !== 2) fail('GET diff', `expected two files: ${res.text.slice(0, 300)}`);
  check('/v1/agents/{id}/diff', 'GET', await P('GET', `/v1/agents/${agent.id}/diff`, {headers: {accept: 'text/x-diff'}}), 200);
  check('/v1/agents/{id}/diff', 'GET', await P('GET', `/v1/agents/${agent.id}/diff?against=main~1`), 400);
  check('/v1/agents/{id}/diff', 'GET', await P('GET', `/v1/agents/${agent.id}/diff?maxBytes=10`), 400);
  check('/v1/worktrees', 'GET', await P('GET', '/v1/worktrees'), 200);
  check('/v1/agents/{id}', 'DELETE', await P('DELETE', `/v1/agents/${agent.id}?removeWorktree=true`), 409);
  check('/v1/agents/{id}', 'DELETE', await P('DELETE', `/v1/agents/${agent.id}?removeWorktree=yes`), 400);
  const act = (action, json) => P('POST', `/v1/agents/${agent.id}/git/${action}`, {json});
  check('/v1/agents/{id}/git/{action}', 'POST', await act('commit', {message: 'contract'}), 200);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('commit', {message: 'again'}), 409);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('commit', {mesage: 'typo'}), 400);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('discard', {}), 409);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('merge', {}), 200);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('push', {remote: 'origin'}), 400);
  // A pull request needs an origin on GitHub (this repository has none); `into` is merge's.
  check('/v1/agents/{id}/git/{action}', 'POST', await act('pr', {title: 'contract'}), 400);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('pr', {into: 'main'}), 400);
  check('/v1/agents/{id}/git/{action}', 'POST', await act('rebase', {}), 404);
  check('/v1/agents/{id}/git/{action}', 'POST', await P('POST', `/v1/agents/${plainId}/git/merge`, {json: {}}), 404);
  if (!fs.existsSync(path.join(repo, 'b.txt'))) fail('POST git/merge', 'the merge did not bring b.txt into main');
  check('/v1/agents/{id}', 'DELETE', await P('DELETE', `/v1/agents/${agent.id}?removeWorktree=true&force=1`), 200);
  check('/v1/worktrees', 'GET', await P('GET', '/v1/worktrees'), 200);
  check('/v1/agents/{id}/diff', 'GET', await P('GET', `/v1/agents/${agent.id}/diff`), 404);
}

async function consumers(port, tmp, id) {
  const P = (m, t, o) => request(port, m, t, o);
  const spec = {id: 'contract.jsonl', filter: {kinds: ['turn.completed']},
                sink: {kind: 'jsonl', path: path.join(tmp, 'deliveries.jsonl')},
                retry: {maxAttempts: 3}, fromNow: false};
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: spec}), 201);
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: spec}), 201);
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: {...spec, coalesce: false}}), 409);
  const hook = {id: 'contract-hook', sink: {kind: 'webhook', url: 'http://127.0.0.1:9/hook', secret: 'a-long-secret', headers: {'X-Team': 'a'}}};
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: hook}), 201);
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: {id: 'bad id', sink: {kind: 'jsonl', path: '/tmp/x'}}}), 400);
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: {id: 'c2', sink: {kind: 'jsonl', path: 'relative'}}}), 400);
  check('/v1/consumers', 'POST', await P('POST', '/v1/consumers', {json: {id: 'c3', sink: {kind: 'webhook', url: 'http://127.0.0.1:9/'}}}), 400);
  await sleep(500);
  check('/v1/consumers', 'GET', await P('GET', '/v1/consumers'), 200);
  check('/v1/consumers/{id}', 'GET', await P('GET', '/v1/consumers/contract.jsonl'), 200);
  check('/v1/consumers/{id}', 'GET', await P('GET', '/v1/consumers/none'), 404);
  check('/v1/consumers/{id}/resume', 'POST', await P('POST', '/v1/consumers/contract.jsonl/resume'), 200);
  check('/v1/consumers/{id}/resume', 'POST', await P('POST', '/v1/consumers/contract.jsonl/resume', {json: {session: id}}), 200);
  check('/v1/consumers/{id}/resume', 'POST', await P('POST', '/v1/consumers/contract.jsonl/resume', {json: {session: 5}}), 400);
  check('/v1/consumers/{id}/resume', 'POST', await P('POST', '/v1/consumers/none/resume', {json: {}}), 404);
  check('/v1/consumers/{id}', 'DELETE', await P('DELETE', '/v1/consumers/contract-hook'), 200);
  check('/v1/consumers/{id}', 'DELETE', await P('DELETE', '/v1/consumers/contract-hook'), 404);

  // The inbox: a child's events delivered into a parent, signed with the parent's token.
  let res = await P('POST', '/v1/agents', {json: {provider: 'scripted', cwd: tmp, title: 'parent'}});
  const parent = JSON.parse(res.text).id;
  res = await P('GET', `/v1/agents/${parent}/inbox`);
  check('/v1/agents/{id}/inbox', 'GET', res, 200);
  const {token} = JSON.parse(res.text);
  // Every id has an inbox (its token is derived), a session that does not exist too.
  check('/v1/agents/{id}/inbox', 'GET', await P('GET', '/v1/agents/ses_none/inbox'), 200);
  res = await P('GET', `/v1/agents/${id}/events?offset=-1`);
  const events = JSON.parse(res.text).slice(0, 3);
  const delivery = {consumer: 'contract', session: id, epoch: events[0].epoch, seqStart: events[0].seq,
                    seqEnd: events.at(-1).seq, ordinal: 0,
                    idempotencyKey: `contract/${id}/${events[0].epoch}/${events.at(-1).seq}`,
                    coalesced: false, state: null, events};
  const body = JSON.stringify(delivery);
  const sign = (b, t = Math.floor(Date.now() / 1000)) => ({
    'content-type': 'application/json', 'x-agentstream-timestamp': String(t),
    'x-agentstream-signature': 'v1=' + crypto.createHmac('sha256', token).update(`${t}.${b}`).digest('hex'),
  });
  check('/v1/agents/{id}/inbox', 'POST', await P('POST', `/v1/agents/${parent}/inbox`, {body, headers: {'content-type': 'application/json'}}), 401);
  check('/v1/agents/{id}/inbox', 'POST', await P('POST', `/v1/agents/${parent}/inbox`, {body, headers: sign(body, 1000)}), 401);
  check('/v1/agents/{id}/inbox', 'POST', await P('POST', `/v1/agents/${parent}/inbox`, {body, headers: sign(body)}), 200);
  res = await P('POST', `/v1/agents/${parent}/inbox`, {body, headers: sign(body)});
  check('/v1/agents/{id}/inbox', 'POST', res, 200);
  if (JSON.parse(res.text).duplicate !== true) fail('POST inbox', `a redelivery answered ${res.text}`);
  const gap = JSON.stringify({...delivery, ordinal: 5});
  check('/v1/agents/{id}/inbox', 'POST', await P('POST', `/v1/agents/${parent}/inbox`, {body: gap, headers: sign(gap)}), 400);
  const empty = JSON.stringify({...delivery, ordinal: 1, events: []});
  check('/v1/agents/{id}/inbox', 'POST', await P('POST', `/v1/agents/${parent}/inbox`, {body: empty, headers: sign(empty)}), 400);
  check('/v1/agents/{id}/events', 'GET', await P('GET', `/v1/agents/${parent}/events`), 200);
  check('/v1/agents/{id}/timeline', 'GET', await P('GET', `/v1/agents/${parent}/timeline`), 200);
  check('/v1/agents/{id}', 'DELETE', await P('DELETE', `/v1/agents/${parent}`), 200);
}

// On a daemon with --token: without one, a loopback client is the owner whatever it sends
// (docs/remote.md), so a device token would not be looked at.
async function devices(port, owner) {
  const P = (m, t, o = {}) => request(port, m, t, {auth: owner, ...o});
  const as = (token) => ({authorization: `Bearer ${token}`});
  check('/v1/whoami', 'GET', await P('GET', '/v1/whoami'), 200);
  check('/v1/pairings', 'POST', await P('POST', '/v1/pairings', {json: {name: 'phone', expiresInMs: 60000, extra: 1}}), 400);
  check('/v1/pairings', 'POST', await P('POST', '/v1/pairings', {json: {expiresInMs: 5}}), 400);
  let res = await P('POST', '/v1/pairings', {json: {name: 'phone', expiresInMs: 60000}});
  check('/v1/pairings', 'POST', res, 201);
  const {code} = JSON.parse(res.text);
  check('/v1/pairings', 'POST', await P('POST', '/v1/pairings'), 201);
  check('/v1/pairings/exchange', 'POST', await P('POST', '/v1/pairings/exchange', {json: {code: 'asp_' + 'x'.repeat(32)}}), 401);
  check('/v1/pairings/exchange', 'POST', await P('POST', '/v1/pairings/exchange', {json: {code, name: 'x'}}), 400);
  res = await P('POST', '/v1/pairings/exchange', {json: {code}, headers: {'user-agent': 'contract-test'}});
  check('/v1/pairings/exchange', 'POST', res, 201);
  const paired = JSON.parse(res.text);
  const dev = paired.device.id;
  check('/v1/pairings/exchange', 'POST', await P('POST', '/v1/pairings/exchange', {json: {code}}), 401);
  check('/v1/whoami', 'GET', await P('GET', '/v1/whoami', {headers: as(paired.token)}), 200);
  check('/v1/whoami', 'GET', await P('GET', `/v1/whoami?token=${paired.token}`), 200);
  check('/v1/devices', 'GET', await P('GET', '/v1/devices'), 200);
  check('/v1/devices', 'GET', await P('GET', '/v1/devices', {headers: as(paired.token)}), 200);
  check('/v1/pairings', 'POST', await P('POST', '/v1/pairings', {json: {}, headers: as(paired.token)}), 403);
  check('/v1/devices/{id}', 'PATCH', await P('PATCH', `/v1/devices/${dev}`, {json: {name: 'my phone'}}), 200);
  check('/v1/devices/{id}', 'PATCH', await P('PATCH', `/v1/devices/${dev}`, {json: {name: ''}}), 400);
  check('/v1/devices/{id}', 'PATCH', await P('PATCH', `/v1/devices/${dev}`, {json: {name: 'a', nam: 'b'}}), 400);
  check('/v1/devices/{id}', 'PATCH', await P('PATCH', '/v1/devices/dev_none', {json: {name: 'a'}}), 404);
  check('/v1/devices/{id}', 'PATCH', await P('PATCH', '/v1/devices/dev_other', {json: {name: 'a'}, headers: as(paired.token)}), 403);

  // Notification settings: the device's own (self), the owner's view, refusals.
  const N = '/v1/devices/{id}/notifications';
  check(N, 'GET', await P('GET', '/v1/devices/self/notifications', {headers: as(paired.token)}), 200);
  check(N, 'GET', await P('GET', `/v1/devices/${dev}/notifications`), 200);
  check(N, 'GET', await P('GET', '/v1/devices/self/notifications'), 400);
  check(N, 'GET', await P('GET', '/v1/devices/dev_other/notifications', {headers: as(paired.token)}), 403);
  check(N, 'GET', await P('GET', '/v1/devices/dev_none/notifications'), 404);
  const settings = {kinds: {permission: true, turnFinished: false}, previews: true, minTurnMs: 1000,
                    ntfy: {url: 'https://ntfy.example.com', topic: 'contract-topic'}};
  check(N, 'PUT', await P('PUT', '/v1/devices/self/notifications', {json: settings, headers: as(paired.token)}), 200);
  check(N, 'GET', await P('GET', `/v1/devices/${dev}/notifications`), 200);
  check('/v1/consumers/{id}', 'GET', await P('GET', `/v1/consumers/notify.${dev}`), 200);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {...settings, preview: true}}), 400);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {kinds: {sometimes: true}}}), 400);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {minTurnMs: -1}}), 400);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {ntfy: {url: 'https://ntfy.example.com', topic: 't', priority: 1}}}), 400);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {webPush: {endpoint: 'https://push.example.com/x', keys: {p256dh: 'AA', auth: 'AA'}}}}), 400);
  const ecdh = crypto.createECDH('prime256v1');
  const webPush = {endpoint: 'https://push.example.com/send/contract', expirationTime: null,
                   keys: {p256dh: ecdh.generateKeys().toString('base64url'),
                          auth: crypto.randomBytes(16).toString('base64url')}};
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {webPush}}), 200);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {webPush: {...webPush, extra: 1}}}), 400);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: {webPush: {...webPush, endpoint: 'http://push.example.com/x'}}}), 400);
  check(N, 'GET', await P('GET', `/v1/devices/${dev}/notifications`), 200);
  check(N, 'DELETE', await P('DELETE', `/v1/devices/${dev}/notifications`), 200);
  check('/v1/notifications/vapid', 'GET', await P('GET', '/v1/notifications/vapid'), 200);
  check('/v1/notifications/vapid', 'GET', await P('GET', '/v1/notifications/vapid', {headers: as(paired.token)}), 200);

  check('/v1/devices/{id}', 'DELETE', await P('DELETE', `/v1/devices/${dev}`, {headers: as(paired.token)}), 200);
  check('/v1/devices/{id}', 'DELETE', await P('DELETE', `/v1/devices/${dev}`), 200);
  check('/v1/devices/{id}', 'DELETE', await P('DELETE', '/v1/devices/dev_none'), 404);
  check('/v1/whoami', 'GET', await P('GET', '/v1/whoami', {headers: as(paired.token)}), 401);
  check(N, 'PUT', await P('PUT', `/v1/devices/${dev}/notifications`, {json: settings}), 409);
}

async function streams(port) {
  const P = (m, t, o) => request(port, m, t, o);
  const S = '/v1/stream/{path}';
  const json = {'content-type': 'application/json'};
  check(S, 'PUT', await P('PUT', '/v1/stream/contract/s1', {headers: json}), 201);
  check(S, 'PUT', await P('PUT', '/v1/stream/contract/s1', {headers: json}), 200);
  check(S, 'PUT', await P('PUT', '/v1/stream/contract/s1', {headers: {'content-type': 'text/plain'}}), 409);
  check(S, 'PUT', await P('PUT', '/v1/stream/contract/s2', {headers: {...json, 'stream-ttl': '1', 'stream-expires-at': '2030-01-01T00:00:00Z'}}), 400);
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: json, body: '[1,{"a":2}]'}), 204);
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: json, body: '[]'}), 400);
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: {'content-type': 'text/plain'}, body: 'x'}), 409);
  const producer = {...json, 'producer-id': 'p1', 'producer-epoch': '0', 'producer-seq': '0'};
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: producer, body: '3'}), 200);
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: producer, body: '3'}), 204);
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: {...producer, 'producer-seq': '5'}, body: '4'}), 409);
  check(S, 'POST', await P('POST', '/v1/stream/contract/none', {headers: json, body: '1'}), 404);
  let res = await P('GET', '/v1/stream/contract/s1?offset=-1');
  check(S, 'GET', res, 200);
  const next = res.headers['stream-next-offset'];
  check(S, 'GET', await P('GET', `/v1/stream/contract/s1?offset=${next}&live=long-poll`), 204);
  if (res.headers.etag)
    check(S, 'GET', await P('GET', '/v1/stream/contract/s1?offset=-1', {headers: {'if-none-match': res.headers.etag}}), 304);
  const streamSse = await readSse(port, '/v1/stream/contract/s1?offset=-1&live=sse',
                                  (evs) => evs.some((e) => e.event === 'control'));
  check(S, 'GET', {status: streamSse.status, headers: streamSse.headers, text: ''}, 200);
  if (!streamSse.events.some((e) => e.event === 'data')) fail('GET /v1/stream sse', 'no data event');
  check(S, 'GET', await P('GET', '/v1/stream/contract/s1?offset=-1&live=forever'), 400);
  check(S, 'GET', await P('GET', '/v1/stream/contract/none?offset=-1'), 404);
  check(S, 'HEAD', await P('HEAD', '/v1/stream/contract/s1'), 200);
  check(S, 'HEAD', await P('HEAD', '/v1/stream/contract/none'), 404);
  check(S, 'OPTIONS', await P('OPTIONS', '/v1/stream/contract/s1', {headers: {origin: 'https://elsewhere.example'}}), 204);

  const base = '/v1/stream/__ds/subscriptions';
  check('/v1/stream/__ds/jwks.json', 'GET', await P('GET', '/v1/stream/__ds/jwks.json'), 200);
  const sub = {type: 'pull-wake', pattern: 'contract/*', wake_stream: 'contract-wakes', lease_ttl_ms: 5000};
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/sub1`, {json: sub}), 201);
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/sub1`, {json: sub}), 200);
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/sub1`, {json: {...sub, lease_ttl_ms: 6000}}), 409);
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/sub2`, {json: {type: 'pull-wake'}}), 400);
  const hook = {type: 'webhook', streams: ['contract/s1'], webhook: {url: 'http://127.0.0.1:9/wake'}, description: 'contract'};
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/hook1`, {json: hook}), 201);
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/hook2`, {json: {...hook, webhook: {url: 'http://example.com/wake'}}}), 400);
  check(`${base}/{id}`, 'DELETE', await P('DELETE', `${base}/hook1`), 204);
  check(`${base}/{id}`, 'GET', await P('GET', `${base}/sub1`), 200);
  check(`${base}/{id}`, 'GET', await P('GET', `${base}/none`), 404);
  check(`${base}/{id}/streams`, 'POST', await P('POST', `${base}/sub1/streams`, {json: {streams: ['other/x']}}), 204);
  check(`${base}/{id}/streams`, 'POST', await P('POST', `${base}/sub1/streams`, {json: {streams: []}}), 400);
  check(`${base}/{id}/streams/{stream}`, 'DELETE', await P('DELETE', `${base}/sub1/streams/other/x`), 204);
  check(S, 'POST', await P('POST', '/v1/stream/contract/s1', {headers: json, body: '5'}), 204);
  await sleep(300);
  res = await P('POST', `${base}/sub1/claim`, {json: {worker: 'w1'}});
  check(`${base}/{id}/claim`, 'POST', res, [200, 409]);
  if (res.status === 200) {
    const claim = JSON.parse(res.text);
    check(`${base}/{id}/claim`, 'POST', await P('POST', `${base}/sub1/claim`, {json: {worker: 'w2'}}), 409);
    const wake = {wake_id: claim.wake_id, generation: claim.generation};
    const bearer = {authorization: `Bearer ${claim.token}`};
    check(`${base}/{id}/ack`, 'POST', await P('POST', `${base}/sub1/ack`, {json: {...wake, acks: []}}), 401);
    check(`${base}/{id}/ack`, 'POST', await P('POST', `${base}/sub1/ack`, {json: {...wake, generation: claim.generation + 1}, headers: bearer}), 409);
    check(`${base}/{id}/ack`, 'POST', await P('POST', `${base}/sub1/ack`, {json: {...wake, acks: [], done: false}, headers: bearer}), 200);
    check(`${base}/{id}/callback`, 'POST', await P('POST', `${base}/sub1/callback`, {json: {...wake, acks: []}, headers: bearer}), 200);
    check(`${base}/{id}/release`, 'POST', await P('POST', `${base}/sub1/release`, {json: wake, headers: bearer}), 204);
  }
  check(`${base}/{id}/claim`, 'POST', await P('POST', `${base}/sub1/claim`, {json: {}}), 400);
  check(`${base}/{id}`, 'DELETE', await P('DELETE', `${base}/sub1`), 204);
  check(S, 'DELETE', await P('DELETE', '/v1/stream/contract/s1'), 204);
  check(S, 'DELETE', await P('DELETE', '/v1/stream/contract/s1'), 404);
}

// Every agent's whole log and timeline (closed ones, forks, worktrees, the inbox's parent): every
// kind of event the scenarios made is checked against its payload's schema.
async function sweep(port) {
  const list = JSON.parse((await request(port, 'GET', '/v1/agents?closed=true')).text).agents;
  for (const agent of list) {
    let offset = '-1';
    for (let more = true; more;) {
      const res = await request(port, 'GET', `/v1/agents/${agent.id}/events?offset=${offset}`);
      check('/v1/agents/{id}/events', 'GET', res, 200);
      more = res.headers['stream-up-to-date'] !== 'true';
      offset = res.headers['stream-next-offset'];
    }
    check('/v1/agents/{id}/timeline', 'GET', await request(port, 'GET', `/v1/agents/${agent.id}/timeline?limit=500`), 200);
  }
}

async function openapi(port) {
  const res = await request(port, 'GET', '/v1/openapi.json');
  check('/v1/openapi.json', 'GET', res, 200);
  if (res.status === 200 && JSON.stringify(JSON.parse(res.text)) !== JSON.stringify(doc))
    fail('GET /v1/openapi.json', 'the daemon serves another document than docs/openapi.yaml');
}

// The ACP catalog: every entry strict against CatalogAgent; nothing of it is installed for the
// contract's daemon but what its PATH holds.
async function catalog(port) {
  const res = await request(port, 'GET', '/v1/catalog');
  check('/v1/catalog', 'GET', res, 200);
  const agents = res.status === 200 ? JSON.parse(res.text).agents : [];
  if (!agents.some((a) => a.id === 'codex-acp' && a.proven && a.provider === 'acp:codex-acp'))
    fail('GET /v1/catalog', 'no proven codex-acp entry');
  const missing = agents.find((a) => !a.installed);
  if (missing) {
    check('/v1/agents', 'POST', await request(port, 'POST', '/v1/agents', {json: {provider: missing.provider, cwd: '/tmp'}}), 400);
  }
}

async function mcp(port) {
  const res = await request(port, 'POST', '/mcp', {json: {jsonrpc: '2.0', id: 1, method: 'tools/list'}});
  check('/mcp', 'POST', res, 200);
  check('/mcp', 'POST', await request(port, 'POST', '/mcp', {json: {jsonrpc: '2.0', method: 'notifications/initialized'}}), 202);
  check('/mcp', 'POST', await request(port, 'POST', '/mcp', {body: '{bad', headers: {'content-type': 'application/json'}}), 400);
  check('/mcp', 'POST', await request(port, 'POST', '/mcp', {json: [1]}), 400);
  // GET is refused with the Error body (no operation of the document: it never succeeds).
  const get = await request(port, 'GET', '/mcp');
  results.checks++;
  if (get.status !== 405 || !validator('/components/schemas/Error')(JSON.parse(get.text)))
    fail('GET /mcp', `${get.status} ${get.text.slice(0, 200)}`);
}

async function access(port, token) {
  const P = (m, t, o) => request(port, m, t, o);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents'), 401);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents', {headers: {authorization: 'Bearer wrong'}}), 401);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents', {headers: {authorization: `bearer ${token}`}}), 200);
  check('/v1/agents', 'GET', await P('GET', `/v1/agents?token=${token}`), 200);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents', {headers: {authorization: `Bearer ${token}`, host: 'evil.example'}}), 403);
  check('/v1/agents', 'GET', await P('GET', '/v1/agents', {headers: {authorization: `Bearer ${token}`, origin: 'https://evil.example'}}), 403);
  check('/healthz', 'GET', await P('GET', '/healthz'), 401);
  check('/v1/pairings/exchange', 'POST', await P('POST', '/v1/pairings/exchange', {json: {code: 'asp_' + 'y'.repeat(32)}}), 401);
  check('/v1/agents/{id}', 'GET', await P('GET', '/v1/agents/ses_x', {headers: {authorization: 'Bearer asd_' + 'z'.repeat(43)}}), 401);
  // A pull wake acknowledged with its claim token as the bearer and the daemon's as ?token=.
  const owner = {authorization: `Bearer ${token}`};
  const base = '/v1/stream/__ds/subscriptions';
  await P('PUT', '/v1/stream/tokened/s', {headers: {...owner, 'content-type': 'application/json'}});
  const sub = {type: 'pull-wake', streams: ['tokened/s'], wake_stream: 'tokened-wakes'};
  check(`${base}/{id}`, 'PUT', await P('PUT', `${base}/t1`, {json: sub, headers: owner}), 201);
  await P('POST', '/v1/stream/tokened/s', {headers: {...owner, 'content-type': 'application/json'}, body: '1'});
  await sleep(300);
  const claimed = await P('POST', `${base}/t1/claim`, {json: {worker: 'w'}, headers: owner});
  check(`${base}/{id}/claim`, 'POST', claimed, 200);
  if (claimed.status === 200) {
    const c = JSON.parse(claimed.text);
    const ack = await P('POST', `${base}/t1/ack?token=${token}`, {
      json: {wake_id: c.wake_id, generation: c.generation, acks: [], done: true},
      headers: {authorization: `Bearer ${c.token}`}});
    check(`${base}/{id}/ack`, 'POST', ack, 200);
  }
  // The per-address limit of failed exchanges and unknown device tokens.
  let last = null;
  for (let i = 0; i < 12; i++) last = await P('POST', '/v1/pairings/exchange', {json: {code: 'asp_' + 'y'.repeat(32)}});
  check('/v1/pairings/exchange', 'POST', last, 429);
}

// Triggers (docs/automation.md), on the daemon with a token: a signed delivery needs none.
const TRIGGER_SECRET = 'contract-webhook-secret';
async function triggers(port, token) {
  const body = JSON.stringify({action: 'opened', issue: {number: 7, title: 'Contract'}});
  const sign = (text) => 'sha256=' + crypto.createHmac('sha256', TRIGGER_SECRET).update(text).digest('hex');
  const deliver = (headers, text = body, id = 'issues') => request(port, 'POST', `/v1/triggers/${id}`, {
    body: text, headers: {'content-type': 'application/json', 'x-github-event': 'issues', ...headers}});
  const op = '/v1/triggers/{id}';
  const signed = {'x-github-delivery': 'contract-1', 'x-hub-signature-256': sign(body)};
  let res = await deliver(signed);
  check(op, 'POST', res, 200);
  const first = JSON.parse(res.text);
  if (first.duplicate !== false || first.missingFields?.[0] !== 'issue.milestone')
    fail('POST trigger', `the first delivery: ${res.text.slice(0, 300)}`);
  res = await deliver(signed);
  check(op, 'POST', res, 200);
  if (JSON.parse(res.text).agent !== first.agent || JSON.parse(res.text).duplicate !== true)
    fail('POST trigger', `a redelivery is not the first one's: ${res.text.slice(0, 300)}`);
  check(op, 'POST', await deliver({...signed, 'x-hub-signature-256': sign(body + ' ')}), 401);
  check(op, 'POST', await deliver({'x-github-delivery': 'contract-2'}), 401);
  check(op, 'POST', await deliver({'x-github-delivery': 'contract-2', authorization: `Bearer ${token}`}), 200);
  check(op, 'POST', await deliver({'x-hub-signature-256': sign(body)}), 400);
  check(op, 'POST', await deliver({...signed, 'x-github-event': 'ping'}), 200);
  check(op, 'POST', await deliver({authorization: `Bearer ${token}`, 'idempotency-key': 'k'}, body, 'nope'), 404);
  const big = JSON.stringify({issue: {title: 'x'.repeat(1 << 20)}});
  check(op, 'POST', await deliver({'x-github-delivery': 'contract-3', 'x-hub-signature-256': sign(big)}, big), 413);
}

// Schedules (docs/automation.md, "Schedules"), on the daemon with a token and a floor of a tick
// a second: made (an interval into an agent, a cron expression with a template), listed, one
// fired and shown with its firings, paused, resumed, deleted; each refusal.
async function schedules(port, token) {
  const P = (method, target, json) => request(port, method, target, {json, auth: token});
  const all = '/v1/schedules';
  const one = '/v1/schedules/{id}';
  let res = await P('POST', '/v1/agents', {provider: 'scripted', cwd: '/tmp'});
  check('/v1/agents', 'POST', res, 200);
  const agent = JSON.parse(res.text).id;
  check(all, 'POST', await P('POST', all, {id: 'contract', every: '1s', agent, prompt: 'tick {{tick}} {{nope}}'}), 201);
  check(all, 'POST', await P('POST', all, {
    id: 'weekdays', cron: '0 9 * * 1-5', timezone: 'UTC', missed: 'run-once', prompt: 'standup {{date}}',
    template: {provider: 'scripted', cwd: '/tmp', worktree: true, model: 'm', mode: 'plan', title: 'Standup {{date}}'}}), 201);
  check(all, 'POST', await P('POST', all, {id: 'contract', every: '1h', agent, prompt: 'again'}), 409);
  check(all, 'POST', await P('POST', all, {id: 'both', every: '1h', cron: '0 9 * * *', agent, prompt: 'x'}), 400);
  check(all, 'POST', await P('POST', all, {id: 'fast', every: '500ms', agent, prompt: 'x'}), 400);
  check(all, 'POST', await request(port, 'POST', all, {body: '{not json', auth: token}), 400);
  check(all, 'GET', await request(port, 'GET', all), 401);
  check(all, 'GET', await P('GET', all), 200);
  // The first tick fires a second after the creation; its turn completes.
  const deadline = Date.now() + 15000;
  let fired = null;
  while (!fired && Date.now() < deadline) {
    res = await P('GET', '/v1/schedules/contract?firings=100');
    fired = JSON.parse(res.text).firings?.find((f) => f.outcome === 'fired' && f.turnOutcome === 'completed');
    if (!fired) await sleep(100);
  }
  check(one, 'GET', res, 200);
  if (!fired) fail('GET /v1/schedules/{id}', `no completed firing within 15 s: ${res.text.slice(0, 300)}`);
  res = await P('POST', '/v1/schedules/contract/pause', {});
  check(`${one}/pause`, 'POST', res, 200);
  if (JSON.parse(res.text).nextTick !== null) fail('POST pause', `nextTick: ${res.text.slice(0, 300)}`);
  check(`${one}/resume`, 'POST', await P('POST', '/v1/schedules/contract/resume'), 200);
  check(`${one}/pause`, 'POST', await P('POST', '/v1/schedules/none/pause'), 404);
  check(`${one}/resume`, 'POST', await P('POST', '/v1/schedules/none/resume'), 404);
  check(one, 'GET', await P('GET', '/v1/schedules/weekdays'), 200);
  check(one, 'GET', await P('GET', '/v1/schedules/contract?firings=0'), 400);
  check(one, 'GET', await P('GET', '/v1/schedules/none'), 404);
  for (const id of ['contract', 'weekdays']) check(one, 'DELETE', await P('DELETE', `/v1/schedules/${id}`), 200);
  check(one, 'DELETE', await P('DELETE', '/v1/schedules/contract'), 404);
  check(all, 'GET', await P('GET', all), 200);
}

// ---- Main ----

async function main() {
  if (!fs.existsSync(binary)) throw new Error(`no daemon at ${binary}`);
  selfCheck();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentstream-openapi-'));
  const daemons = [];
  try {
    const a = await startDaemon(path.join(tmp, 'a'));
    daemons.push(a.child);
    const {id} = await agents(a.port, tmp);
    await history(a.port, id);
    await worktrees(a.port, tmp, id);
    await consumers(a.port, tmp, id);
    await streams(a.port);
    await mcp(a.port);
    await openapi(a.port);
    await catalog(a.port);
    check('/v1/agents/{id}', 'DELETE', await request(a.port, 'DELETE', `/v1/agents/${id}`), 200);
    await sweep(a.port);
    const token = crypto.randomBytes(16).toString('hex');
    const triggersFile = path.join(tmp, 'triggers.json');
    fs.writeFileSync(triggersFile, JSON.stringify({triggers: [
      {id: 'issues', secret: TRIGGER_SECRET, events: ['issues'],
       template: {provider: 'scripted', cwd: tmp, title: '#{{issue.number}}'},
       prompt: 'Fix #{{issue.number}}: {{issue.title}} {{issue.milestone}}'}]}));
    const b = await startDaemon(path.join(tmp, 'b'), token, ['--triggers', triggersFile, '--schedule-floor', '1s']);
    daemons.push(b.child);
    await devices(b.port, token);
    await access(b.port, token);
    await triggers(b.port, token);
    await schedules(b.port, token);
  } finally {
    for (const child of daemons) child.kill('SIGTERM');
  }
  const documented = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys(item).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${p}`));
  const untested = documented.filter((op) => !results.operations.has(op));
  console.log(`\n${results.checks} answers checked; ${results.operations.size} of ${documented.length} ` +
              `operations and ${results.responses.size} distinct (operation, status) responses ` +
              `validated against docs/openapi.yaml`);
  if (untested.length) console.log(`not exercised: ${untested.join(', ')}`);
  const kinds = doc.components.schemas.EventKind.enum;
  console.log(`${results.kinds.size} of ${kinds.length} event kinds seen and checked; not seen: ` +
              kinds.filter((k) => !results.kinds.has(k)).join(' '));
  report(results.failures, tmp);
}

run(main);
