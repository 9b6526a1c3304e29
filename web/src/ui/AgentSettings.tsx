// The open agent's mode, model and thinking pickers (in its composer, under the text): each lists what the
// agent's runtime offers (its snapshot's `capabilities`), shows the current value, and sends
// `mode.set`, `model.set` or `thinking.set` on a change. A picker whose list is empty is not
// shown; the daemon's refusal is shown under them.
import { useEffect, useId, useState } from 'preact/hooks';
import type { AgentSnapshot, Capabilities, Choice } from '@agentstream/client';
import type { AgentOption } from '../core/types';

const PICKERS: { option: AgentOption; list: keyof Capabilities; label: string; unset: string }[] = [
  { option: 'mode', list: 'modes', label: 'Mode', unset: '—' },
  { option: 'model', list: 'models', label: 'Model', unset: '—' },
  { option: 'thinking', list: 'thinkingOptions', label: 'Thinking', unset: 'Default' },
];

export function AgentSettings({
  agent,
  capabilities,
  onSet,
}: {
  agent: AgentSnapshot | undefined;
  capabilities: Capabilities | null;
  onSet(option: AgentOption, value: string): Promise<unknown>;
}) {
  const [error, setError] = useState('');
  const shown = PICKERS.filter((p) => ((capabilities?.[p.list] as Choice[] | undefined) ?? []).length > 0);
  if (!shown.length) return null;
  return (
    <div class="agent-settings" data-testid="agent-settings">
      {shown.map((p) => (
        <Picker
          key={p.option}
          label={p.label}
          option={p.option}
          unset={p.unset}
          choices={capabilities![p.list] as Choice[]}
          current={agent?.[p.option] ?? ''}
          onSet={(value) => {
            setError('');
            return onSet(p.option, value).catch((err) => {
              setError(`${p.label}: ${String((err as Error)?.message ?? err)}`);
              throw err;
            });
          }}
        />
      ))}
      {error ? (
        <span class="error-text" role="alert" data-testid="setting-error">
          {error}
        </span>
      ) : null}
    </div>
  );
}

// A value picked: shown while its request is answered, then until the snapshot moves off the
// value it replaced (the new value reaches the snapshot through `agent.status`, which may come
// after the `ok`).
interface Pending {
  value: string;
  from: string;
  answered: boolean;
}

function Picker({
  label,
  option,
  unset,
  choices,
  current,
  onSet,
}: {
  label: string;
  option: AgentOption;
  unset: string;
  choices: Choice[];
  current: string;
  onSet(value: string): Promise<unknown>;
}) {
  const id = useId();
  const [pending, setPending] = useState<Pending | null>(null);
  useEffect(() => {
    if (pending?.answered && current !== pending.from) setPending(null);
  }, [pending, current]);
  const value = pending && (!pending.answered || current === pending.from) ? pending.value : current;
  const listed = choices.some((c) => c.id === value);
  return (
    <span class="setting">
      <label for={id}>{label}</label>
      <select
        id={id}
        value={value}
        data-testid={`${option}-picker`}
        onChange={(e) => {
          const next = (e.target as HTMLSelectElement).value;
          if (!next || next === value) return;
          const p: Pending = { value: next, from: current, answered: false };
          setPending(p);
          onSet(next).then(
            () => setPending((now) => (now === p ? { ...p, answered: true } : now)),
            () => setPending((now) => (now === p ? null : now)),
          );
        }}
      >
        {/* The current value is shown even when the runtime does not list it. */}
        {!listed ? (
          <option value={value} disabled={!value}>
            {value || unset}
          </option>
        ) : null}
        {choices.map((c) => (
          <option key={c.id} value={c.id}>
            {c.label || c.id}
          </option>
        ))}
      </select>
    </span>
  );
}
