// Search (docs/protocol.md "Search"): words over every session, or over the focused agent only;
// a hit opens its agent with the history around it (History.tsx).
import { useRef, useState } from 'preact/hooks';
import type { SyncEngine } from '../core/sync';
import type { SearchHit } from '@agentstream/client';

export const SEARCH_LIMIT = 20;

// The snippet's matches (between U+0002 and U+0003) as <mark>, the rest as text: never HTML.
export function Snippet({ text }: { text: string }) {
  // The daemon marks matches with these two control characters, on purpose.
  // eslint-disable-next-line no-control-regex
  const parts = text.split(/(\u0002[^\u0003]*\u0003)/);
  return (
    <span class="snippet">
      {parts.map((p, i) =>
        // eslint-disable-next-line no-control-regex
        p.startsWith('\u0002') ? <mark key={i}>{p.slice(1, -1)}</mark> : p.replace(/[\u0002\u0003]/g, ''),
      )}
    </span>
  );
}

const KIND_LABEL: Record<string, string> = {
  'user.message': 'you',
  'assistant.message': 'assistant',
  'tool.call': 'tool',
  'tool.output': 'output',
};

export function SearchBox({
  engine,
  focusedAgent,
  titleOf,
  onOpen,
}: {
  engine: SyncEngine;
  focusedAgent: string | null;
  titleOf(agent: string): string;
  onOpen(hit: SearchHit): void;
}) {
  const [q, setQ] = useState('');
  const [scope, setScope] = useState<'all' | 'agent'>('all');
  const [result, setResult] = useState<{ hits: SearchHit[]; truncated: boolean } | null>(null);
  const [error, setError] = useState('');
  const seq = useRef(0);
  const run = async () => {
    if (!q.trim()) return;
    const n = ++seq.current;
    setError('');
    try {
      const r = await engine.search(q.trim(), scope === 'agent' && focusedAgent ? focusedAgent : undefined, SEARCH_LIMIT);
      if (n === seq.current) setResult(r);
    } catch (err) {
      if (n === seq.current) {
        setResult(null);
        setError(String((err as Error)?.message ?? err));
      }
    }
  };
  return (
    <div class="search" data-testid="search">
      <form
        class="search-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <input
          type="search"
          placeholder="Search history"
          aria-label="Search history"
          value={q}
          onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              setQ('');
              setResult(null);
            }
          }}
          data-testid="search-input"
        />
        <select
          value={scope}
          aria-label="Search in"
          onChange={(e) => setScope((e.target as HTMLSelectElement).value as 'all' | 'agent')}
          data-testid="search-scope"
        >
          <option value="all">all agents</option>
          <option value="agent" disabled={!focusedAgent}>
            this agent
          </option>
        </select>
      </form>
      {error ? <div class="error-text">{error}</div> : null}
      {result ? (
        <ul class="search-hits" data-testid="search-hits">
          {result.hits.length === 0 ? <li class="muted">No match.</li> : null}
          {result.hits.map((h) => (
            <li key={`${h.agent}@${h.cursor}`}>
              <button
                type="button"
                class="hit"
                onClick={() => onOpen(h)}
                data-testid="search-hit"
                data-agent={h.agent}
                data-cursor={h.cursor}
              >
                <span class="muted">
                  {titleOf(h.agent)} · {KIND_LABEL[h.kind] ?? h.kind}
                </span>
                <Snippet text={h.snippet} />
              </button>
            </li>
          ))}
          {result.truncated ? <li class="muted">More matches: add words to narrow it.</li> : null}
        </ul>
      ) : null}
    </div>
  );
}
