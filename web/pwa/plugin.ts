// The installable app's build step (docs/web.md, "Install on a phone"), a Vite plugin of our
// own, run after Vite has written the page:
// * the icons (pwa/icons.ts) and `manifest.webmanifest`;
// * `sw.js`, the service worker (src/sw/sw.ts bundled by esbuild as one classic script), with
//   the list of files it precaches (index.html and every file of this build except source maps
//   and itself) and a version, the hash of those files' bytes: any change to the build changes
//   sw.js, which is how the browser learns of a new build.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'vite';
import { CLIENT_ALIAS } from '../client_alias';
import { ICONS, renderIcon } from './icons';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export const THEME_COLOR = '#2f5fd0';
export const BACKGROUND_COLOR = '#15161a';

export const MANIFEST = {
  name: 'agentstream',
  short_name: 'agentstream',
  description: 'Your coding agents: what needs you, live conversations, permissions in one tap.',
  id: '/',
  start_url: '/',
  scope: '/',
  display: 'standalone',
  orientation: 'any',
  theme_color: THEME_COLOR,
  background_color: BACKGROUND_COLOR,
  icons: [
    { src: '/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
    { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
    { src: '/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
  ],
};

// Bundles the service worker with its precache list and version compiled in.
async function buildServiceWorker(precache: string[], version: string): Promise<string> {
  const out = await build({
    entryPoints: [path.join(HERE, '../src/sw/sw.ts')],
    bundle: true,
    alias: CLIENT_ALIAS,
    write: false,
    format: 'iife',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    define: { __PRECACHE__: JSON.stringify(precache), __VERSION__: JSON.stringify(version) },
  });
  return out.outputFiles[0].text;
}

export function pwa(): Plugin {
  return {
    name: 'agentstream-pwa',
    apply: 'build',
    enforce: 'post',
    async generateBundle(_options, bundle) {
      for (const icon of ICONS) this.emitFile({ type: 'asset', fileName: icon.file, source: renderIcon(icon) });
      this.emitFile({ type: 'asset', fileName: 'manifest.webmanifest', source: JSON.stringify(MANIFEST, null, 2) + '\n' });
      const hash = createHash('sha256');
      const precache: string[] = [];
      for (const name of Object.keys(bundle).sort()) {
        if (name.endsWith('.map') || name === 'sw.js') continue;
        const file = bundle[name];
        precache.push(`/${name}`);
        hash.update(name).update(file.type === 'chunk' ? file.code : file.source);
      }
      const version = hash.digest('hex').slice(0, 16);
      this.emitFile({ type: 'asset', fileName: 'sw.js', source: await buildServiceWorker(precache, version) });
    },
  };
}
