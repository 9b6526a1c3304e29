// The keyboard shortcuts: their list, the overlay that shows it (`?`), and the page-wide
// handler (App.tsx calls it on every keydown; Enter and Escape in the composer, Alt+C and F2 are
// the pane's own).
export const SHORTCUTS: [string, string][] = [
  ['?', 'show or hide this help'],
  ['Enter', 'send the message (Shift+Enter: new line)'],
  ['Escape', 'interrupt the running turn (in the composer); close this help or the agent list'],
  ['/', 'focus the composer of the focused pane'],
  ['/ at the start of a message', "the agent's slash commands: ↑ / ↓ choose, Enter or Tab complete, Escape close"],
  ['Alt+↑ / Alt+↓', 'open the previous / next agent in the focused pane'],
  ['Alt+1 … Alt+4', 'focus pane 1 to 4'],
  ['Alt+L', 'show the agent list (a drawer on a phone)'],
  ['Alt+N', 'new agent (the list’s create form)'],
  ['Alt+P', 'open the next agent that waits for permission'],
  ['Alt+C', 'switch the focused pane between conversation and changes'],
  ['Alt+S', 'search the history'],
  ['F2', 'rename the focused agent'],
];

export function HelpOverlay({ onClose }: { onClose(): void }) {
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" data-testid="help" onClick={onClose}>
      <div class="overlay-box" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <table class="shortcuts">
          <tbody>
            {SHORTCUTS.map(([k, what]) => (
              <tr key={k}>
                <td>
                  <kbd>{k}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button type="button" onClick={onClose} data-testid="help-close" autofocus>
          Close
        </button>
      </div>
    </div>
  );
}

// True when a key typed now goes into a text field (single-key shortcuts then do nothing).
export function typingIn(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName);
}

// What the page-wide shortcuts act on.
export interface ShortcutContext {
  overlayOpen: boolean; // the help or the drawer
  closeOverlays(): void;
  toggleHelp(): void;
  openDrawer(): void;
  agents: string[]; // in the list's order
  waiting: string[]; // the agents waiting for permission, in the list's order
  focusedAgent: string | null;
  openAgent(id: string): void; // in the focused pane
  panes: string[];
  focusPane(id: string): void;
}

function focusLater(selector: string): void {
  requestAnimationFrame(() => document.querySelector<HTMLElement>(selector)?.focus());
}

// The agent after (or before) `current` in `ids`, cyclically; the first when `current` is not there.
function step(ids: string[], current: string | null, by: number): string {
  const i = ids.indexOf(current ?? '');
  return ids[i < 0 ? 0 : (i + by + ids.length) % ids.length];
}

export function handleShortcut(e: KeyboardEvent, c: ShortcutContext): void {
  if (e.key === 'Escape' && c.overlayOpen) return c.closeOverlays();
  if (!e.altKey && !e.ctrlKey && !e.metaKey) {
    if (typingIn(e.target)) return;
    if (e.key === '?') {
      e.preventDefault();
      c.toggleHelp();
    } else if (e.key === '/') {
      e.preventDefault();
      document.querySelector<HTMLTextAreaElement>('.pane.focused [data-testid="composer"]')?.focus();
    }
    return;
  }
  if (!e.altKey || e.ctrlKey || e.metaKey) return;
  const code = e.code;
  if ((code === 'ArrowUp' || code === 'ArrowDown') && c.agents.length) {
    e.preventDefault();
    c.openAgent(step(c.agents, c.focusedAgent, code === 'ArrowDown' ? 1 : -1));
  } else if (/^Digit[1-4]$/.test(code) && c.panes[Number(code.slice(5)) - 1]) {
    e.preventDefault();
    c.focusPane(c.panes[Number(code.slice(5)) - 1]);
  } else if (code === 'KeyL' || code === 'KeyN' || code === 'KeyS') {
    e.preventDefault();
    c.openDrawer();
    focusLater(
      code === 'KeyN'
        ? '[data-testid="provider"]'
        : code === 'KeyS'
          ? '[data-testid="search-input"]'
          : '[data-testid="agent-row"] .agent-open',
    );
  } else if (code === 'KeyP' && c.waiting.length) {
    e.preventDefault();
    c.openAgent(step(c.waiting, c.focusedAgent, 1));
  }
}
