// Sorted, merged inclusive seq ranges ([[first, last], ...]) as items carry in sourceSeqRanges.
import type { SeqRanges } from './types';

export function rangesHas(ranges: SeqRanges, seq: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ranges[mid];
    if (seq < a) hi = mid - 1;
    else if (seq > b) lo = mid + 1;
    else return true;
  }
  return false;
}

// Adds one seq, keeping the ranges sorted and merged. Returns a new array.
export function rangesAdd(ranges: SeqRanges, seq: number): SeqRanges {
  if (rangesHas(ranges, seq)) return ranges;
  const out: SeqRanges = [];
  let placed = false;
  for (const [a, b] of ranges) {
    if (!placed && seq < a) {
      out.push([seq, seq]);
      placed = true;
    }
    out.push([a, b]);
  }
  if (!placed) out.push([seq, seq]);
  const merged: SeqRanges = [];
  for (const r of out) {
    const last = merged[merged.length - 1];
    if (last && last[1] + 1 >= r[0]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

// True when every seq of `inner` is in `outer`.
export function rangesCover(outer: SeqRanges, inner: SeqRanges): boolean {
  for (const [a, b] of inner) {
    if (!outer.some(([x, y]) => x <= a && b <= y)) return false;
  }
  return true;
}

export function rangesCount(ranges: SeqRanges): number {
  return ranges.reduce((n, [a, b]) => n + (b - a + 1), 0);
}
