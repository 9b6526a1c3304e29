// Cursors are "EPOCH:SEQ" (the app protocol, snapshots, timeline pages); Durable Stream offsets
// are the same position as "EEEEEEEEEEEEEEEE_SSSSSSSSSSSSSSSS" (16 zero-padded digits each).
// Both name a position "after this event". Cursors compare numerically, never as strings.
export interface Cursor {
  epoch: number;
  seq: number;
}

export function parseCursor(text: string): Cursor {
  const m = /^(\d+)[:_](\d+)$/.exec(text);
  if (!m) throw new Error(`malformed cursor ${JSON.stringify(text)}`);
  return { epoch: Number(m[1]), seq: Number(m[2]) };
}

export function formatCursor(c: Cursor): string {
  return `${c.epoch}:${c.seq}`;
}

export function compareCursors(a: Cursor, b: Cursor): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.seq - b.seq;
}

/** The Durable Stream offset of a cursor ("1:19" -> "0000000000000001_0000000000000019"). */
export function cursorToOffset(c: Cursor | string): string {
  const x = typeof c === 'string' ? parseCursor(c) : c;
  return `${String(x.epoch).padStart(16, '0')}_${String(x.seq).padStart(16, '0')}`;
}

/** The cursor of a Durable Stream offset the daemon sent. */
export function offsetToCursor(offset: string): string {
  return formatCursor(parseCursor(offset));
}

/** The position of an event. */
export function eventCursor(e: { epoch: number; seq: number }): Cursor {
  return { epoch: e.epoch, seq: e.seq };
}
