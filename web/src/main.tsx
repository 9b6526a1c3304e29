import { render } from 'preact';
import { clearAgents, loadAgents, saveAgents } from './core/agent_cache';
import { DEVICE_TOKEN_KEY, exchangePairing, parseFragment, pickCredential, type Credential } from './core/auth';
import { DaemonHttp } from './core/daemon_http';
import { SeenCursors } from './core/inbox';
import { SyncEngine } from './core/sync';
import { WsTransport } from './core/transport';
import { App } from './ui/App';
import { installNotifications, setPushActive } from './ui/notify';
import { PageSession } from './ui/session';
import { renderStats } from './ui/useEngine';
import './ui/style.css';

// How often the last known agents are written to this browser's storage at most.
const AGENT_CACHE_WRITE_MS = 2000;
const narrow = window.matchMedia('(max-width: 720px)');

// The page is served by the daemon: the WebSocket is on the same host. The token: `?token=`
// (kept for this tab), else this browser's device token (docs/web.md, "Pairing and devices").
async function boot(): Promise<void> {
  const fragment = parseFragment(location.hash);
  let credential: Credential = pickCredential(location.search, sessionStorage, localStorage);
  let pairing: { ok: boolean; message: string } | null = null;
  if (fragment.pair) {
    // The code never stays in the address bar or the history.
    history.replaceState(null, '', location.pathname + location.search);
    const app = document.getElementById('app')!;
    app.textContent = 'Pairing this device…';
    const r = await exchangePairing(location.origin, fragment.pair);
    if (r.ok) {
      localStorage.setItem(DEVICE_TOKEN_KEY, r.token);
      credential = { kind: 'device', token: r.token };
      pairing = { ok: true, message: `This browser is now paired as “${r.device?.name ?? 'device'}”.` };
    } else {
      pairing = { ok: false, message: r.message };
    }
    app.textContent = '';
  }
  start(credential, pairing);
}

function start(credential: Credential, pairing: { ok: boolean; message: string } | null): void {
  const token = credential.token;
  const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
  const transport = new WsTransport(wsUrl);
  const engine = new SyncEngine(transport, { deviceType: () => (narrow.matches ? 'phone' : 'desktop') });
  const http = new DaemonHttp(location.origin, token);
  const session = new PageSession(credential, pairing);

  // A device token the daemon refuses (revoked) is removed from this browser, with the agents it
  // showed, and the page says so; its socket stops reconnecting.
  if (credential.kind === 'device') {
    http.onUnauthorized = () => {
      if (session.revoked) return;
      localStorage.removeItem(DEVICE_TOKEN_KEY);
      clearAgents(localStorage);
      transport.stop();
      session.set({ revoked: true });
    };
    const check = () => void http.run((api) => api.whoami());
    check();
    transport.onConnection((connected) => connected || check());
    transport.onConnectFailure(check);
  }

  // Whether this browser holds a push subscription (then the service worker notifies).
  if ('serviceWorker' in navigator && typeof PushManager !== 'undefined')
    void navigator.serviceWorker.ready
      .then((r) => r.pushManager.getSubscription())
      .then((s) => setPushActive(!!s))
      .catch(() => {});
  installNotifications(engine);
  transport.onConnectFailure(() => {
    if (!session.unreachable) session.set({ unreachable: true });
  });
  transport.onConnection((connected) => {
    if (connected && session.unreachable) session.set({ unreachable: false });
  });
  document.addEventListener('visibilitychange', () => engine.setTabVisible(document.visibilityState === 'visible'));
  engine.setTabVisible(document.visibilityState === 'visible');
  transport.start();

  // The last known agents, for a start without the daemon.
  const cached = loadAgents(localStorage);
  let writeTimer: ReturnType<typeof setTimeout> | null = null;
  engine.subscribe(() => {
    if (writeTimer || !engine.connected || engine.confirmedMs === null || session.revoked) return;
    writeTimer = setTimeout(() => {
      writeTimer = null;
      if (engine.connected && !session.revoked) saveAgents(localStorage, engine.agents.values(), Date.now());
    }, AGENT_CACHE_WRITE_MS);
  });

  registerServiceWorker(session);

  // Hooks for end-to-end tests and benchmarks (read-only views, render counts, a network cut).
  (window as any).agentstream = { engine, transport, renderStats };

  render(
    <App
      engine={engine}
      transport={transport}
      http={http}
      session={session}
      cached={cached}
      seenStore={new SeenCursors(localStorage)}
    />,
    document.getElementById('app')!,
  );
}

// The service worker (src/sw/sw.ts) is part of the built page only. A notification's tap in a
// page already open arrives as a message: the page opens the agent through its fragment.
function registerServiceWorker(session: PageSession): void {
  if (!('serviceWorker' in navigator) || !(import.meta as any).env?.PROD) return;
  // The first worker taking control is no news; a later one is a new build.
  let controlled = !!navigator.serviceWorker.controller;
  // After the page has loaded: its install (fetching the shell) does not compete with the first
  // render.
  const register = () => void navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {});
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (controlled) session.set({ updated: true });
    controlled = true;
  });
  navigator.serviceWorker.addEventListener('message', (e) => {
    if (e.data?.type === 'open' && typeof e.data.url === 'string' && e.data.url.startsWith('/#'))
      location.hash = e.data.url.slice(1);
  });
}

void boot();
