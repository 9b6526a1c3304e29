// The `ws` package's WebSocket, for Node 20 (which has no global one). Only ReplicaClient names
// this loader, so a bundle of Connection alone (the web page's) holds no `import('ws')`.
import type { WebSocketConstructor } from './connection.js';

/** Loads `ws` and returns its WebSocket constructor; rejects when `ws` is not installed. */
export async function loadNodeWebSocket(): Promise<WebSocketConstructor> {
  const mod: any = await import('ws');
  return (mod.WebSocket ?? mod.default) as WebSocketConstructor;
}
