// A link that can go silent, for the partition tests (tests/chaos/): a veth pair from the host
// into a network namespace of the test's own, with a TCP bridge there (tcp_bridge.mjs) to a Unix
// socket. Clients reach the socket at `${nsAddress}:${port}`; taking `nsEnd` down inside the
// namespace drops every packet with no reset and no FIN, as a partition or a dead host does.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bridgeScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tcp_bridge.mjs');
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

// Makes the link (removed when `env` closes) and starts its bridge to `socketPath`; resolves with
// the bridge's port. `hostAddress` and `nsAddress` are the two ends of a /30.
export async function openSilentLink(env, { ns, hostEnd, nsEnd, hostAddress, nsAddress, socketPath }) {
  env.atClose(() => {
    try {
      ip('link', 'del', hostEnd);
    } catch {}
    try {
      ip('netns', 'del', ns);
    } catch {}
  });
  ip('netns', 'add', ns);
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd);
  ip('link', 'set', nsEnd, 'netns', ns);
  ip('addr', 'add', `${hostAddress}/30`, 'dev', hostEnd);
  ip('link', 'set', hostEnd, 'up');
  ip('-n', ns, 'addr', 'add', `${nsAddress}/30`, 'dev', nsEnd);
  ip('-n', ns, 'link', 'set', nsEnd, 'up');
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  const bridge = spawn('ip', ['netns', 'exec', ns, process.execPath, bridgeScript, nsAddress, socketPath],
                       { stdio: ['ignore', 'pipe', 'inherit'] });
  env.track(bridge);
  return new Promise((resolve, reject) => {
    let seen = '';
    bridge.stdout.on('data', (chunk) => {
      seen += chunk;
      const m = seen.match(/listening on (\d+)/);
      if (m) resolve(Number(m[1]));
    });
    bridge.on('exit', (code) => reject(new Error(`the bridge in ${ns} exited (${code})`)));
  });
}
