// The keyboard shortcuts (App.tsx handles them) and the overlay that lists them (`?`).
export const SHORTCUTS: [string, string][] = [
  ['?', 'show or hide this help'],
  ['Enter', 'send the message (Shift+Enter: new line)'],
  ['Escape', 'interrupt the running turn (in the composer); close this help or the agent list'],
  ['/', 'focus the composer of the focused pane'],
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
