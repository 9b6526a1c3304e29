// The service worker (served as /sw.js, scope /; built by pwa/plugin.ts). docs/web.md, "The
// service worker", says what it does:
// * install: precaches the app shell of this build (index.html, the hashed assets, the icons and
//   the manifest), the list compiled in as __PRECACHE__; activate: deletes the caches of older
//   builds and takes control of open pages at once.
// * navigations: the network first; when it fails or gives no answer within NAVIGATION_TIMEOUT_MS
//   the cached index.html (the page then shows the last known agents, marked stale).
// * precached files: from the cache first. Anything else (the API under /v1, /ws, /healthz,
//   /metrics, /mcp, other origins, every method but GET) is not touched and never cached.
// * push: shows the daemon's notification (src/sw/push.ts), at most once per agent and cursor;
//   a click focuses an open page on the agent, or opens one.
import { isNewer, noticeTitle, parsePush } from './push';

declare const self: ServiceWorkerGlobalScope;
declare const __PRECACHE__: string[];
declare const __VERSION__: string;

const SHELL_PREFIX = 'agentstream-shell-';
const SHELL_CACHE = `${SHELL_PREFIX}${__VERSION__}`;
const SHELL = '/index.html';
const PRECACHED = new Set(__PRECACHE__);
const NAVIGATION_TIMEOUT_MS = 3000;

// The last cursor shown per agent, as entries of a cache of its own (it survives the worker's
// restarts and updates); at most MAX_SHOWN_AGENTS agents, the oldest entry dropped first.
const SHOWN_CACHE = 'agentstream-push-shown';
const MAX_SHOWN_AGENTS = 500;

const NEVER = ['/v1', '/ws', '/healthz', '/metrics', '/mcp'];

function untouched(pathname: string): boolean {
  return NEVER.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL_CACHE);
      // `reload`: from the daemon, not from the browser's HTTP cache.
      await cache.addAll(__PRECACHE__.map((url) => new Request(url, { cache: 'reload' })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(SHELL_PREFIX) && name !== SHELL_CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

async function navigate(request: Request): Promise<Response> {
  const network = fetch(request);
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), NAVIGATION_TIMEOUT_MS));
  try {
    const response = await Promise.race([network, timeout]);
    if (response) return response;
  } catch {
    // offline or the daemon unreachable: the shell below
  }
  const shell = await caches.match(SHELL, { cacheName: SHELL_CACHE });
  return shell ?? network;
}

async function cacheFirst(request: Request): Promise<Response> {
  const hit = await caches.match(request, { cacheName: SHELL_CACHE, ignoreSearch: true });
  return hit ?? fetch(request);
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || untouched(url.pathname)) return;
  if (request.mode === 'navigate') event.respondWith(navigate(request));
  else if (PRECACHED.has(url.pathname)) event.respondWith(cacheFirst(request));
});

const shownKey = (agent: string) => `/__shown/${encodeURIComponent(agent)}`;

async function lastShown(cache: Cache, agent: string): Promise<string | null> {
  const hit = await cache.match(shownKey(agent));
  return hit ? hit.text() : null;
}

async function remember(cache: Cache, agent: string, cursor: string): Promise<void> {
  await cache.delete(shownKey(agent)); // re-inserted last: the keys stay oldest first
  await cache.put(shownKey(agent), new Response(cursor));
  const keys = await cache.keys();
  for (const stale of keys.slice(0, Math.max(0, keys.length - MAX_SHOWN_AGENTS))) await cache.delete(stale);
}

self.addEventListener('push', (event) => {
  event.waitUntil(
    (async () => {
      const notice = parsePush(event.data?.text());
      if (!notice) return;
      const cache = await caches.open(SHOWN_CACHE);
      if (!isNewer(await lastShown(cache, notice.agent), notice.cursor)) return;
      await remember(cache, notice.agent, notice.cursor);
      await self.registration.showNotification(noticeTitle(notice), {
        body: notice.body,
        tag: notice.agent, // a newer notice of the agent replaces the older one
        icon: '/icon-192.png',
        data: { url: notice.url, agent: notice.agent, cursor: notice.cursor },
      });
    })(),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const data = event.notification.data ?? {};
  const url = typeof data.url === 'string' && data.url.startsWith('/#') ? data.url : '/';
  event.waitUntil(
    (async () => {
      const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const page = pages.find((c) => new URL(c.url).origin === self.location.origin);
      if (page) {
        // The page opens the agent itself (main.tsx listens), keeping its state and connection.
        page.postMessage({ type: 'open', url });
        await page.focus();
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
