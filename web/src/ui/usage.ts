import type { Row } from '../core/timeline';

// Token counts and cost of usage items (docs/timeline.md, "usage"), one turn's or several's.
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  costUsd: number | null; // null when no item reported a cost
  turns: number;
}

export function sumUsage(rows: Row[]): UsageTotals {
  const total: UsageTotals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, costUsd: null, turns: 0 };
  for (const { item } of rows) {
    if (item.kind !== 'usage') continue;
    total.turns += 1;
    total.inputTokens += Number(item.inputTokens) || 0;
    total.outputTokens += Number(item.outputTokens) || 0;
    total.cacheReadTokens += Number(item.cacheReadTokens) || 0;
    if (typeof item.costUsd === 'number') total.costUsd = (total.costUsd ?? 0) + item.costUsd;
  }
  return total;
}

const count = new Intl.NumberFormat('en');

export function formatUsage(u: {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  costUsd?: number | null;
}): string {
  const parts = [`${count.format(u.inputTokens)} in`, `${count.format(u.outputTokens)} out`];
  if (u.cacheReadTokens) parts.push(`${count.format(u.cacheReadTokens)} cached`);
  if (typeof u.costUsd === 'number') parts.push(`$${u.costUsd.toFixed(4)}`);
  return parts.join(' · ');
}
