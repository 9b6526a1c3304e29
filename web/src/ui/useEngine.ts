import { useEffect, useReducer } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';

// Renders counted for the benchmark (web/bench/measure.mjs reads them per animation frame).
export const renderStats = { app: 0, list: 0 };

// Every UI update scheduled for the next animation frame runs in one callback, so the state
// changes they make are rendered in one pass (Preact batches them): one render per frame.
const pending = new Set<() => void>();
let frameHandle = 0;

// Runs `fn` at the next animation frame; returns a cancel function.
export function onNextFrame(fn: () => void): () => void {
  const once = () => fn();
  pending.add(once);
  if (!frameHandle)
    frameHandle = requestAnimationFrame(() => {
      frameHandle = 0;
      const fns = [...pending];
      pending.clear();
      for (const f of fns) f();
    });
  return () => pending.delete(once);
}

// Something a component re-renders on: a count of its changes, and their listeners.
export interface Changing {
  readonly version: number;
  subscribe(fn: () => void): () => void;
}

// Re-renders on the changes of `source`, at most once per animation frame with `perFrame`. A
// change made between the render and the effect that subscribes (a refused first connection is
// that fast) is caught up at once rather than lost.
export function useChanges(source: Changing, perFrame: boolean): void {
  const [, tick] = useReducer((n: number) => n + 1, 0);
  const rendered = source.version;
  useEffect(() => {
    let cancel: (() => void) | null = null;
    const changed = () => {
      if (!perFrame) return tick(0);
      if (cancel) return;
      cancel = onNextFrame(() => {
        cancel = null;
        tick(0);
      });
    };
    const unsub = source.subscribe(changed);
    if (source.version !== rendered) changed();
    return () => {
      unsub();
      cancel?.();
    };
  }, [source]);
}

// Re-renders on engine changes, at most once per animation frame.
export function useEngine(engine: SyncEngine): void {
  useChanges(engine, true);
}
