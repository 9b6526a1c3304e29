import { render } from 'preact';
import { DaemonHttp } from './core/daemon_http';
import { SyncEngine } from './core/sync';
import { WsTransport } from './core/transport';
import { App } from './ui/App';
import { installNotifications } from './ui/notify';
import { renderStats } from './ui/useEngine';
import './ui/style.css';

// The page is served by the daemon: the WebSocket is on the same host. A token given in the
// URL (?token=...) is kept for this tab and passed to /ws.
const params = new URLSearchParams(location.search);
const token = params.get('token') ?? sessionStorage.getItem('agentstream.token') ?? '';
if (params.get('token')) sessionStorage.setItem('agentstream.token', token);
const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;

const transport = new WsTransport(wsUrl);
const engine = new SyncEngine(transport);
installNotifications(engine);
document.addEventListener('visibilitychange', () => engine.setTabVisible(document.visibilityState === 'visible'));
engine.setTabVisible(document.visibilityState === 'visible');
transport.start();

// Hooks for end-to-end tests and benchmarks (read-only views, render counts, a network cut).
(window as any).agentstream = { engine, transport, renderStats };

const http = new DaemonHttp(location.origin, token);

render(<App engine={engine} transport={transport} http={http} />, document.getElementById('app')!);
