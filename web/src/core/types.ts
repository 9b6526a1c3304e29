// The page's own types. The daemon's wire shapes (AgentSnapshot, EventEnvelope, TimelinePage,
// SendReply, ...) are the client package's (`@agentstream/client`, generated from
// docs/openapi.yaml); only what the page adds to them is here.
import type { TimelineItem, TimelinePage } from '@agentstream/client';

// The agent settings a client changes (`mode.set`, `model.set`, `thinking.set`).
export type AgentOption = 'mode' | 'model' | 'thinking';

export type SeqRanges = [number, number][];

// A projected item (docs/timeline.md, "Projection"): the members every TimelineItem has, and
// the body of its kind, which the page's projection (project.ts) and rows read and write freely.
export type Item = Pick<TimelineItem, 'key' | 'turn' | 'seqStart' | 'seqEnd' | 'sourceSeqRanges' | 'collapsed'> & {
  kind: string;
  [field: string]: any;
};

// A timeline page as the page holds it: its items are Items.
export type Page = Omit<TimelinePage, 'items'> & { items: Item[] };
