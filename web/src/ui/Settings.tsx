// "Devices and notifications" (docs/web.md, "Pairing and devices"): the paired devices
// (`GET /v1/devices`) with rename and revoke, a pairing link for a new device (the owner only),
// and this device's notification settings (`/v1/devices/{its id}/notifications`) with "Enable push",
// which subscribes the service worker's pushManager with the daemon's VAPID key.
import { useEffect, useState } from 'preact/hooks';
import type { Device, NotificationSettingsState, WhoAmI } from '@agentstream/client';
import type { DaemonHttp } from '../core/daemon_http';
import { relativeTime } from './Inbox';
import { setPushActive } from './notify';

const KINDS: [keyof NotificationSettingsState['kinds'], string][] = [
  ['permission', 'Waiting for permission'],
  ['turnFailed', 'A turn failed'],
  ['turnFinished', 'A turn finished'],
  ['autonomousFinished', 'Autonomous work finished'],
  ['queueWaiting', 'Queued messages waiting'],
];

function base64UrlToBytes(text: string): Uint8Array {
  const b64 = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=');
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export function SettingsOverlay({ http, onClose }: { http: DaemonHttp; onClose(): void }) {
  const [who, setWho] = useState<WhoAmI | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    void http.run((api) => api.whoami()).then((r) => (r.ok ? setWho(r.value) : setError(r.message)));
  }, [http]);
  return (
    <div
      class="overlay"
      role="dialog"
      aria-modal="true"
      aria-label="Devices and notifications"
      data-testid="settings"
      onClick={onClose}
    >
      <div class="overlay-box settings" onClick={(e) => e.stopPropagation()}>
        <h2>Devices and notifications</h2>
        {error ? <div class="error-text">{error}</div> : null}
        {who ? (
          <div class="muted" data-testid="whoami">
            This browser is {who.principal === 'owner' ? 'the owner' : `the paired device “${who.device.name}”`}.
          </div>
        ) : null}
        <Devices http={http} owner={who?.principal === 'owner'} />
        {who?.principal === 'owner' ? <PairDevice http={http} /> : null}
        {who?.principal === 'device' ? <Notifications http={http} deviceId={who.device.id} /> : null}
        <button type="button" onClick={onClose} data-testid="settings-close">
          Close
        </button>
      </div>
    </div>
  );
}

// The owner manages every device; a device renames or revokes only itself.
function Devices({ http, owner }: { http: DaemonHttp; owner: boolean }) {
  const [devices, setDevices] = useState<Device[] | null>(null);
  const [error, setError] = useState('');
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [confirming, setConfirming] = useState('');
  const load = () => void http.run((api) => api.listDevices()).then((r) => (r.ok ? setDevices(r.value) : setError(r.message)));
  useEffect(load, [http]);
  const act = async (p: ReturnType<DaemonHttp['run']>) => {
    const r = await p;
    if (!r.ok) setError(r.message);
    else setError('');
    setRenaming(null);
    setConfirming('');
    load();
  };
  return (
    <section class="settings-section" data-testid="devices">
      <h3>Devices</h3>
      {error ? <div class="error-text">{error}</div> : null}
      {devices === null && !error ? <div class="muted">Loading…</div> : null}
      {devices?.length === 0 ? <div class="muted">No device is paired.</div> : null}
      <ul class="device-list">
        {devices?.map((d) => (
          <li key={d.id} class="device" data-testid="device" data-device={d.id} data-revoked={d.revoked ? 'true' : 'false'}>
            {renaming?.id === d.id ? (
              <form
                class="device-rename"
                onSubmit={(e) => {
                  e.preventDefault();
                  void act(http.run((api) => api.renameDevice(d.id, renaming.name.trim())));
                }}
              >
                <input
                  value={renaming.name}
                  maxLength={64}
                  onInput={(e) => setRenaming({ id: d.id, name: (e.target as HTMLInputElement).value })}
                  data-testid="device-name-input"
                  autofocus
                />
                <button type="submit" class="primary" data-testid="device-save">
                  Save
                </button>
                <button type="button" onClick={() => setRenaming(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <span class="device-name" data-testid="device-name">
                {d.name}
                {d.current ? <span class="muted"> (this browser)</span> : null}
              </span>
            )}
            <span class="muted">
              {d.revoked
                ? `revoked ${relativeTime(d.revokedMs)}`
                : `last seen ${d.lastSeenMs ? relativeTime(d.lastSeenMs) : 'never'}`}{' '}
              · paired {relativeTime(d.createdMs)}
              {d.userAgent ? ` · ${d.userAgent.slice(0, 80)}` : ''}
            </span>
            {!d.revoked && renaming?.id !== d.id && (owner || d.current) ? (
              <span class="item-actions">
                <button type="button" onClick={() => setRenaming({ id: d.id, name: d.name })} data-testid="device-rename">
                  Rename
                </button>
                {confirming === d.id ? (
                  <button
                    type="button"
                    class="danger"
                    onClick={() => void act(http.run((api) => api.revokeDevice(d.id)))}
                    data-testid="device-revoke-confirm"
                  >
                    Revoke: sure?
                  </button>
                ) : (
                  <button type="button" onClick={() => setConfirming(d.id)} data-testid="device-revoke">
                    Revoke
                  </button>
                )}
              </span>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

function PairDevice({ http }: { http: DaemonHttp }) {
  const [name, setName] = useState('phone');
  const [link, setLink] = useState<{ url: string; expiresMs: number } | null>(null);
  const [error, setError] = useState('');
  return (
    <section class="settings-section" data-testid="pair">
      <h3>Pair a device</h3>
      <form
        class="pair-form"
        onSubmit={(e) => {
          e.preventDefault();
          void http
            .run((api) => api.createPairing({ name: name.trim() || 'device' }))
            .then((r) => {
              setError(r.ok ? '' : r.message);
              setLink(r.ok ? r.value : null);
            });
        }}
      >
        <label>
          Name <input value={name} maxLength={64} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="primary" data-testid="pair-create">
          Create a pairing link
        </button>
      </form>
      {error ? <div class="error-text">{error}</div> : null}
      {link ? (
        <div class="pair-link">
          Open this link on the device (once, before {new Date(link.expiresMs).toLocaleTimeString()}):
          <code data-testid="pair-url">{link.url}</code>
        </div>
      ) : null}
    </section>
  );
}

// This device's settings, by its own id (the owner's view of it is the same resource).
function Notifications({ http, deviceId }: { http: DaemonHttp; deviceId: string }) {
  const [settings, setSettings] = useState<NotificationSettingsState | null>(null);
  const [status, setStatus] = useState('');
  useEffect(() => {
    void http.run((api) => api.notificationSettings(deviceId)).then((r) => (r.ok ? setSettings(r.value) : setStatus(r.message)));
  }, [http, deviceId]);
  if (!settings) return <section class="settings-section">{status || 'Loading notification settings…'}</section>;
  const save = async (next: NotificationSettingsState) => {
    setSettings(next);
    const r = await http.run((api) => api.setNotificationSettings(deviceId, next));
    setStatus(r.ok ? 'Saved.' : r.message);
    if (r.ok && r.value) setSettings(r.value);
  };
  const enablePush = async () => {
    try {
      if (!('serviceWorker' in navigator) || typeof PushManager === 'undefined') throw new Error('this browser has no push');
      if ((await Notification.requestPermission()) !== 'granted') throw new Error('notifications are not allowed for this page');
      const key = await http.run((api) => api.vapidKey());
      if (!key.ok) throw new Error(key.message);
      const reg = await navigator.serviceWorker.ready;
      const sub = await reg.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64UrlToBytes(key.value.publicKey) as BufferSource,
      });
      const j = sub.toJSON();
      await save({ ...settings, webPush: { endpoint: j.endpoint!, keys: { p256dh: j.keys!.p256dh, auth: j.keys!.auth } } });
      setPushActive(true);
    } catch (err) {
      setStatus(`Push not enabled: ${String((err as Error)?.message ?? err)}`);
    }
  };
  // Off: the browser's subscription is dropped too, and the page notifies again while hidden.
  const disablePush = async () => {
    try {
      const sub = await (await navigator.serviceWorker?.getRegistration())?.pushManager.getSubscription();
      await sub?.unsubscribe();
    } catch {
      // no worker or no subscription: nothing to drop
    }
    setPushActive(false);
    await save({ ...settings, webPush: null });
  };
  return (
    <section class="settings-section" data-testid="notifications">
      <h3>Notifications on this device</h3>
      <div>
        {settings.webPush ? 'Push is on for this browser. ' : 'Push is off. '}
        <button type="button" class="primary" onClick={() => void enablePush()} data-testid="enable-push">
          {settings.webPush ? 'Subscribe again' : 'Enable push'}
        </button>
        {settings.webPush ? (
          <button type="button" onClick={() => void disablePush()} data-testid="disable-push">
            Turn push off
          </button>
        ) : null}
      </div>
      {KINDS.map(([kind, label]) => (
        <label class="check" key={kind}>
          <input
            type="checkbox"
            checked={settings.kinds?.[kind] !== false}
            onChange={(e) =>
              void save({ ...settings, kinds: { ...settings.kinds, [kind]: (e.target as HTMLInputElement).checked } })
            }
            data-testid={`kind-${kind}`}
          />
          {label}
        </label>
      ))}
      <label class="check">
        <input
          type="checkbox"
          checked={settings.previews}
          onChange={(e) => void save({ ...settings, previews: (e.target as HTMLInputElement).checked })}
          data-testid="previews"
        />
        Show a preview of the agent's answer (else only that something happened)
      </label>
      {status ? (
        <div class="muted" data-testid="notifications-status">
          {status}
        </div>
      ) : null}
    </section>
  );
}
