import { useEffect, useReducer } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';

// Re-renders on engine changes, at most once per animation frame.
export function useEngine(engine: SyncEngine): void {
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    let frame = 0;
    const unsub = engine.subscribe(() => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        tick(0);
      });
    });
    return () => {
      unsub();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [engine]);
}
