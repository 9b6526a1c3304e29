// "Schedules" (docs/web.md, "Schedules"; docs/automation.md, "Schedules"): the daemon's schedules
// (`GET /v1/schedules`: when each fires, what it prompts, active or paused, its next and last
// tick) with pause, resume and delete (delete asks once more); a form that creates one (an
// interval or a cron expression in a time zone; an agent, or a new agent from a template; the
// prompt; the missed-tick policy), showing the daemon's words when it refuses; and a schedule's
// last firings (`GET /v1/schedules/{id}`: tick, outcome, the agent prompted, its turn's outcome,
// a skipped run's extent). Read again every few seconds while open. Every call goes through the
// package's HTTP client (DaemonHttp).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { AgentSnapshot, Schedule, ScheduleDetail } from '@agentstream/client';
import type { DaemonHttp, HttpResult } from '../core/daemon_http';
import {
  emptyScheduleForm,
  firingNote,
  scheduleDefinition,
  stateText,
  targetText,
  tickText,
  turnText,
  whenText,
  type ScheduleForm,
} from './schedules';

// How often the open view reads its schedules (and the firings shown) again.
export const SCHEDULES_POLL_MS = 2000;

export function SchedulesOverlay({
  http,
  agents,
  providers,
  titleOf,
  onOpenAgent,
  onClose,
}: {
  http: DaemonHttp;
  agents: AgentSnapshot[];
  providers: string[];
  titleOf(id: string): string;
  onOpenAgent(id: string): void;
  onClose(): void;
}) {
  const [list, setList] = useState<Schedule[] | null>(null);
  const [readError, setReadError] = useState('');
  const [error, setError] = useState(''); // the last action's refusal
  const [now, setNow] = useState(() => Date.now());
  const [shown, setShown] = useState<string | null>(null);
  const [detail, setDetail] = useState<ScheduleDetail | null>(null);
  const [confirming, setConfirming] = useState('');
  const [busy, setBusy] = useState(false);
  // The schedule whose firings are shown, for the reads already under way.
  const shownRef = useRef<string | null>(null);
  shownRef.current = shown;

  const load = async () => {
    const r = await http.run((api) => api.listSchedules());
    setNow(Date.now());
    setReadError(r.ok ? '' : `The schedules could not be read: ${r.message}`);
    if (r.ok) setList(r.value);
    const id = shownRef.current;
    if (!id) return;
    const d = await http.run((api) => api.showSchedule(id));
    if (shownRef.current !== id) return; // another one is shown now
    if (d.ok) setDetail(d.value);
    else if (d.status === 404) setShown(null);
  };
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    void loadRef.current();
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void loadRef.current();
    }, SCHEDULES_POLL_MS);
    return () => clearInterval(timer);
  }, [http]);

  const show = (id: string | null) => {
    shownRef.current = id;
    setShown(id);
    setDetail(null);
    if (id) void load();
  };
  // One action at a time; its refusal in words, then the list read again.
  const act = async (label: string, id: string, call: () => Promise<HttpResult<unknown>>) => {
    setBusy(true);
    const r = await call();
    setBusy(false);
    setConfirming('');
    setError(r.ok ? '' : `${label} ${id} failed: ${r.message}`);
    if (r.ok && label === 'Delete' && shownRef.current === id) show(null);
    await load();
  };

  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label="Schedules" data-testid="schedules" onClick={onClose}>
      <div class="overlay-box schedules" onClick={(e) => e.stopPropagation()}>
        <h2>Schedules</h2>
        <div class="muted">Prompts sent on a clock, to an agent or to a new agent each time (each tick fires once).</div>
        {readError || error ? (
          <div class="error-text" role="alert" data-testid="schedules-error">
            {error || readError}
          </div>
        ) : null}
        {list === null && !readError ? <div class="muted">Loading…</div> : null}
        {list?.length === 0 ? <div class="muted">No schedule yet.</div> : null}
        <ul class="schedule-list">
          {list?.map((s) => {
            const state = stateText(s);
            return (
              <li key={s.id} class="schedule" data-testid="schedule" data-schedule={s.id} data-state={state}>
                <span class="schedule-head">
                  <strong>{s.id}</strong>
                  <span class={`schedule-state ${state}`}>{state}</span>
                  <span class="muted">{whenText(s)}</span>
                </span>
                <span class="muted" data-testid="schedule-target">
                  {targetText(s, titleOf)} · missed ticks: {s.missed}
                </span>
                <span class="muted" data-testid="schedule-ticks">
                  next: <span title={s.nextTick ?? ''}>{tickText(s.nextTick, now, s.paused ? 'none while paused' : 'none')}</span>{' '}
                  · last: <span title={s.lastTick ?? ''}>{tickText(s.lastTick, now, 'never')}</span>
                </span>
                <span class="schedule-prompt" title={s.prompt}>
                  {s.prompt}
                </span>
                <span class="item-actions">
                  <button type="button" onClick={() => show(shown === s.id ? null : s.id)} aria-expanded={shown === s.id}>
                    {shown === s.id ? 'Hide firings' : 'Firings'}
                  </button>
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() =>
                      void (s.paused
                        ? act('Resume', s.id, () => http.run((api) => api.resumeSchedule(s.id)))
                        : act('Pause', s.id, () => http.run((api) => api.pauseSchedule(s.id))))
                    }
                  >
                    {s.paused ? 'Resume' : 'Pause'}
                  </button>
                  {confirming === s.id ? (
                    <button
                      type="button"
                      class="danger"
                      disabled={busy}
                      onClick={() => void act('Delete', s.id, () => http.run((api) => api.deleteSchedule(s.id)))}
                    >
                      Delete: sure?
                    </button>
                  ) : (
                    <button type="button" onClick={() => setConfirming(s.id)}>
                      Delete
                    </button>
                  )}
                </span>
                {shown === s.id ? <Firings detail={detail} titleOf={titleOf} onOpenAgent={onOpenAgent} /> : null}
              </li>
            );
          })}
        </ul>
        <CreateSchedule
          http={http}
          agents={agents}
          providers={providers}
          titleOf={titleOf}
          onCreated={(s) => {
            setError('');
            show(s.id);
          }}
        />
        <button type="button" onClick={onClose} data-testid="schedules-close">
          Close
        </button>
      </div>
    </div>
  );
}

// A schedule's last firings, newest first.
function Firings({
  detail,
  titleOf,
  onOpenAgent,
}: {
  detail: ScheduleDetail | null;
  titleOf(id: string): string;
  onOpenAgent(id: string): void;
}) {
  if (!detail) return <div class="muted">Loading the firings…</div>;
  if (detail.firings.length === 0)
    return (
      <div class="muted" data-testid="firings">
        Not fired yet.
      </div>
    );
  return (
    <table class="firings" data-testid="firings">
      <thead>
        <tr>
          <th>Tick (UTC)</th>
          <th>Outcome</th>
          <th>Agent</th>
          <th>Turn</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {detail.firings.map((f) => (
          <tr key={f.tick} data-testid="firing" data-outcome={f.outcome}>
            <td>{f.tick}</td>
            <td class={`firing-${f.outcome}`}>{f.outcome}</td>
            <td>
              {f.agent ? (
                <button type="button" class="link" onClick={() => onOpenAgent(f.agent!)} title={f.agent}>
                  {titleOf(f.agent)}
                </button>
              ) : null}
            </td>
            <td>{turnText(f)}</td>
            <td class="muted">{firingNote(f)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CreateSchedule({
  http,
  agents,
  providers,
  titleOf,
  onCreated,
}: {
  http: DaemonHttp;
  agents: AgentSnapshot[];
  providers: string[];
  titleOf(id: string): string;
  onCreated(s: Schedule): void;
}) {
  const [form, setForm] = useState<ScheduleForm>(() => emptyScheduleForm());
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<ScheduleForm>) => setForm((f) => ({ ...f, ...patch }));
  const text = (key: keyof ScheduleForm) => (e: Event) => set({ [key]: (e.target as HTMLInputElement).value });
  // The agent picked, else the first listed.
  const agent = form.agent || agents[0]?.id || '';
  return (
    <form
      class="schedule-form"
      aria-label="New schedule"
      data-testid="schedule-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        void http
          .run((api) => api.createSchedule(scheduleDefinition({ ...form, agent })))
          .then((r) => {
            setBusy(false);
            setError(r.ok ? '' : r.message);
            if (!r.ok) return;
            set({ id: '' });
            onCreated(r.value);
          });
      }}
    >
      <h3>New schedule</h3>
      <label>
        Id
        <input value={form.id} placeholder="nightly" maxLength={64} onInput={text('id')} data-testid="schedule-id" />
      </label>
      <label>
        When
        <select value={form.when} onChange={text('when')} data-testid="schedule-when">
          <option value="every">every (interval)</option>
          <option value="cron">cron expression</option>
        </select>
      </label>
      {form.when === 'every' ? (
        <label>
          Every
          <input value={form.every} placeholder="90s, 15m, 2h, 1d" onInput={text('every')} data-testid="schedule-every" />
        </label>
      ) : (
        <>
          <label>
            Cron
            <input value={form.cron} placeholder="0 9 * * 1-5" onInput={text('cron')} data-testid="schedule-cron" />
          </label>
          <label>
            Time zone
            <input value={form.timezone} placeholder="UTC" onInput={text('timezone')} data-testid="schedule-timezone" />
          </label>
        </>
      )}
      <label>
        Prompts
        <select value={form.target} onChange={text('target')} data-testid="schedule-target-kind">
          <option value="template">a new agent each time</option>
          <option value="agent">an agent</option>
        </select>
      </label>
      {form.target === 'agent' ? (
        <label>
          Agent
          <select value={agent} onChange={text('agent')} data-testid="schedule-agent">
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {titleOf(a.id)}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <>
          <label>
            Provider
            <input value={form.provider} list="schedule-providers" onInput={text('provider')} data-testid="schedule-provider" />
            <datalist id="schedule-providers">
              {providers.map((p) => (
                <option key={p} value={p} />
              ))}
            </datalist>
          </label>
          <label>
            Directory
            <input value={form.cwd} onInput={text('cwd')} data-testid="schedule-cwd" />
          </label>
          <label>
            Title
            <input
              value={form.title}
              placeholder="optional: Nightly {{date}}"
              onInput={text('title')}
              data-testid="schedule-title"
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={form.worktree}
              onChange={(e) => set({ worktree: (e.target as HTMLInputElement).checked })}
            />
            Worktree
          </label>
        </>
      )}
      <label class="wide">
        Prompt
        <textarea
          value={form.prompt}
          rows={2}
          placeholder="Summarize what changed since yesterday ({{date}}); also {{time}}, {{tick}}, {{schedule}}"
          onInput={text('prompt')}
          data-testid="schedule-prompt"
        />
      </label>
      <label>
        Missed ticks
        <select value={form.missed} onChange={text('missed')} data-testid="schedule-missed">
          <option value="skip">skip</option>
          <option value="run-once">run the newest once</option>
        </select>
      </label>
      <button type="submit" class="primary" disabled={busy} data-testid="schedule-create">
        Create schedule
      </button>
      {error ? (
        <div class="error-text wide" role="alert" data-testid="schedule-create-error">
          {error}
        </div>
      ) : null}
    </form>
  );
}
