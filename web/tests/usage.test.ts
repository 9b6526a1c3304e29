import { describe, expect, it } from 'vitest';
import { foldEvent, itemKeyOf } from '../src/core/project';
import type { Row } from '../src/core/timeline';
import { formatUsage, sumUsage } from '../src/ui/usage';

const usageEvent = (seq: number, payload: Record<string, unknown>) =>
  ({ v: 1, session: 's', epoch: 1, seq, time: 0, kind: 'usage', payload }) as any;

describe('usage items (docs/timeline.md: one per usage event, as the daemon projects them)', () => {
  it('a usage event is an item of its own, keyed by its seq', () => {
    const e = usageEvent(7, { inputTokens: 120, outputTokens: 30, cacheReadTokens: 7, cacheWriteTokens: 0, costUsd: 0.25 });
    expect(itemKeyOf(e)).toEqual({ kind: 'usage', key: '#7' });
    const item = foldEvent(undefined, e)!;
    expect(item).toMatchObject({ kind: 'usage', key: '#7', inputTokens: 120, outputTokens: 30, costUsd: 0.25 });
  });

  it('sums the rows that are usage items, with a cost only when one was reported', () => {
    const rows = [
      { item: foldEvent(undefined, usageEvent(1, { inputTokens: 1000, outputTokens: 20 }))! },
      { item: { kind: 'notice', key: '#2', seqStart: 2, seqEnd: 2, sourceSeqRanges: [], collapsed: false } },
      { item: foldEvent(undefined, usageEvent(3, { inputTokens: 500, outputTokens: 5, costUsd: 0.5 }))! },
    ] as Row[];
    const total = sumUsage(rows);
    expect(total).toEqual({ inputTokens: 1500, outputTokens: 25, cacheReadTokens: 0, costUsd: 0.5, turns: 2 });
    expect(formatUsage(total)).toBe('1,500 in · 25 out · $0.5000');
    expect(sumUsage(rows.slice(0, 2)).costUsd).toBeNull();
    expect(formatUsage(sumUsage([]))).toBe('0 in · 0 out');
  });
});
