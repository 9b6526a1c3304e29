// Cursors are "EPOCH:SEQ"; they compare numerically (epoch, then seq), never as strings.

export interface Cursor {
  epoch: number;
  seq: number;
}

export function parseCursor(text: string): Cursor {
  const m = /^(\d+):(\d+)$/.exec(text);
  if (!m) throw new Error(`malformed cursor ${JSON.stringify(text)}`);
  return { epoch: Number(m[1]), seq: Number(m[2]) };
}

export function formatCursor(c: Cursor): string {
  return `${c.epoch}:${c.seq}`;
}

export function compareCursors(a: Cursor, b: Cursor): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.seq - b.seq;
}
