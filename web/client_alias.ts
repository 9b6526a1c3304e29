// The client package (clients/typescript, `@agentstream/client`) under the page: its cursors,
// wire types, ids, errors, every HTTP call and the WebSocket's socket layer (`Connection`); the
// page's sync engine and submission records are still its own (docs/web.md). The page builds
// the package from its source, so a fresh clone builds the page with no build of the package
// first; tsconfig.json's `paths` say the same to tsc. Vite (vite.config.ts) and the service
// worker's esbuild (pwa/plugin.ts) both resolve through this one table.
//
// `ws` is the package's WebSocket for Node 20, loaded only by ReplicaClient (which the page does
// not use) where there is no global WebSocket; a browser always has one, so the page maps it to a
// module that refuses to load (src/no_ws.ts) and no Node code can reach the bundle.
import { fileURLToPath } from 'node:url';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export const CLIENT_ALIAS: Record<string, string> = {
  '@agentstream/client': here('../clients/typescript/src/index.ts'),
  ws: here('./src/no_ws.ts'),
};
