// The daemon's wire shapes, from the OpenAPI document (src/generated/openapi.ts, made by
// `npm run generate` from docs/openapi.yaml). Request bodies are loosened where the generator
// makes a member with a default required (`whileRunning`).
import type { components, paths } from './generated/openapi.js';

export type { components, paths };
type S = components['schemas'];

export type AgentSnapshot = S['AgentSnapshot'];
export type QueuedPrompt = S['QueuedPrompt'];
export type PendingPermission = S['PendingPermission'];
export type Usage = S['Usage'];
export type Choice = S['Choice'];
export type SlashCommand = S['SlashCommand'];
export type AgentStatus = AgentSnapshot['status'];
export type AgentConfig = S['AgentConfig'];
export type AgentList = S['AgentList'];
export type Capabilities = S['Capabilities'];
export type SendReply = S['SendReply'];
export type SendOutcome = SendReply['outcome'];
export type PermissionReply = S['PermissionReply'];
export type TimelinePage = S['TimelinePage'];
export type TimelineItem = S['TimelineItem'];
export type SearchResult = S['SearchResult'];
export type SearchHit = S['SearchHit'];
export type Catalog = S['Catalog'];
export type CatalogAgent = S['CatalogAgent'];
export type ImportSource = S['ImportSource'];
export type ImportList = S['ImportList'];
export type ImportTranscript = S['ImportTranscript'];
export type ImportResult = S['ImportResult'];
export type AttachmentInput = S['AttachmentInput'];
export type Attachment = S['Attachment'];
export type Worktree = S['Worktree'];
export type Diff = S['Diff'];
export type DiffFile = S['DiffFile'];
export type GitAction = GitActionResult['action'];
export type GitActionOutcome = GitActionResult['outcome'];
// `noFastForward` has a default, so the generator makes it required; every member is optional.
export type GitActionBody = Partial<S['GitActionBody']>;
export type GitActionResult = S['GitActionResult'];
export type AgentTemplate = S['AgentTemplate'];
// `timezone` and `missed` have defaults, so the generator makes them required; they are optional.
export type ScheduleDefinition = Omit<S['ScheduleDefinition'], 'timezone' | 'missed'> &
  Partial<Pick<S['ScheduleDefinition'], 'timezone' | 'missed'>>;
export type MissedPolicy = S['ScheduleDefinition']['missed'];
export type Schedule = S['Schedule'];
export type ScheduleDetail = S['ScheduleDetail'];
export type ScheduleFiring = S['ScheduleFiring'];
export type ScheduleFiringOutcome = ScheduleFiring['outcome'];
export type WhoAmI = S['WhoAmI'];
export type Device = S['Device'];
export type Pairing = S['Pairing'];
export type PairedDevice = S['PairedDevice'];
export type NotificationSettings = S['NotificationSettings'];
export type NotificationSettingsState = S['NotificationSettingsState'];
export type VapidKey = S['VapidKey'];
export type EventKind = S['EventKind'];
export type ErrorBody = S['Error'];

export type WhileRunning = 'queue' | 'interrupt' | 'steer';

// What `send` takes: the prompt; the client message id is made when absent.
export interface SendRequest {
  text?: string;
  clientMessageId?: string;
  whileRunning?: WhileRunning;
  attachments?: AttachmentInput[];
}

// One envelope of the session log (docs/event-log-format.md). `kind` is one of EventKind for
// this version of the daemon; a later one may add kinds, so it is typed as a string too.
export interface EventEnvelope {
  v: number;
  session: string;
  epoch: number;
  seq: number;
  time: number;
  kind: EventKind | (string & {});
  turn?: string;
  firstSeq?: number;
  payload: Record<string, any>;
}

export type TimelineDirection = 'tail' | 'before' | 'after';

export interface TimelineQuery {
  direction?: TimelineDirection;
  cursor?: string;
  limit?: number;
  maxBytes?: number;
}
