// Wire shapes of the daemon's protocol (docs/protocol.md, docs/timeline.md).

export type AgentStatus = 'idle' | 'running' | 'permission' | 'error';

export interface AgentSnapshot {
  id: string;
  provider: string;
  cwd: string;
  title: string;
  model: string; // "" until known
  mode: string; // "" until known
  // The thinking option last set; "" is the runtime's default. Absent from an older daemon.
  thinking?: string;
  // What the agent's runtime offers, while it runs and has reported it; null otherwise, absent
  // from an older daemon.
  capabilities?: Capabilities | null;
  status: AgentStatus;
  activeTurn: string | null;
  cursor: string;
  queue: { clientMessageId: string; text: string }[];
  permissions: { requestId: string; callId?: string; toolName?: string }[];
  createdAt: number;
  forkedFrom: { agent: string; cursor: string } | null;
  loaded: boolean;
  closed: boolean;
  // Every usage report of the agent, summed by the daemon (docs/protocol.md); null for an agent
  // stored before the daemon kept totals, absent from an older daemon.
  usage?: {
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
    costUsd?: number | null;
  } | null;
}

// One choice of a runtime's list: `id` is what a client sends, `label` may be "" (show the id).
export interface Choice {
  id: string;
  label: string;
}

// A slash command the runtime understands (its name without the slash).
export interface SlashCommand {
  name: string;
  description: string;
}

// What an agent's runtime offers (the snapshot's `capabilities`, the payload of a
// `capabilities.changed` event); a list the runtime did not report is absent.
export interface Capabilities {
  modes?: Choice[];
  models?: Choice[];
  thinkingOptions?: Choice[];
  commands?: SlashCommand[];
}

// The agent settings a client changes (`mode.set`, `model.set`, `thinking.set`).
export type AgentOption = 'mode' | 'model' | 'thinking';

export interface Attachment {
  kind: string;
  mimeType: string;
  name?: string;
  uri?: string;
  data?: string;
}

export interface EventEnvelope {
  v: number;
  session: string;
  epoch: number;
  seq: number;
  time: number;
  kind: string;
  turn?: string;
  payload: Record<string, any>;
}

export type SeqRanges = [number, number][];

// A projected item (timeline::ItemToJson): common fields plus the body of its kind.
export interface Item {
  kind: string;
  key: string;
  turn?: string;
  seqStart: number;
  seqEnd: number;
  sourceSeqRanges: SeqRanges;
  collapsed: boolean;
  [field: string]: any;
}

export interface Page {
  epoch: number;
  tail: number;
  items: Item[];
  hasOlder: boolean;
  hasNewer: boolean;
  startCursor: string;
  endCursor: string;
  reset: boolean;
  bytes: number;
}

export interface SendReply {
  accepted: boolean;
  outcome: 'accepted' | 'queued' | 'duplicate' | 'rejected' | 'canceled';
  turnId?: string;
  cursor?: string;
  message?: string;
}

export type WhileRunning = 'queue' | 'interrupt' | 'steer';

// One hit of `search` (docs/protocol.md "Search"): the event its text begins at, and a snippet
// with every match between U+0002 and U+0003.
export interface SearchHit {
  agent: string;
  cursor: string;
  kind: string;
  snippet: string;
}
