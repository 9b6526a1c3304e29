// A TLS-terminating proxy in front of a daemon, for the client's end-to-end test (https URLs):
//   node tls_proxy.mjs CERT_PEM KEY_PEM LISTEN_PORT DAEMON_PORT
// Listens on 127.0.0.1:LISTEN_PORT, prints "listening", and pipes each connection's plaintext to
// 127.0.0.1:DAEMON_PORT and back.
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

const [certFile, keyFile, listenPort, daemonPort] = process.argv.slice(2);
const options = { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) };
const server = tls.createServer(options, (client) => {
  const daemon = net.connect(Number(daemonPort), '127.0.0.1');
  const end = () => {
    client.destroy();
    daemon.destroy();
  };
  for (const socket of [client, daemon]) {
    socket.on('error', end);
    socket.on('close', end);
  }
  client.pipe(daemon);
  daemon.pipe(client);
});
server.on('tlsClientError', () => {});  // a refused handshake is the client's business
server.listen(Number(listenPort), '127.0.0.1', () => console.log('listening'));
