import type { Row } from '../core/timeline';
import type { RowActions } from './Rows';

// The pending permission request, pinned above the composer so it cannot scroll out of sight:
// what the tool wants to do, and its options as buttons (the same answer as the row's).
export function PermissionBanner({ rows, head, actions }: { rows: Row[]; head: Row | null; actions: RowActions }) {
  let pending: Row | undefined;
  for (let i = rows.length - 1; i >= 0 && !pending; i--) {
    const it = rows[i].item;
    if (it.kind === 'permission' && !it.decision) pending = rows[i];
  }
  if (!pending && head?.item.kind === 'permission' && !head.item.decision) pending = head;
  const item = pending?.item;
  const options: { id: string; kind: string; label: string }[] = item?.options?.length
    ? item.options
    : [
        { id: 'allow_once', kind: 'allow_once', label: 'Allow' },
        { id: 'reject_once', kind: 'reject_once', label: 'Deny' },
      ];
  const what = item ? item.title || `Use ${item.toolName ?? 'a tool'}?` : 'The agent is waiting for your permission.';
  const detail = item?.input && typeof item.input === 'object' ? (item.input.command ?? item.input.file_path ?? '') : '';
  return (
    <div class="permission-banner" role="alert" data-testid="permission-banner">
      <div class="permission-what">
        <strong>Permission needed:</strong> {what} {detail ? <code>{String(detail)}</code> : null}
      </div>
      {item ? (
        <div class="item-actions">
          {options.map((o) => (
            <button
              type="button"
              key={o.id}
              class={o.kind.startsWith('allow') ? 'primary' : ''}
              data-testid={`prompt-${o.kind}`}
              onClick={() => actions.answer(item.requestId, o.kind.startsWith('allow') ? 'allow' : 'deny', o.id)}
            >
              {o.label}
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
}
