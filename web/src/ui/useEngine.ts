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

// Re-renders on engine changes, at most once per animation frame.
export function useEngine(engine: SyncEngine): void {
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    let cancel: (() => void) | null = null;
    const unsub = engine.subscribe(() => {
      if (cancel) return;
      cancel = onNextFrame(() => {
        cancel = null;
        tick(0);
      });
    });
    return () => {
      unsub();
      cancel?.();
    };
  }, [engine]);
}
