// An HTTP proxy that holds every answer passing through it to docs/openapi.yaml: the end-to-end
// suites talk to the daemon through it (tests/lib/e2e.sh, contract_proxy), so the JSON the CLI
// and the other clients receive in them is checked against the document as the contract test's
// own scenarios are.
//
//   node contract_proxy.mjs --target-file FILE --failures FILE
//
// Listens on 127.0.0.1, on a port the kernel picks, and prints "listening PORT" once it accepts
// connections. Each request goes to 127.0.0.1:TARGET, TARGET being the port written in the target
// file, read anew for every request (a daemon restarted on another port keeps one address); while
// it is missing the request gets 502. Answers stream through unchanged. An answer of an operation
// the document has (other paths, such as the page's files and /ws, are only passed on) is checked
// once it is complete: its status must be listed, its headers and JSON body valid (strictly: a
// member the document does not name fails). Each problem is appended to the failures file as one
// line, "METHOD TEMPLATE STATUS: problem"; the suite fails when that file is not empty. Bodies are
// kept for the check up to 8 MiB (a longer one is passed on unchecked, and counted); a server-sent
// event stream is passed on unchecked. WebSocket upgrades are piped both ways. Runs until killed.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';

import {loadAnswers} from './answers.mjs';

const kMaxCheckedBytes = 8 << 20;

const args = process.argv.slice(2);
let targetFile = '';
let failuresFile = '';
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--target-file') targetFile = args[++i];
  else if (args[i] === '--failures') failuresFile = args[++i];
  else {
    console.error(`contract_proxy: unknown argument ${args[i]}`);
    process.exit(2);
  }
}
if (!targetFile || !failuresFile) {
  console.error('usage: node contract_proxy.mjs --target-file FILE --failures FILE');
  process.exit(2);
}

const {templateOf, problems} = await loadAnswers('contract proxy');

function targetPort() {
  try {
    return Number(fs.readFileSync(targetFile, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

const stats = {checked: 0, unchecked: 0};
function record(line) {
  fs.appendFileSync(failuresFile, line.replace(/\n/g, ' ') + '\n');
  console.log(`FAIL ${line}`);
}

const server = http.createServer((req, res) => {
  const port = targetPort();
  if (port === 0) {
    res.writeHead(502, {'content-type': 'text/plain'}).end('the daemon is down\n');
    return;
  }
  const template = templateOf(req.method, req.url);
  const upstream = http.request({host: '127.0.0.1', port, method: req.method, path: req.url,
                                 headers: req.headers, agent: false}, (answer) => {
    res.writeHead(answer.statusCode, answer.statusMessage, answer.rawHeaders);
    const type = (answer.headers['content-type'] ?? '').split(';')[0].trim();
    const keep = template !== null && type !== 'text/event-stream';
    const chunks = [];
    let size = 0;
    answer.on('data', (chunk) => {
      if (keep && size <= kMaxCheckedBytes) chunks.push(chunk);
      size += chunk.length;
      res.write(chunk);
    });
    answer.on('end', () => {
      res.end();
      if (!keep) return;
      if (size > kMaxCheckedBytes) return void stats.unchecked++;
      stats.checked++;
      const text = Buffer.concat(chunks).toString('utf8');
      const {problems: wrong} = problems(template, req.method, {status: answer.statusCode,
                                                                headers: answer.headers, text});
      for (const problem of wrong) record(`${req.method} ${template} ${answer.statusCode}: ${problem}`);
    });
    answer.on('error', () => res.destroy());
  });
  upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  req.pipe(upstream);
  res.on('close', () => upstream.destroy());
});

// A WebSocket (or any other) upgrade: the request head is replayed upstream, then bytes both ways.
server.on('upgrade', (req, socket, head) => {
  const port = targetPort();
  if (port === 0) return void socket.destroy();
  const upstream = net.connect(port, '127.0.0.1', () => {
    let lines = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      lines += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
    upstream.write(lines + '\r\n');
    if (head.length) upstream.write(head);
    socket.pipe(upstream).pipe(socket);
  });
  const end = () => {
    socket.destroy();
    upstream.destroy();
  };
  upstream.on('error', end);
  socket.on('error', end);
  upstream.on('close', end);
  socket.on('close', end);
});

process.on('SIGTERM', () => {
  console.log(`checked ${stats.checked} answers, ${stats.unchecked} over 8 MiB unchecked`);
  process.exit(0);
});
server.keepAliveTimeout = 120000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
