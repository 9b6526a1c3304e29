// ws_probe.mjs URL: opens a WebSocket to URL (ws:// or wss://; the token in `?token=`) with Node's
// own client (run with `node --experimental-websocket`; NODE_EXTRA_CA_CERTS names a CA to trust),
// sends the app protocol's hello (docs/protocol.md, "WebSocket") and prints the server_info reply
// on one line. Exit 0 on a reply, 1 when the connection is refused or closes first, or nothing
// arrives within 10 s.
const url = process.argv[2];
if (!url || typeof WebSocket !== 'function') {
  console.error('usage: node --experimental-websocket ws_probe.mjs URL');
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error('ws_probe: no reply within 10 s');
  process.exit(1);
}, 10000);
const ws = new WebSocket(url);
ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', id: 'probe' }));
ws.onmessage = (event) => {
  const message = JSON.parse(String(event.data));
  if (message.id !== 'probe') return;
  console.log(JSON.stringify(message));
  clearTimeout(timer);
  ws.close();
  process.exit(message.type === 'server_info' ? 0 : 1);
};
ws.onerror = () => {
  console.error('ws_probe: the connection failed');
  process.exit(1);
};
ws.onclose = (event) => {
  console.error(`ws_probe: closed (${event.code}) before a reply`);
  process.exit(1);
};
