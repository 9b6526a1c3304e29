// The page's icons, drawn here and written as PNG at build time (pwa/plugin.ts): no artwork
// from elsewhere. The drawing is an event log: three lines of decreasing length on the page's
// accent colour, the last one ending in a green "live" dot.
//
// PNG is written by hand (8-bit RGBA, one IDAT chunk, zlib from Node): signature, IHDR, IDAT,
// IEND, each chunk with its CRC-32.
import { crc32, deflateSync } from 'node:zlib';

export type IconShape = 'rounded' | 'full-bleed';

export interface IconSpec {
  file: string;
  size: number;
  // `rounded`: a rounded square with transparent corners (the "any" purpose icon);
  // `full-bleed`: the background fills the square (maskable and Apple touch icons, which the
  // platform crops itself).
  shape: IconShape;
}

export const ICONS: IconSpec[] = [
  { file: 'icon-192.png', size: 192, shape: 'rounded' },
  { file: 'icon-512.png', size: 512, shape: 'rounded' },
  { file: 'icon-maskable-512.png', size: 512, shape: 'full-bleed' },
  { file: 'apple-touch-icon.png', size: 180, shape: 'full-bleed' },
];

type Rgba = [number, number, number, number];

const TOP: Rgba = [0x3a, 0x6c, 0xe0, 255];
const BOTTOM: Rgba = [0x22, 0x47, 0xa8, 255];
const INK: Rgba = [255, 255, 255, 255];
const LIVE: Rgba = [0x7e, 0xe0, 0xa0, 255];

// Signed distance (negative inside) of a capsule from (x0, y) to (x1, y) of half-thickness r.
function capsule(x: number, y: number, x0: number, x1: number, cy: number, r: number): number {
  const cx = Math.min(Math.max(x, x0), x1);
  return Math.hypot(x - cx, y - cy) - r;
}

// Signed distance of the square [0,1]^2 with corners rounded by `r`.
function roundedSquare(x: number, y: number, r: number): number {
  const qx = Math.abs(x - 0.5) - (0.5 - r);
  const qy = Math.abs(y - 0.5) - (0.5 - r);
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

// The colour at a point of the unit square (x right, y down).
function colourAt(x: number, y: number, shape: IconShape): Rgba | null {
  if (shape === 'rounded' && roundedSquare(x, y, 0.22) > 0) return null;
  // Everything drawn stays within the maskable safe zone (a circle of radius 0.4).
  const lines: [number, number][] = [
    [0.28, 0.72],
    [0.28, 0.62],
    [0.28, 0.5],
  ];
  for (let i = 0; i < lines.length; i++) {
    const cy = 0.36 + i * 0.14;
    if (capsule(x, y, lines[i][0], lines[i][1], cy, 0.04) <= 0) return INK;
  }
  if (Math.hypot(x - 0.64, y - 0.64) <= 0.05) return LIVE;
  const t = y;
  return [0, 1, 2, 3].map((k) => Math.round(TOP[k] + (BOTTOM[k] - TOP[k]) * t)) as Rgba;
}

// RGBA pixels of an icon, each pixel the average of 4x4 samples (anti-aliased edges).
export function drawIcon(size: number, shape: IconShape): Uint8Array {
  const n = 4;
  const out = new Uint8Array(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const c = colourAt((px + (sx + 0.5) / n) / size, (py + (sy + 0.5) / n) / size, shape);
          if (!c) continue;
          r += c[0];
          g += c[1];
          b += c[2];
          a += c[3];
        }
      }
      const covered = a / 255; // samples covered, weighted by their alpha
      const o = (py * size + px) * 4;
      if (covered > 0) {
        out[o] = Math.round(r / covered);
        out[o + 1] = Math.round(g / covered);
        out[o + 2] = Math.round(b / covered);
      }
      out[o + 3] = Math.round(a / (n * n));
    }
  }
  return out;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

// A PNG file of `width` x `height` 8-bit RGBA pixels (row-major, 4 bytes a pixel).
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  if (rgba.length !== width * height * 4) throw new Error('encodePng: pixel buffer of the wrong size');
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type: RGBA
  // compression, filter and interlace methods: 0
  const raw = Buffer.alloc(height * (width * 4 + 1));
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * (width * 4 + 1) + 1);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

export function renderIcon(spec: IconSpec): Buffer {
  return encodePng(spec.size, spec.size, drawIcon(spec.size, spec.shape));
}
