// A virtualized vertical list: only rows near the viewport are rendered, in normal flow between
// two spacers sized from measured heights (estimated until measured). Sticks to the bottom while
// the user is at the bottom; keeps the first visible row in place when older rows are prepended;
// asks for older rows when scrolled near the top.
//
// Streaming costs one render and one layout per frame: a rendered row that grows (the streaming
// head) moves the rows after it by itself, so a new height is recorded without rendering again;
// scroll events render only when the range of rows to show changes, at most once per frame.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { onNextFrame, renderStats } from './useEngine';

const ESTIMATE = 64;
const OVERSCAN_PX = 800;
// Rows closer than this to the top of the list ask for older history.
const NEAR_TOP_PX = 200;
const AT_BOTTOM_PX = 24;

export interface VirtualListProps<T> {
  items: T[];
  keyOf: (item: T) => string;
  render: (item: T) => ComponentChildren;
  onNearTop?: () => void;
  testId?: string;
}

// Prefix sums of the row heights (offsets[i] is where row i starts).
function offsetsOf(keys: string[], heights: Map<string, number>): number[] {
  const offsets = new Array<number>(keys.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < keys.length; i++) offsets[i + 1] = offsets[i] + (heights.get(keys[i]) ?? ESTIMATE);
  return offsets;
}

// The first row ending below `y`.
function lowerBound(offsets: number[], y: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid + 1] <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function rangeOf(offsets: number[], top: number, height: number): [number, number] {
  const n = offsets.length - 1;
  return [lowerBound(offsets, Math.max(0, top - OVERSCAN_PX)), Math.min(n, lowerBound(offsets, top + height + OVERSCAN_PX) + 1)];
}

export function VirtualList<T>({ items, keyOf, render, onNearTop, testId }: VirtualListProps<T>) {
  renderStats.list++;
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const nodes = useRef(new Map<string, HTMLElement>());
  const [, rerender] = useState(0);
  const view = useRef({ top: 0, height: 600 });
  const shown = useRef<{ keys: string[]; first: number; last: number }>({ keys: [], first: 0, last: 0 });
  const scheduled = useRef<(() => void) | null>(null);
  const atBottom = useRef(true);
  const anchor = useRef<{ key: string; delta: number } | null>(null);

  // This render computes the range from the current view: a render scheduled for it is moot.
  scheduled.current?.();
  scheduled.current = null;
  const keys = useMemo(() => items.map(keyOf), [items, keyOf]);
  const offsets = offsetsOf(keys, heights.current);
  const [first, last] = rangeOf(offsets, view.current.top, view.current.height);
  shown.current = { keys, first, last };

  // A render on the next frame if the rows to show changed (never twice in a frame).
  const scheduleIfRangeChanged = () => {
    const s = shown.current;
    const o = offsetsOf(s.keys, heights.current);
    const [f, l] = rangeOf(o, view.current.top, view.current.height);
    if ((f === s.first && l === s.last) || scheduled.current) return;
    scheduled.current = onNextFrame(() => {
      scheduled.current = null;
      rerender((n) => n + 1);
    });
  };

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    // Reads only (one layout), then at most one scroll write.
    for (const [key, node] of nodes.current) {
      const h = node.offsetHeight;
      if (h > 0) heights.current.set(key, h);
    }
    if (atBottom.current) {
      const bottom = el.scrollHeight - el.clientHeight;
      if (el.scrollTop !== bottom) el.scrollTop = bottom;
    } else if (anchor.current) {
      const i = keys.indexOf(anchor.current.key);
      if (i >= 0) {
        const want = offsetsOf(keys, heights.current)[i] - anchor.current.delta;
        if (Math.abs(el.scrollTop - want) > 1) el.scrollTop = want;
      }
    }
    view.current = { top: el.scrollTop, height: el.clientHeight };
    scheduleIfRangeChanged();
  });

  const onScroll = () => {
    const el = scroller.current!;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < AT_BOTTOM_PX;
    const s = shown.current;
    const o = offsetsOf(s.keys, heights.current);
    const i = lowerBound(o, el.scrollTop);
    anchor.current = i < s.keys.length ? { key: s.keys[i], delta: o[i] - el.scrollTop } : null;
    view.current = { top: el.scrollTop, height: el.clientHeight };
    scheduleIfRangeChanged();
    if (el.scrollTop < NEAR_TOP_PX && onNearTop) onNearTop();
  };

  useLayoutEffect(() => {
    const el = scroller.current!;
    const ro = new ResizeObserver(() => {
      view.current = { top: el.scrollTop, height: el.clientHeight };
      scheduleIfRangeChanged();
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      scheduled.current?.();
    };
  }, []);

  const rendered: ComponentChildren[] = [];
  nodes.current.clear();
  for (let i = first; i < last; i++) {
    const key = keys[i];
    rendered.push(
      <div
        key={key}
        class="vrow"
        ref={(el) => {
          if (el) nodes.current.set(key, el);
        }}
      >
        {render(items[i])}
      </div>,
    );
  }
  return (
    <div class="vscroll" ref={scroller} onScroll={onScroll} data-testid={testId}>
      <div class="vcontent">
        <div class="vspacer" style={{ height: `${offsets[first]}px` }} />
        {rendered}
        <div class="vspacer" style={{ height: `${offsets[keys.length] - offsets[last]}px` }} />
      </div>
    </div>
  );
}
