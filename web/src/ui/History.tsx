// The history around a search hit, fetched from the daemon (SyncEngine.historyAround) and shown
// in place of the pane's live timeline until "Back to live": the replica, its subscription and
// its live rows are not touched. The item holding the hit's event is scrolled to and marked.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';
import type { Item } from '../core/types';
import { TimelineRow, type RowActions } from './Rows';

function holds(item: Item, seq: number): boolean {
  return item.sourceSeqRanges.some(([a, b]) => a <= seq && seq <= b) || (item.seqStart <= seq && seq <= item.seqEnd);
}

export function History({
  engine,
  agentId,
  cursor,
  actions,
  onBack,
}: {
  engine: SyncEngine;
  agentId: string;
  cursor: string;
  actions: RowActions;
  onBack(): void;
}) {
  const [state, setState] = useState<{ items: Item[]; reset: boolean } | null>(null);
  const [error, setError] = useState('');
  const box = useRef<HTMLDivElement>(null);
  const [epoch, seq] = cursor.split(':').map(Number);
  useEffect(() => {
    setState(null);
    engine
      .historyAround(agentId, cursor)
      .then(setState)
      .catch((err) => setError(String(err?.message ?? err)));
  }, [engine, agentId, cursor]);
  const hit = state && !state.reset ? (state.items.filter((i) => holds(i, seq)).at(-1) ?? null) : null;
  useLayoutEffect(() => {
    box.current?.querySelector('.history-hit')?.scrollIntoView({ block: 'center' });
  }, [hit?.key]);
  return (
    <div class="history" data-testid="history" data-cursor={cursor}>
      <div class="history-bar">
        <span class="muted">History around {cursor}</span>
        <button type="button" class="primary" onClick={onBack} data-testid="back-to-live">
          Back to live
        </button>
      </div>
      {error ? <div class="error-text">{error}</div> : null}
      {state?.reset ? (
        <div class="sub-status">This match is in an earlier epoch (before a rewind); showing the current one.</div>
      ) : null}
      <div class="history-rows" ref={box}>
        {state
          ? state.items.map((item) => (
              <div
                key={item.key}
                class={`vrow ${item === hit ? 'history-hit' : ''}`}
                data-testid={item === hit ? 'history-hit' : undefined}
              >
                <TimelineRow row={{ id: `h:${item.key}`, epoch, item }} actions={actions} label={null} />
              </div>
            ))
          : !error && <div class="muted">loading…</div>}
      </div>
    </div>
  );
}
