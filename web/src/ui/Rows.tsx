// One timeline row per projected item kind.
import { memo } from 'preact/compat';
import type { Row } from '../core/timeline';
import type { Submission } from '../core/submissions';
import { Markdown } from './Markdown';
import { DiffLines } from './DiffView';
import { editDiff } from './render/edit_diff';
import { commandOf, ToolCall } from './ToolCall';
import { formatUsage } from './usage';

export interface RowActions {
  fork(row: Row): void;
  rewind(row: Row): void;
  answer(requestId: string, decision: 'allow' | 'deny', optionId?: string): void;
  submission(clientMessageId: string): Submission | undefined;
}

export function submissionLabel(s: Submission | undefined): string | null {
  if (!s) return null;
  if (s.rpc === 'failed') return `not sent: ${s.error ?? 'refused'}`;
  if (s.rpc === 'queued') return 'queued';
  if (s.rpc === 'unsent') return 'waiting for connection';
  if (s.rpc === 'sent') return 'sending';
  return null;
}

// The send state shown under a local row.
export function rowLabel(row: Row, actions: RowActions): string | null {
  return row.local ? submissionLabel(actions.submission(row.local.clientMessageId)) : null;
}

// Rows are rebuilt on every replica change but their items are immutable: a row renders again
// only when its item (or its local presentation, or its send state) changed, so a streaming
// reply re-renders its own row, not the whole window.
export const MemoRow = memo(
  TimelineRow,
  (a, b) =>
    a.label === b.label &&
    a.row.id === b.row.id &&
    a.row.epoch === b.row.epoch &&
    a.row.local === b.row.local &&
    (a.row.item === b.row.item ||
      (a.row.local !== undefined && a.row.item.key === b.row.item.key && a.row.item.seqEnd === b.row.item.seqEnd)),
);

export function TimelineRow({ row, actions, label }: { row: Row; actions: RowActions; label: string | null }) {
  const item = row.item;
  const common = { 'data-kind': item.kind, 'data-key': item.key, 'data-row-id': row.id, class: `row row-${item.kind}` };
  switch (item.kind) {
    case 'user_message': {
      return (
        <div {...common} data-testid="user-message">
          <div class="who">you</div>
          {item.text ? <Markdown text={item.text} /> : null}
          {(item.attachments ?? []).map((a: any, i: number) =>
            a.kind === 'image' && a.data ? (
              <img key={i} class="attachment" alt={a.name ?? 'image'} src={`data:${a.mimeType};base64,${a.data}`} />
            ) : (
              <span key={i} class="chip">
                {a.name ?? a.kind}
              </span>
            ),
          )}
          {label ? (
            <div class="sub-status" data-testid="submission-status">
              {label}
            </div>
          ) : null}
        </div>
      );
    }
    case 'assistant_message':
      // A finished message without text (an agent's turn that only called tools) takes no room.
      if (item.finished && !(item.text ?? '').trim())
        return (
          <div {...common} class="row row-assistant_message row-empty" data-testid="assistant-message" data-finished="true" />
        );
      return (
        <div {...common} data-testid="assistant-message" data-finished={item.finished ? 'true' : 'false'}>
          <div class="who">assistant</div>
          <Markdown text={item.text ?? ''} streaming={!item.finished} />
          {item.finished ? (
            <div class="item-actions">
              <button type="button" onClick={() => actions.fork(row)} data-testid="fork">
                Fork from here
              </button>
              <button type="button" onClick={() => actions.rewind(row)} data-testid="rewind">
                Rewind to here
              </button>
            </div>
          ) : null}
        </div>
      );
    case 'reasoning':
      return (
        <details {...common}>
          <summary>Thinking</summary>
          <div class="muted reasoning-text">{item.text}</div>
        </details>
      );
    case 'tool_call':
      return <ToolCall common={common} item={item} />;
    case 'permission': {
      const options: { id: string; kind: string; label: string }[] = item.options?.length
        ? item.options
        : [
            { id: 'allow_once', kind: 'allow_once', label: 'Allow' },
            { id: 'reject_once', kind: 'reject_once', label: 'Deny' },
          ];
      return (
        <div {...common} data-testid="permission" data-decision={item.decision ?? ''}>
          <div class="who">permission</div>
          <div class="text">{item.title || `Use ${item.toolName ?? 'a tool'}?`}</div>
          {item.input ? <PermissionInput tool={item.toolName ?? ''} input={item.input} /> : null}
          {item.decision ? (
            <div class="sub-status">{item.decision === 'allow' ? 'allowed' : 'denied'}</div>
          ) : (
            <div class="item-actions">
              {options.map((o) => (
                <button
                  type="button"
                  key={o.id}
                  data-testid={`permission-${o.kind}`}
                  onClick={() => actions.answer(item.requestId, o.kind.startsWith('allow') ? 'allow' : 'deny', o.id)}
                >
                  {o.label}
                </button>
              ))}
            </div>
          )}
        </div>
      );
    }
    case 'plan':
      return (
        <div {...common}>
          <div class="who">plan</div>
          <ul class="plan" data-testid="plan">
            {(item.entries ?? []).map((e: any, i: number) => (
              <li key={i} class={`plan-${e.status}`}>
                <input type="checkbox" checked={e.status === 'completed'} disabled aria-label={e.status} />
                {e.status === 'in_progress' ? <span class="plan-now">now</span> : null} {e.content}
              </li>
            ))}
          </ul>
        </div>
      );
    case 'error':
      return (
        <div {...common} data-testid="error" role="alert">
          <strong>{item.turnFailed ? 'Turn failed' : 'Error'}</strong> {item.code}: {item.message}
        </div>
      );
    case 'notice':
      return (
        <div {...common} class={`row row-notice notice-${item.level}`}>
          {item.text}
        </div>
      );
    case 'usage':
      return (
        <div {...common} class="row row-usage" data-testid="usage">
          {formatUsage(item as any)}
        </div>
      );
    case 'authorization':
      return (
        <div {...common}>
          <div class="who">authorization</div>
          <div class="text">{item.message}</div>
          {item.url ? (
            <a href={item.url} target="_blank" rel="noreferrer">
              {item.url}
            </a>
          ) : null}
          {item.granted !== undefined ? <div class="sub-status">{item.granted ? 'granted' : 'refused'}</div> : null}
        </div>
      );
    case 'subagent':
      return (
        <div {...common}>
          <div class="who">sub-agent {item.child}</div>
          <div class="text muted">
            {item.eventCount} events · last: {item.lastKind}
            {item.lastText ? ` — ${item.lastText}` : ''}
          </div>
        </div>
      );
    default:
      return <div {...common}>{item.kind}</div>;
  }
}

// What a permission request would do: an edit as its diff, a command as the command, else the
// input as JSON.
function PermissionInput({ tool, input }: { tool: string; input: any }) {
  const diff = editDiff(tool.replace(/^mcp__.+?__/, ''), input);
  if (diff)
    return (
      <div data-testid="permission-diff">
        {diff.files.map((f, i) => (
          <div class="edit-file" key={i}>
            <div class="edit-path">
              {f.path} <span class="muted">{f.action}</span>
            </div>
            <DiffLines path={f.path} lines={f.lines} />
          </div>
        ))}
        {diff.more > 0 ? <div class="muted">… {diff.more} more lines</div> : null}
      </div>
    );
  const command = commandOf(input);
  if (command) return <pre class="input">$ {command}</pre>;
  return <pre class="input">{JSON.stringify(input)}</pre>;
}
