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
