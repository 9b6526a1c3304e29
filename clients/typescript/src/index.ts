// @agentstream/client: a client of the agentstream daemon (docs/protocol.md).
export { AgentstreamError, isAgentstreamError } from './errors.js';
export { AgentstreamHttp, errorFrom } from './http.js';
export type { CallOptions, EventsRead, FetchLike, HttpClientOptions, JsonAnswer, ReadEventsOptions } from './http.js';
export { EventFollower, followEvents, readAllEvents } from './stream.js';
export type { FollowItem, FollowOptions } from './stream.js';
export { catchUpPages } from './catch_up.js';
export type { PageBounds, PageFetch } from './catch_up.js';
export { CONNECTION_DEFAULTS, Connection } from './connection.js';
export type { ConnectionOptions, WebSocketConstructor, WebSocketLike } from './connection.js';
export { loadNodeWebSocket } from './node_websocket.js';
export { AgentReplica, ReplicaClient } from './replica.js';
export type { EventsBatch, ReplicaOptions, ReplicaState, ResetNotice, SubscribeOptions } from './replica.js';
export { Submissions } from './submissions.js';
export type {
  SubmissionChannel,
  SubmissionReply,
  SubmissionState,
  SubmissionStatus,
  SubmissionsOptions,
  SubmissionTimer,
} from './submissions.js';
export { compareCursors, cursorToOffset, eventCursor, formatCursor, offsetToCursor, parseCursor } from './cursor.js';
export type { Cursor } from './cursor.js';
export { Backoff, newId } from './backoff.js';
export type * from './types.js';
