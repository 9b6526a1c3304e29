// Triggers and a schedule under chaos (docs/automation.md, "Exactly once"): three daemons on one
// PostgreSQL database, each reading the same triggers file; two senders post the same signed
// deliveries, three at a time, each to a randomly chosen daemon, retrying until answered, while a
// loop kills a random daemon with SIGKILL and restarts it, and a schedule ticks every 2 s. Two
// triggers: one makes a new agent per delivery (a template), one prompts a single existing agent;
// the schedule prompts another existing agent. Afterwards:
//   - every delivery of the template made exactly one agent, whose log holds one automation.fired
//     and one user message;
//   - the existing agent's log holds exactly one automation.fired and one user message per
//     delivery;
//   - every answer for one delivery named the same agent and client message id;
//   - every tick of the schedule, from its creation to its pause, fired exactly once (one
//     automation.fired naming the tick, one user message with its client message id, one firing
//     row), or was recorded skipped by its policy; no other tick fired.
//
//   node tests/chaos/triggers_chaos_test.mjs AGENTSTREAM_BIN   (AGENTSTREAM_TEST_PG names the server)
// Environment: AGENTSTREAM_TRIGGER_DELIVERIES (default 30 per trigger), AGENTSTREAM_CHAOS_SECONDS
// (default 60: the kills go on at least this long, and until every delivery was answered),
// AGENTSTREAM_CHAOS_CYCLES (default 100: the most kills).
import crypto from 'node:crypto';
import fs from 'node:fs';

import { TestEnv, call, fail, pick, readEvents, sleep } from '../lib/daemons.mjs';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node triggers_chaos_test.mjs AGENTSTREAM_BIN');
  process.exit(2);
}
const DELIVERIES = Number(process.env.AGENTSTREAM_TRIGGER_DELIVERIES || 30);
const CYCLES = Number(process.env.AGENTSTREAM_CHAOS_CYCLES || 100);
const SECONDS = Number(process.env.AGENTSTREAM_CHAOS_SECONDS || 60);
const TTL = 1500;
const SERVE = ['--scripted-chunk-ms', '5', '--owner-ttl-ms', String(TTL),
               '--owner-renew-ms', String(TTL / 5), '--long-poll-ms', '1000'];
const SECRET = 'chaos-webhook-secret-0123';

const env = await TestEnv.create('triggers-chaos');
const store = env.pgDatabase();
if (!store) {
  console.log('AGENTSTREAM_TEST_PG is not set');
  process.exit(77);
}

// The agent the second trigger prompts: made first, by a daemon without triggers.
const first = env.daemon('a', bin, ['--store', store]);
await first.start(SERVE);
const made = await call(first.url, 'POST', '/v1/agents',
                        { provider: 'scripted', cwd: env.dir, title: 'reviewer' });
if (made.status !== 200) fail(`create the reviewer: ${made.status} ${made.text || made.error}`);
const reviewer = made.json.id;
const clockAgent = await call(first.url, 'POST', '/v1/agents',
                              { provider: 'scripted', cwd: env.dir, title: 'clock' });
if (clockAgent.status !== 200) fail(`create the clock agent: ${clockAgent.status}`);
const clock = clockAgent.json.id;
await first.kill('SIGKILL');

const triggersFile = `${env.dir}/triggers.json`;
fs.writeFileSync(triggersFile, JSON.stringify({ triggers: [
  { id: 'issues', secret: SECRET, events: ['issues'],
    template: { provider: 'scripted', cwd: env.dir, title: 'issue {{issue.number}}' },
    prompt: 'Fix issue {{issue.number}}: {{issue.title}}' },
  { id: 'reviews', secret: SECRET, events: ['pull_request'], agent: reviewer,
    prompt: 'Review pull request {{pull_request.number}}' },
] }));
const daemons = [first, env.daemon('b', bin, ['--store', store]), env.daemon('c', bin, ['--store', store])];
const serve = [...SERVE, '--triggers', triggersFile, '--schedule-floor', '1s'];
for (const d of daemons) await d.start(serve);
const up = () => daemons.filter((d) => d.running() && d.url);

// ---- two senders, every delivery from both ----
const deliveries = [];
for (let i = 0; i < DELIVERIES; ++i) {
  deliveries.push({ trigger: 'issues', event: 'issues', id: `issue-${i}`,
                    body: JSON.stringify({ action: 'opened', issue: { number: i, title: `bug ${i}` } }) });
  deliveries.push({ trigger: 'reviews', event: 'pull_request', id: `pr-${i}`,
                    body: JSON.stringify({ action: 'opened', pull_request: { number: i } }) });
}
const answers = new Map();  // delivery id -> [{agent, clientMessageId}]
let posts = 0;
let refusals = 0;

async function deliver(d) {
  const signature = 'sha256=' + crypto.createHmac('sha256', SECRET).update(d.body).digest('hex');
  for (let attempt = 0; attempt < 200; ++attempt) {
    const daemon = pick(up());
    if (!daemon) {
      await sleep(100);
      continue;
    }
    ++posts;
    // call() sends JSON.stringify(JSON.parse(d.body)): the very bytes signed.
    const r = await call(daemon.url, 'POST', `/v1/triggers/${d.trigger}`, JSON.parse(d.body), 20000, {
      'x-github-event': d.event, 'x-github-delivery': d.id, 'x-hub-signature-256': signature });
    if (r.status === 200) {
      const list = answers.get(d.id) || [];
      list.push({ agent: r.json.agent, clientMessageId: r.json.clientMessageId });
      answers.set(d.id, list);
      return;
    }
    // Not answered (the daemon died) or refused for now (a race of two creates, ownership moving):
    // the sender retries the same delivery, as GitHub's redelivery would.
    ++refusals;
    await sleep(50 + Math.random() * 200);
  }
  fail(`delivery ${d.id} was never answered`);
}

// A sender posts every delivery in a random order, three at a time.
async function sender() {
  const order = [...deliveries].sort(() => Math.random() - 0.5);
  const lane = async () => {
    for (let d = order.shift(); d; d = order.shift()) {
      await deliver(d);
      await sleep(450 + Math.random() * 900);  // spread over the kill loop's time
    }
  };
  await Promise.all([lane(), lane(), lane()]);
}

let killing = true;
let kills = 0;
async function killer() {
  for (let cycle = 1; cycle <= CYCLES && (killing || Date.now() - started < SECONDS * 1000);
       ++cycle) {
    ++kills;
    await sleep(300 + Math.random() * 700);
    const victim = pick(daemons);
    await victim.kill('SIGKILL');
    await sleep(Math.random() < 0.5 ? Math.random() * 300 : TTL + Math.random() * TTL);
    await victim.start(serve);
  }
}

const madeSchedule = await call(pick(up()).url, 'POST', '/v1/schedules',
                                { id: 'clock', every: '2s', agent: clock, prompt: 'tick {{tick}}' });
if (madeSchedule.status !== 201) fail(`create the schedule: ${madeSchedule.status} ${madeSchedule.text}`);
const started = Date.now();
const chaos = killer();
await Promise.all([sender(), sender()]);
const sent = Date.now() - started;
killing = false;
await chaos;
for (const d of daemons) if (!d.running()) await d.start(serve);
console.log(`triggers chaos: ${deliveries.length} deliveries from two senders in ${sent} ms, ` +
            `${posts} posts, ${refusals} retried, ${kills} kills in ${Date.now() - started} ms`);

// ---- every answer for a delivery named one agent and one client message id ----
for (const d of deliveries) {
  const list = answers.get(d.id) || [];
  if (list.length !== 2) fail(`delivery ${d.id}: ${list.length} answers, not one per sender`);
  if (list[0].agent !== list[1].agent || list[0].clientMessageId !== list[1].clientMessageId)
    fail(`delivery ${d.id} was answered with two results: ${JSON.stringify(list)}`);
}

// ---- once each, in the logs ----
async function settledEvents(agent) {
  // The turns queued behind the kills finish; then the log is read whole.
  for (let i = 0; i < 300; ++i) {
    const r = await call(pick(up()).url, 'GET', `/v1/agents/${agent}`);
    if (r.status === 200 && r.json.status !== 'running' && r.json.queue.length === 0) break;
    await sleep(200);
  }
  return readEvents(pick(up()).url, agent);
}
const count = (events, kind, pred = () => true) =>
  events.filter((e) => e.kind === kind && pred(e)).length;

const listed = await call(pick(up()).url, 'GET', '/v1/agents');
if (listed.status !== 200) fail(`list: ${listed.status}`);
for (let i = 0; i < DELIVERIES; ++i) {
  const titled = listed.json.agents.filter((a) => a.title === `issue ${i}`);
  if (titled.length !== 1) fail(`issue ${i} made ${titled.length} agents`);
  if (titled[0].id !== answers.get(`issue-${i}`)[0].agent) fail(`issue ${i}: the answer's agent is not the one made`);
  const events = await settledEvents(titled[0].id);
  if (count(events, 'automation.fired') !== 1) fail(`issue ${i}: ${count(events, 'automation.fired')} automation.fired`);
  if (count(events, 'user.message') !== 1) fail(`issue ${i}: ${count(events, 'user.message')} user messages`);
}
const reviews = await settledEvents(reviewer);
for (let i = 0; i < DELIVERIES; ++i) {
  const fired = count(reviews, 'automation.fired', (e) => e.payload.key === `pr-${i}`);
  const prompted = count(reviews, 'user.message', (e) => e.payload.clientMessageId === `trigger:reviews:pr-${i}`);
  if (fired !== 1 || prompted !== 1) fail(`pull request ${i}: ${fired} automation.fired, ${prompted} user messages`);
}
console.log('PASS: every delivery started exactly one turn');

// ---- every tick of the schedule once, or skipped and recorded ----
const paused = await call(pick(up()).url, 'POST', '/v1/schedules/clock/pause', {});
if (paused.status !== 200) fail(`pause: ${paused.status} ${paused.text}`);
let shown;
for (let i = 0; ; ++i) {  // a tick in flight when it was paused finishes
  shown = await call(pick(up()).url, 'GET', '/v1/schedules/clock?firings=100');
  if (shown.status === 200 && shown.json.pendingTick === null) break;
  if (i > 300) fail(`the pending tick never finished: ${shown.text}`);
  await sleep(200);
}
const tickKey = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const created = shown.json.createdMs;
const last = Date.parse(shown.json.lastTick);
const firings = shown.json.firings;
const clockEvents = await settledEvents(clock);
let fired = 0;
let skipped = 0;
const expected = new Set();
for (let t = created + 2000; tickKey(t) <= shown.json.lastTick; t += 2000) {
  const key = tickKey(t);
  expected.add(key);
  const skip = firings.find((f) => f.outcome === 'skipped' && (f.firstTick || f.tick) <= key && key <= f.tick);
  const marks = count(clockEvents, 'automation.fired', (e) => e.payload.id === 'clock' && e.payload.key === key);
  const prompts = count(clockEvents, 'user.message', (e) => e.payload.clientMessageId === `schedule:clock:${key}`);
  const rows = firings.filter((f) => f.tick === key && f.outcome === 'fired');
  if (skip) {
    if (marks !== 0 || prompts !== 0) fail(`tick ${key} was skipped and fired`);
    ++skipped;
  } else {
    if (marks !== 1 || prompts !== 1 || rows.length !== 1)
      fail(`tick ${key}: ${marks} automation.fired, ${prompts} user messages, ${rows.length} firing rows`);
    ++fired;
  }
}
for (const f of firings) if (f.outcome === 'failed') fail(`tick ${f.tick} failed: ${f.detail}`);
const extra = clockEvents.filter((e) => e.kind === 'automation.fired' && !expected.has(e.payload.key));
if (extra.length) fail(`ticks fired outside the schedule: ${extra.map((e) => e.payload.key)}`);
if (fired < 5) fail(`only ${fired} ticks fired in ${(last - created) / 1000} s`);
console.log(`PASS: the schedule's ${fired + skipped} ticks: ${fired} fired once each, ${skipped} skipped`);
await env.close();
