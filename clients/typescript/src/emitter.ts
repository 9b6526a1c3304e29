// A set of listeners of one kind of value, shared by the connection and the replica.

export type Listener<T> = (value: T) => void;

/**
 * Calls every listener in the order they were added. A listener that throws does not stop the
 * others: its error is thrown again from a microtask (reported, never swallowed).
 */
export class Emitter<T> {
  private fns = new Set<Listener<T>>();

  /** Adds `fn`; the function returned removes it. */
  on(fn: Listener<T>): () => void {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  }

  emit(v: T): void {
    for (const fn of [...this.fns]) {
      try {
        fn(v);
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }
}
