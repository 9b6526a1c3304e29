// The notification tests' push side: web-push-testing (tests/peers, pinned) as the push service
// and the browser stand-in (it mints subscriptions and decrypts what it receives with its own
// aes128gcm implementation, checking the VAPID token against the subscription's key), behind a
// front proxy the test steers: it records every request (time, path, headers), and answers as
// told (forward, 429 with Retry-After, or hold the request unanswered). Plus an ntfy receiver.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';

const peers = new URL('../peers/', import.meta.url);
const require = createRequire(new URL('package.json', peers));

export function webPushTestingInstalled() {
  return fs.existsSync(new URL('node_modules/web-push-testing/src/server.js', peers));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

// Pairs a device through the daemon at `url` (`owner`: the owner's headers): {id, token, auth}
// (auth: the headers of the device's requests). Exits the test as skipped (77) when the daemon
// has no pairing routes.
export async function pairDevice(url, name = 'phone', owner = {}) {
  const post = (target, body) => fetch(url + target, {
    method: 'POST', headers: { 'content-type': 'application/json', ...owner },
    body: JSON.stringify(body), signal: AbortSignal.timeout(15000) });
  const pairing = await post('/v1/pairings', { name });
  if (pairing.status === 404) {  // a build without the pairing routes (docs/remote.md)
    console.error('SKIP: this daemon has no POST /v1/pairings');
    process.exit(77);
  }
  if (pairing.status !== 201) throw new Error(`pairing: ${pairing.status} ${await pairing.text()}`);
  const { code } = await pairing.json();
  const exchanged = await post('/v1/pairings/exchange', { code });
  if (exchanged.status !== 201) throw new Error(`exchange: ${exchanged.status} ${await exchanged.text()}`);
  const { token, device } = await exchanged.json();
  return { id: device.id, token, auth: { authorization: `Bearer ${token}` } };
}

// The Topic the daemon sends for an agent: base64url of SHA-256 of its id, cut to 32 characters.
export function topicFor(agent) {
  return crypto.createHash('sha256').update(agent).digest('base64url').slice(0, 32);
}

export class PushService {
  static async start() {
    const s = new PushService();
    const TestingServer = require('web-push-testing/src/server.js');
    const { PushApiModel } = require('web-push-testing/src/PushApiModel.js');
    s.model = new PushApiModel();
    s.servicePort = await freePort();
    s.service = new TestingServer(s.model, s.servicePort);
    s.service.startServer();
    // When each message was decrypted (the benchmark's receive time): web-push-testing's
    // http_ece, wrapped.
    s.arrivals = [];  // {at, payload}
    const ece = createRequire(require.resolve('web-push-testing/src/PushApiModel.js'))('http_ece');
    const decrypt = ece.decrypt;
    ece.decrypt = (...args) => {
      const out = decrypt(...args);
      try {
        s.arrivals.push({ at: Date.now(), payload: JSON.parse(out.toString('utf8')) });
      } catch {}
      return out;
    };
    s.requests = [];  // {at, path, headers, answered}
    s.plan = [];      // what to do with the next requests: 'forward' (default), 'hold', {status, retryAfter}
    s.held = [];
    s.proxy = http.createServer((req, res) => s.onRequest(req, res));
    s.proxyPort = await listen(s.proxy);
    for (let i = 0; i < 250; ++i) {
      const up = await fetch(`http://127.0.0.1:${s.servicePort}/status`, { method: 'POST' })
        .then((r) => r.ok, () => false);
      if (up) return s;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('web-push-testing did not start');
  }

  async onRequest(req, res) {
    const body = await readBody(req);
    const record = { at: Date.now(), path: req.url, headers: req.headers, answered: 0 };
    this.requests.push(record);
    const step = this.plan.length > 0 ? this.plan.shift() : 'forward';
    if (step === 'hold') {
      // Never answered: the request's socket is dropped by release() (the push service "did
      // not receive" it).
      this.held.push(res);
      return;
    }
    if (typeof step === 'object') {
      record.answered = step.status;
      res.writeHead(step.status, step.retryAfter ? { 'retry-after': step.retryAfter } : {});
      res.end('{"reason":"test"}');
      return;
    }
    const up = http.request({ host: '127.0.0.1', port: this.servicePort, method: req.method,
                              path: req.url, headers: { ...req.headers, host: `localhost:${this.servicePort}` } },
                            (ur) => {
                              record.answered = ur.statusCode;
                              res.writeHead(ur.statusCode, ur.headers);
                              ur.pipe(res);
                            });
    up.on('error', () => res.destroy());
    up.end(body);
  }

  // Drops the held requests without an answer.
  release() {
    for (const res of this.held) res.socket?.destroy();
    this.held = [];
  }

  // A browser subscription for `applicationServerKey`, its endpoint pointing at the proxy.
  async subscribe(applicationServerKey) {
    const r = await fetch(`http://127.0.0.1:${this.servicePort}/subscribe`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userVisibleOnly: 'true', applicationServerKey }),
    });
    const { data } = await r.json();
    if (!data) throw new Error('web-push-testing refused the subscription');
    const endpoint = data.endpoint.replace(/^http:\/\/localhost:\d+/, `http://127.0.0.1:${this.proxyPort}`);
    return { clientHash: data.clientHash,
             json: { endpoint, keys: { p256dh: data.keys.p256dh, auth: data.keys.auth } } };
  }

  // What the subscription received, decrypted by web-push-testing: parsed payloads, in order.
  messages(clientHash) {
    return this.model.getNotifications({ clientHash }).messages.map((m) => JSON.parse(m));
  }

  expire(clientHash) {
    this.model.expireSubscription(clientHash);
  }

  close() {
    this.release();
    this.proxy.closeAllConnections?.();
    this.proxy.close();
    this.service._server?.closeAllConnections?.();
    this.service._server?.close();
  }
}

// An ntfy server stand-in: records each publish (path, headers, body) and answers 200.
export class NtfyReceiver {
  static async start() {
    const r = new NtfyReceiver();
    r.published = [];
    r.server = http.createServer(async (req, res) => {
      const body = await readBody(req);
      r.published.push({ method: req.method, path: req.url, headers: req.headers,
                         body: body.toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"x"}');
    });
    r.port = await listen(r.server);
    r.url = `http://127.0.0.1:${r.port}`;
    return r;
  }
  close() {
    this.server.closeAllConnections?.();
    this.server.close();
  }
}
