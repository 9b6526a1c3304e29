// Builds a long session through a running daemon (scripted provider): queues prompts until the
// session holds at least TARGET events. Usage: node gen_session.mjs URL TARGET
// Prints the agent id. Each scripted turn is about 17 events. Start the daemon with
// `--scripted-chunk-ms 0`: the pauses between streamed chunks, not the log, bound the rate
// (100,000 events: 731 s with the default 15 ms pauses, about a minute without).
import { daemonApi } from './api.mjs';

const [url, targetText] = process.argv.slice(2);
const target = Number(targetText ?? 100000);
const api = daemonApi(url);
const agent = await api('POST', '/v1/agents', { provider: 'scripted', cwd: '/tmp', title: 'bench: 100k events' });
// Prompts kept queued (each is a few bytes of the daemon's 4 MiB queue bound).
const QUEUED = 32;
const seqOf = (a) => Number(a.cursor.split(':')[1]);
let n = 0;
const started = Date.now();
let lastLog = started;
for (;;) {
  const snap = await api('GET', `/v1/agents/${agent.id}`);
  if (seqOf(snap) >= target) break;
  // Keep prompts queued so the agent never idles between turns.
  if (snap.queue.length < QUEUED / 2) {
    const sends = [];
    for (let i = 0; i < QUEUED - snap.queue.length; i++)
      sends.push(
        api('POST', `/v1/agents/${agent.id}/messages`, {
          text: `prompt ${++n}`,
          clientMessageId: `bench-${n}`,
          whileRunning: 'queue',
        }),
      );
    await Promise.all(sends);
  } else {
    await new Promise((r) => setTimeout(r, 20));
  }
  if (Date.now() - lastLog > 10000 && (lastLog = Date.now()))
    process.stderr.write(`${seqOf(snap)} events after ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}
// Let the last turn end so the session is idle.
for (;;) {
  const snap = await api('GET', `/v1/agents/${agent.id}`);
  if (snap.status === 'idle' && snap.queue.length === 0) {
    process.stderr.write(`${seqOf(snap)} events in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    break;
  }
  await new Promise((r) => setTimeout(r, 200));
}
console.log(agent.id);
