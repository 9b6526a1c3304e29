// Browser notifications while the tab is hidden: an agent finished, failed or asks for
// permission. Permission is asked once (on the first send), never again after a refusal. A
// browser subscribed to push (docs/web.md, "Pairing and devices") gets the daemon's
// notifications through its service worker instead, so the page shows none of its own.
import type { SyncEngine } from '../core/sync';

const ASKED_KEY = 'agentstream.notifications.asked';

// Whether this browser holds a push subscription: set at the start (main.tsx) and by "Enable
// push" / "Turn push off" (Settings.tsx).
let pushActive = false;
export function setPushActive(active: boolean): void {
  pushActive = active;
}

export function askNotificationPermissionOnce(): void {
  if (typeof Notification === 'undefined') return;
  if (Notification.permission !== 'default' || localStorage.getItem(ASKED_KEY)) return;
  localStorage.setItem(ASKED_KEY, '1');
  void Notification.requestPermission();
}

export function describeTransition(from: string | undefined, to: string): string | null {
  if (to === 'permission') return 'needs permission';
  if (to === 'error') return 'failed';
  if (from === 'running' && to === 'idle') return 'finished';
  return null;
}

export function installNotifications(engine: SyncEngine): void {
  engine.onStatusTransition(({ agent, from, to }) => {
    if (document.visibilityState !== 'hidden' || pushActive) return;
    const what = describeTransition(from, to);
    if (!what || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
    const title = agent.title || `${agent.provider} agent`;
    const n = new Notification(`${title} ${what}`, { body: agent.cwd, tag: `${agent.id}:${to}` });
    n.onclick = () => window.focus();
  });
}
