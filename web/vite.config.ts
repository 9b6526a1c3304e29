import { defineConfig } from 'vite';
import { CLIENT_ALIAS } from './client_alias';
import { pwa } from './pwa/plugin';

// `npm run dev` / `vite preview` proxy /ws to a daemon (AGENTSTREAM_URL, default the serve
// default); start that daemon with --allow-origin for the dev server's origin.
const daemon = process.env.AGENTSTREAM_URL ?? 'http://127.0.0.1:7600';

export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { alias: CLIENT_ALIAS },
  plugins: [pwa()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 400 },
  server: { proxy: { '/ws': { target: daemon, ws: true }, '/v1': { target: daemon } } },
  preview: { proxy: { '/ws': { target: daemon, ws: true }, '/v1': { target: daemon } } },
  test: { include: ['tests/**/*.test.ts'], environment: 'node', testTimeout: 60000 },
} as any);
