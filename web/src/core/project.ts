// The client's projection of one live event into its item: the same keys and folding as the
// daemon's assembler (src/core/timeline/item.cc, assembler.cc), so a live item and the projected
// page item of the same key describe the same thing and reconcile by sourceSeqRanges.
import { rangesAdd, rangesHas } from './ranges';
import type { EventEnvelope } from '@agentstream/client';
import type { Item } from './types';

// Tool output is bounded before it reaches either path (docs/timeline.md); the client keeps the
// same bound when it appends live chunks.
export const MAX_TOOL_OUTPUT_CHARS = 64 * 1024;

export function itemKeyOf(e: EventEnvelope): { kind: string; key: string } | null {
  const p = e.payload ?? {};
  const unique = `#${e.seq}`;
  switch (e.kind) {
    case 'user.message':
      return { kind: 'user_message', key: unique };
    case 'assistant.message.start':
    case 'assistant.message.delta':
    case 'assistant.message.end':
      return { kind: 'assistant_message', key: `a:${p.messageId}` };
    case 'reasoning':
      return { kind: 'reasoning', key: `r:${p.messageId}` };
    case 'tool_call.start':
    case 'tool_call.output':
    case 'tool_call.end':
      return { kind: 'tool_call', key: `t:${p.callId}` };
    case 'permission.requested':
    case 'permission.resolved':
      return { kind: 'permission', key: `p:${p.requestId}` };
    case 'authorization.required':
    case 'authorization.completed':
      return { kind: 'authorization', key: `z:${p.requestId}` };
    case 'plan':
      return { kind: 'plan', key: `plan:${e.turn ?? ''}` };
    case 'error':
    case 'turn.failed':
      return { kind: 'error', key: unique };
    case 'notice':
    case 'workspace.action':
    case 'automation.fired':
      return { kind: 'notice', key: unique };
    case 'usage':
      return { kind: 'usage', key: unique };
    case 'subagent.event':
      return { kind: 'subagent', key: `s:${p.child}` };
    default:
      return null;
  }
}

function emptyItem(kind: string, key: string, e: EventEnvelope): Item {
  const item: Item = {
    kind,
    key,
    seqStart: e.seq,
    seqEnd: e.seq,
    sourceSeqRanges: [],
    collapsed: false,
  };
  if (e.turn) item.turn = e.turn;
  switch (kind) {
    case 'assistant_message':
      Object.assign(item, { messageId: '', text: '', started: false, finished: false });
      break;
    case 'reasoning':
      Object.assign(item, { messageId: '', text: '' });
      break;
    case 'tool_call':
      Object.assign(item, { callId: '', name: '', input: null, output: '', truncated: false, state: 'pending' });
      break;
    case 'permission':
      Object.assign(item, { requestId: '', title: '', input: null, options: [] });
      break;
    case 'subagent':
      Object.assign(item, { child: '', eventCount: 0, lastKind: '' });
      break;
    default:
      break;
  }
  return item;
}

// Files a git action's notice names; the rest are counted (src/core/event_text.cc).
const ACTION_FILES_NAMED = 10;

// The notice text of a `workspace.action` event (a git action, docs/workspaces.md), as the
// daemon's WorkspaceActionText writes it: "git commit committed 1a2b3c4d5e6f: Fix it", "git pr
// opened 1a2b3c4d5e6f into main https://github.com/o/r/pull/7".
export function workspaceActionText(p: Record<string, any>): string {
  let text = `git ${p.action} ${p.outcome}`;
  if (typeof p.commit === 'string') text += ` ${p.commit.slice(0, 12)}`;
  if (typeof p.target === 'string') text += `${p.action === 'push' ? ' to ' : ' into '}${p.target}`;
  if (typeof p.url === 'string') text += ` ${p.url}`;
  if (typeof p.message === 'string') text += `: ${p.message}`;
  const files: string[] = Array.isArray(p.files) ? p.files : [];
  files.slice(0, ACTION_FILES_NAMED).forEach((f, i) => (text += `${i === 0 ? ': ' : ', '}${f}`));
  if (files.length > ACTION_FILES_NAMED) text += ` and ${files.length - ACTION_FILES_NAMED} more`;
  return text;
}

// Whether a `workspace.action` did not do what was asked because git or gh would not (a
// conflicting merge, a refused push, a pull request gh did not open): a warning notice, as the
// daemon's WorkspaceActionRefused has it.
export function workspaceActionRefused(p: Record<string, any>): boolean {
  return p.outcome === 'conflict' || p.outcome === 'refused' || p.outcome === 'failed';
}

// The notice text of an `automation.fired` event (a trigger's delivery or a schedule's tick,
// docs/automation.md), as the daemon's AutomationFiredText writes it: "trigger issues: delivery
// 72d3162e (issues)", "schedule nightly: tick 2026-12-06T02:00:00Z".
export function automationFiredText(p: Record<string, any>): string {
  let text = `${p.source} ${p.id}: ${p.source === 'trigger' ? 'delivery' : 'tick'} ${p.key}`;
  if (typeof p.event === 'string') text += ` (${p.event})`;
  const missing: string[] = Array.isArray(p.missingFields) ? p.missingFields : [];
  missing.forEach((f, i) => (text += `${i === 0 ? '; missing fields: ' : ', '}${f}`));
  return text;
}

const ended = (state: string) => state === 'completed' || state === 'failed' || state === 'canceled';

// Folds event `e` into `item` (or a new item). Returns the item unchanged when it already holds
// this seq: a live event is applied at most once whatever path delivered it first.
export function foldEvent(item: Item | undefined, e: EventEnvelope): Item | undefined {
  const key = itemKeyOf(e);
  if (!key) return item;
  const base = item ?? emptyItem(key.kind, key.key, e);
  if (rangesHas(base.sourceSeqRanges, e.seq)) return base;
  const first = base.sourceSeqRanges.length === 0;
  const next: Item = {
    ...base,
    sourceSeqRanges: rangesAdd(base.sourceSeqRanges, e.seq),
    seqEnd: Math.max(base.seqEnd, e.seq),
    seqStart: Math.min(base.seqStart, e.seq),
    collapsed: !first || base.collapsed,
  };
  const p = e.payload ?? {};
  switch (e.kind) {
    case 'user.message':
      Object.assign(next, {
        messageId: p.messageId,
        clientMessageId: p.clientMessageId ?? '',
        text: p.text ?? '',
        attachments: p.attachments ?? [],
      });
      break;
    case 'assistant.message.start':
      next.messageId = p.messageId;
      next.started = true;
      if (p.parentMessageId) next.parentMessageId = p.parentMessageId;
      break;
    case 'assistant.message.delta':
      next.messageId = p.messageId;
      next.text = (next.text ?? '') + (p.text ?? '');
      break;
    case 'assistant.message.end':
      next.messageId = p.messageId;
      next.finished = true;
      if (p.stopReason) next.stopReason = p.stopReason;
      break;
    case 'reasoning':
      next.messageId = p.messageId;
      next.text = (next.text ?? '') + (p.text ?? '');
      break;
    case 'tool_call.start':
      Object.assign(next, { callId: p.callId, name: p.name, title: p.title, input: p.input });
      if (!ended(next.state)) next.state = 'running';
      break;
    case 'tool_call.output': {
      next.callId = p.callId;
      const out = (next.output ?? '') + (p.text ?? '');
      next.output = out.length > MAX_TOOL_OUTPUT_CHARS ? out.slice(0, MAX_TOOL_OUTPUT_CHARS) : out;
      next.truncated = next.truncated || !!p.truncated || out.length > MAX_TOOL_OUTPUT_CHARS;
      break;
    }
    case 'tool_call.end':
      next.callId = p.callId;
      next.state = p.status;
      next.error = p.error;
      if (p.output !== undefined) {
        next.output = p.output;
        next.truncated = !!p.truncated;
      }
      break;
    case 'permission.requested':
      Object.assign(next, {
        requestId: p.requestId,
        callId: p.callId,
        title: p.title,
        toolName: p.toolName,
        input: p.input,
        options: p.options ?? [],
      });
      break;
    case 'permission.resolved':
      Object.assign(next, { requestId: p.requestId, decision: p.decision, optionId: p.optionId, message: p.message });
      break;
    case 'authorization.required':
      Object.assign(next, { requestId: p.requestId, message: p.message, url: p.url });
      break;
    case 'authorization.completed':
      Object.assign(next, { requestId: p.requestId, granted: p.granted });
      break;
    case 'plan':
      next.entries = p.entries ?? [];
      break;
    case 'error':
      Object.assign(next, { code: p.code, message: p.message, fatal: !!p.fatal, turnFailed: false });
      break;
    case 'turn.failed':
      Object.assign(next, { code: p.code, message: p.message, fatal: false, turnFailed: true });
      break;
    case 'notice':
      Object.assign(next, { level: p.level, text: p.text });
      break;
    case 'workspace.action':
      Object.assign(next, {
        level: workspaceActionRefused(p) ? 'warning' : 'info',
        text: workspaceActionText(p),
      });
      break;
    case 'automation.fired':
      Object.assign(next, {
        level: Array.isArray(p.missingFields) && p.missingFields.length > 0 ? 'warning' : 'info',
        text: automationFiredText(p),
      });
      break;
    case 'usage':
      Object.assign(next, {
        inputTokens: p.inputTokens ?? 0,
        outputTokens: p.outputTokens ?? 0,
        cacheReadTokens: p.cacheReadTokens ?? 0,
        cacheWriteTokens: p.cacheWriteTokens ?? 0,
      });
      if (typeof p.costUsd === 'number') next.costUsd = p.costUsd;
      break;
    case 'subagent.event':
      next.child = p.child;
      next.eventCount = (next.eventCount ?? 0) + 1;
      next.lastKind = p.childKind;
      next.lastTurn = p.childTurn;
      if (p.payload && typeof p.payload.text === 'string') next.lastText = p.payload.text;
      break;
    default:
      break;
  }
  return next;
}
