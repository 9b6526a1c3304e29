// What the fleet tests (tests/chaos/chaos_test.mjs, tests/chaos/failover_test.mjs) run beside
// their daemons and check afterwards: a durable webhook consumer's sink, live followers of
// agents, and the status a replay of an agent's log gives.
import http from 'node:http';
import { call, fail, sleep } from './daemons.mjs';

// A webhook sink on 127.0.0.1 that applies each idempotency key once; per session, each new
// delivery must start right after the last one. `delivered`: session -> [{seq, kind}]; `keys`:
// the keys applied. close() stops it.
export async function webhookSink() {
  const delivered = new Map();
  const keys = new Set();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      let d;
      try { d = JSON.parse(body); } catch { res.writeHead(400).end(); return; }
      if (!keys.has(d.idempotencyKey)) {
        keys.add(d.idempotencyKey);
        const got = delivered.get(d.session) || [];
        const next = got.length ? got[got.length - 1].seq + 1 : 1;
        if (d.seqStart !== next) fail(`consumer: ${d.session} delivery starts at ${d.seqStart}, expected ${next}`);
        for (const e of d.events) got.push({ seq: e.seq, kind: e.kind });
        delivered.set(d.session, got);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, delivered, keys,
           close: () => server.close() };
}

// Follows `agent` live (long-polls from the last offset through the daemon anyUrl() picks each
// time, switching on errors) into `seen` ([{seq, kind, payload}]) while `following()` is true;
// a gap or a reset fails the test.
export async function followAgent(anyUrl, agent, seen, following) {
  let offset = '-1';
  while (following()) {
    const r = await call(anyUrl(), 'GET',
                         `/v1/agents/${agent}/events?offset=${offset}&live=long-poll`, undefined,
                         5000);
    if (r.error || (r.status !== 200 && r.status !== 204)) {
      await sleep(50);
      continue;
    }
    if (r.headers.get('stream-reset')) fail(`${agent}: unexpected reset`);
    if (r.status === 200) {
      for (const e of r.json) {
        const expected = seen.length + 1;
        if (e.seq !== expected) fail(`${agent}: follower expected seq ${expected}, got ${e.seq}`);
        seen.push({ seq: e.seq, kind: e.kind, payload: JSON.stringify(e.payload) });
      }
    }
    offset = r.headers.get('stream-next-offset') || offset;
  }
}

// The status an agent's log replays to: running (a turn open), error (the last turn failed, or
// a fatal error), else idle.
export function replayStatus(events) {
  let errored = false;
  const open = new Set();
  for (const e of events) {
    if (e.kind === 'turn.started') { open.add(e.turn); errored = false; }
    if (['turn.completed', 'turn.canceled'].includes(e.kind)) { open.delete(e.turn); errored = false; }
    if (e.kind === 'turn.failed') { open.delete(e.turn); errored = true; }
    if (e.kind === 'error' && e.payload.fatal) errored = true;
  }
  return open.size ? 'running' : errored ? 'error' : 'idle';
}

// Waits until the sink has delivered, for every agent, as many events as `readLog(agent)` holds
// when the wait starts; fails after `timeoutMs`.
export async function waitForDeliveries(agents, delivered, readLog, timeoutMs) {
  const tails = new Map();
  for (const agent of agents) tails.set(agent, (await readLog(agent)).length);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const behind = agents.filter((a) => (delivered.get(a) || []).length < tails.get(a));
    if (behind.length === 0) return;
    if (Date.now() > until)
      fail(`consumer: ${behind.length} sessions behind, e.g. ${behind[0]}: ${
        (delivered.get(behind[0]) || []).length} of ${tails.get(behind[0])}`);
    await sleep(200);
  }
}

// Checks one agent's whole log `events` (as read at the end): dense seqs; what its follower saw
// (`seen`, when it had one) and what the consumer delivered equal it; every daemon of `reporters`
// reports the status the log replays to. Counts each user message's clientMessageId in `counts`.
export async function checkAgentLog(agent, events, { seen, delivered, reporters, counts }) {
  events.forEach((e, i) => { if (e.seq !== i + 1) fail(`${agent}: seq ${e.seq} at ${i + 1}`); });
  for (const e of events)
    if (e.kind === 'user.message')
      counts.set(e.payload.clientMessageId, (counts.get(e.payload.clientMessageId) || 0) + 1);
  if (seen) {
    if (seen.length !== events.length)
      fail(`${agent}: follower saw ${seen.length} of ${events.length} events`);
    seen.forEach((s, i) => {
      if (s.kind !== events[i].kind || s.payload !== JSON.stringify(events[i].payload))
        fail(`${agent}: follower's event ${i + 1} differs from the log`);
    });
  }
  const hooked = delivered.get(agent) || [];
  if (hooked.length !== events.length) fail(`consumer: ${agent} got ${hooked.length} of ${events.length}`);
  hooked.forEach((h, i) => {
    if (h.seq !== events[i].seq || h.kind !== events[i].kind)
      fail(`consumer: ${agent} delivery of seq ${i + 1} differs from the log`);
  });
  const expected = replayStatus(events);
  for (const d of reporters) {
    const r = await call(d.url, 'GET', `/v1/agents/${agent}`, undefined, 5000);
    if (r.status !== 200) fail(`${d.name} cannot report ${agent}: ${r.status} ${r.error || r.text}`);
    if (r.json.status !== expected)
      fail(`${d.name} reports ${agent} ${r.json.status}; the log replays to ${expected}`);
  }
}

// Every acknowledged send (`acked`: clientMessageId -> outcome) is in the logs once, no
// unacknowledged one twice, and no user message was never sent (`counts` from checkAgentLog).
export function checkSends(acked, unacked, counts) {
  for (const [cmid, outcome] of acked)
    if (counts.get(cmid) !== 1)
      fail(`acknowledged send ${cmid} (${outcome}) appears ${counts.get(cmid) || 0} times`);
  for (const cmid of unacked)
    if ((counts.get(cmid) || 0) > 1) fail(`unacknowledged send ${cmid} appears ${counts.get(cmid)} times`);
  for (const [cmid, n] of counts)
    if (!acked.has(cmid) && !unacked.has(cmid)) fail(`user message ${cmid} was never sent (${n})`);
}

// The q-quantile (0..1) of a list of numbers; NaN for an empty one.
export function percentile(list, q) {
  const sorted = [...list].sort((x, y) => x - y);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
}

// Reads the whole Durable Stream at `path` (a session log's /v1/agents/ID/events, or a generic
// stream) from the start, through the daemon anyUrl() picks for each page.
export async function readStream(anyUrl, path) {
  const items = [];
  let offset = '-1';
  for (;;) {
    const r = await call(anyUrl(), 'GET', `${path}?offset=${offset}`, undefined, 10000);
    if (r.status !== 200) fail(`read ${path}: ${r.status} ${r.error || r.text}`);
    items.push(...r.json);
    offset = r.headers.get('stream-next-offset');
    if (r.headers.get('stream-up-to-date')) return items;
  }
}

// Waits until every agent is at rest (not running, nothing queued, no turn), answering any
// permission left pending by a dead client with deny so its turn ends; fails after `timeoutMs`.
export async function settleAgents(anyUrl, agents, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (const agent of agents) {
    for (;;) {
      if (Date.now() > deadline) fail(`${agent} did not settle`);
      const r = await call(anyUrl(), 'GET', `/v1/agents/${agent}`, undefined, 5000);
      if (r.status === 200 && r.json.status !== 'running' && r.json.status !== 'permission' &&
          r.json.queue.length === 0 && !r.json.activeTurn)
        break;
      for (const p of (r.json && r.json.permissions) || [])
        await call(anyUrl(), 'POST', `/v1/agents/${agent}/permissions/${p.requestId}`,
                   { decision: 'deny' }, 5000);
      await sleep(200);
    }
  }
}

// Waits until each agent's follower (`followed`: agent -> seen, absent for an agent without
// one) has seen as many events as readLog(agent) holds, or `timeoutMs` went by (checkAgentLog
// then says what is missing).
export async function waitForFollowers(agents, followed, readLog, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (const agent of agents) {
    const seen = followed.get(agent);
    if (!seen) continue;
    const tail = (await readLog(agent)).length;
    while (seen.length < tail && Date.now() < until) await sleep(100);
  }
}
