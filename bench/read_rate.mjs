// Reads the first N events of a session as Durable Stream catch-up reads (`GET
// /v1/agents/ID/events?offset=...`, each answer one batch, parsed) and prints the rate: the
// daemon's log read speed as a client sees it, to compare `agentstream follow` with.
// Usage: node bench/read_rate.mjs URL AGENT_ID N
const [url, agent, want] = process.argv.slice(2);
let offset = '-1';
let n = 0;
const t0 = performance.now();
while (n < Number(want)) {
  const r = await fetch(`${url}/v1/agents/${agent}/events?offset=${offset}`);
  if (r.status !== 200) throw new Error(`read: ${r.status} ${await r.text()}`);
  const batch = await r.json();
  if (!batch.length) break;
  n += batch.length;
  offset = r.headers.get('stream-next-offset');
}
const s = (performance.now() - t0) / 1000;
console.log(`${n} events in ${s.toFixed(2)} s: ${Math.round(n / s)} events/s`);
