import { useEffect, useRef, useState } from 'preact/hooks';

// The agent's title, edited in place: Enter saves (`agents.rename`), Escape cancels.
export function TitleEditor({
  initial,
  onSave,
  onDone,
}: {
  initial: string;
  onSave(title: string): Promise<unknown>;
  onDone(): void;
}) {
  const [value, setValue] = useState(initial);
  const [error, setError] = useState('');
  const [saving, setSaving] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const save = async () => {
    if (saving) return;
    if (value.trim() === initial) return onDone();
    setSaving(true);
    try {
      await onSave(value.trim());
      onDone();
    } catch (err) {
      setError(String((err as Error)?.message ?? err));
      setSaving(false);
    }
  };
  return (
    <span class="title-editor">
      <input
        ref={input}
        value={value}
        maxLength={256}
        aria-label="Agent title"
        data-testid="title-input"
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            void save();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onDone();
          }
        }}
        onBlur={() => {
          if (!error) onDone();
        }}
      />
      {error ? (
        <span class="error-text" data-testid="title-error">
          {error}
        </span>
      ) : null}
    </span>
  );
}
