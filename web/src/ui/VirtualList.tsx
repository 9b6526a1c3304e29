// A virtualized vertical list: rows absolutely positioned from measured heights (estimated until
// measured), only those near the viewport rendered. Sticks to the bottom while the user is at
// the bottom; keeps the first visible row in place when older rows are prepended; asks for
// older rows when scrolled near the top.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';

const ESTIMATE = 64;
const OVERSCAN_PX = 800;

export interface VirtualListProps<T> {
  items: T[];
  keyOf: (item: T) => string;
  render: (item: T) => ComponentChildren;
  onNearTop?: () => void;
  testId?: string;
}

export function VirtualList<T>({ items, keyOf, render, onNearTop, testId }: VirtualListProps<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const nodes = useRef(new Map<string, HTMLElement>());
  const [, setMeasureTick] = useState(0);
  const [view, setView] = useState({ top: 0, height: 600 });
  const atBottom = useRef(true);
  const anchor = useRef<{ key: string; delta: number } | null>(null);

  const keys = useMemo(() => items.map(keyOf), [items, keyOf]);
  const offsets = new Array<number>(keys.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < keys.length; i++) offsets[i + 1] = offsets[i] + (heights.current.get(keys[i]) ?? ESTIMATE);
  const total = offsets[keys.length];

  // Visible range by binary search over the offsets.
  const lowerBound = (y: number) => {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offsets[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const first = lowerBound(Math.max(0, view.top - OVERSCAN_PX));
  const last = Math.min(keys.length, lowerBound(view.top + view.height + OVERSCAN_PX) + 1);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    let changed = false;
    for (const [key, node] of nodes.current) {
      const h = node.offsetHeight;
      if (h > 0 && heights.current.get(key) !== h) {
        heights.current.set(key, h);
        changed = true;
      }
    }
    if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    } else if (anchor.current) {
      const i = keys.indexOf(anchor.current.key);
      if (i >= 0) {
        const want = offsets[i] - anchor.current.delta;
        if (Math.abs(el.scrollTop - want) > 1) el.scrollTop = want;
      }
    }
    if (changed) setMeasureTick((n) => n + 1);
  });

  const onScroll = () => {
    const el = scroller.current!;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    const i = lowerBound(el.scrollTop);
    anchor.current = i < keys.length ? { key: keys[i], delta: offsets[i] - el.scrollTop } : null;
    setView({ top: el.scrollTop, height: el.clientHeight });
    if (el.scrollTop < 200 && onNearTop) onNearTop();
  };

  useLayoutEffect(() => {
    const el = scroller.current!;
    setView({ top: el.scrollTop, height: el.clientHeight });
    const ro = new ResizeObserver(() => setView({ top: el.scrollTop, height: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const rendered: ComponentChildren[] = [];
  nodes.current.clear();
  for (let i = first; i < last; i++) {
    const key = keys[i];
    rendered.push(
      <div
        key={key}
        class="vrow"
        style={{ top: `${offsets[i]}px` }}
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
      <div class="vcontent" style={{ height: `${total}px` }}>
        {rendered}
      </div>
    </div>
  );
}
