// A TCP port on HOST in front of the Unix socket SOCKET, as a process of its own: for a test that
// runs it inside a network namespace (`ip netns exec NS node tcp_bridge.mjs HOST SOCKET`), where
// the test's own process cannot listen. Prints "listening on PORT", then forwards until killed.
import { CuttableProxy } from './daemons.mjs';

const [host, socket] = process.argv.slice(2);
if (!host || !socket) {
  console.error('usage: node tcp_bridge.mjs HOST SOCKET');
  process.exit(2);
}
const proxy = await new CuttableProxy({ path: socket }).listen(host);
console.log(`listening on ${proxy.port}`);
