// A TCP proxy for the end-to-end tests (tests/lib/e2e.sh starts it: start_proxy):
//   node tcp_proxy.mjs [--tls CERT_PEM KEY_PEM] --target-file FILE
// Listens on 127.0.0.1, on a port the kernel picks, and prints "listening PORT" once it accepts
// connections. Each connection is piped to 127.0.0.1:TARGET and back, TARGET being the port
// written in FILE, read anew for every connection: the proxy gives a server that restarts on
// another port one address that outlives it. While FILE is missing or empty (the server is down)
// a connection is closed at once, as a stopped server's would be refused. With --tls it
// terminates TLS with that certificate and pipes the plaintext. Runs until it is killed.
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

const args = process.argv.slice(2);
let certFile = '';
let keyFile = '';
let targetFile = '';
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--tls') {
    certFile = args[++i];
    keyFile = args[++i];
  } else if (args[i] === '--target-file') {
    targetFile = args[++i];
  } else {
    console.error(`tcp_proxy: unknown argument ${args[i]}`);
    process.exit(2);
  }
}
if (!targetFile || (certFile && !keyFile)) {
  console.error('usage: node tcp_proxy.mjs [--tls CERT_PEM KEY_PEM] --target-file FILE');
  process.exit(2);
}

function targetPort() {
  try {
    return Number(fs.readFileSync(targetFile, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

function pipe(client) {
  const port = targetPort();
  if (port === 0) {
    client.destroy();
    return;
  }
  const upstream = net.connect(port, '127.0.0.1');
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) {
    socket.on('error', end);
    socket.on('close', end);
  }
  client.pipe(upstream);
  upstream.pipe(client);
}

const server = certFile
  ? tls.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }, pipe)
  : net.createServer(pipe);
server.on('tlsClientError', () => {});  // a refused handshake is the client's business
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
