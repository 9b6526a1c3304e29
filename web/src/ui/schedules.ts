// The words and the definition of the Schedules view (Schedules.tsx; docs/automation.md,
// "Schedules"): pure, so they are checked without a daemon. The daemon checks every definition
// and names what is wrong; the form sends what was typed and shows its words.
import type { MissedPolicy, Schedule, ScheduleDefinition, ScheduleFiring } from '@agentstream/client';

// What the create form holds.
export interface ScheduleForm {
  id: string;
  when: 'every' | 'cron';
  every: string;
  cron: string;
  timezone: string;
  target: 'agent' | 'template';
  agent: string;
  provider: string;
  cwd: string;
  title: string;
  worktree: boolean;
  prompt: string;
  missed: MissedPolicy;
}

// The form's start: an interval, the browser's own time zone for a cron expression, a new
// scripted agent in /tmp (as the agent form starts).
export function emptyScheduleForm(timezone = browserTimeZone()): ScheduleForm {
  return {
    id: '',
    when: 'every',
    every: '1h',
    cron: '0 9 * * 1-5',
    timezone,
    target: 'template',
    agent: '',
    provider: 'scripted',
    cwd: '/tmp',
    title: '',
    worktree: false,
    prompt: '',
    missed: 'skip',
  };
}

export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

// The definition POST /v1/schedules takes: only the members of the chosen "when" and target,
// the texts trimmed (the prompt as typed), a template's title and worktree only when given, and
// `missed` only when it is not the default.
export function scheduleDefinition(f: ScheduleForm): ScheduleDefinition {
  const d: ScheduleDefinition = { id: f.id.trim(), prompt: f.prompt };
  if (f.when === 'cron') {
    d.cron = f.cron.trim();
    if (f.timezone.trim()) d.timezone = f.timezone.trim();
  } else {
    d.every = f.every.trim();
  }
  if (f.target === 'agent') {
    d.agent = f.agent;
  } else {
    d.template = { provider: f.provider.trim(), cwd: f.cwd.trim() };
    if (f.title.trim()) d.template.title = f.title.trim();
    if (f.worktree) d.template.worktree = true;
  }
  if (f.missed !== 'skip') d.missed = f.missed;
  return d;
}

// When it fires: "every 15m", or "0 9 * * 1-5 (Europe/Berlin)".
export function whenText(s: Pick<Schedule, 'cron' | 'timezone' | 'every'>): string {
  if (s.cron !== undefined) return `${s.cron} (${s.timezone ?? 'UTC'})`;
  return `every ${s.every ?? '?'}`;
}

// What it prompts: "agent TITLE" (its id when it has no title or is not listed), or "new
// PROVIDER agent in CWD".
export function targetText(s: Pick<Schedule, 'agent' | 'template'>, titleOf: (id: string) => string = (id) => id): string {
  if (s.template) return `new ${s.template.provider} agent in ${s.template.cwd}${s.template.worktree ? ' (worktree)' : ''}`;
  return `agent ${s.agent ? titleOf(s.agent) : '?'}`;
}

// A duration in words, at most two units' worth of precision: "42s", "5m", "3h", "2d".
function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

// A tick relative to `now`: "in 42s", "5m ago", "now"; `none` for null.
export function tickText(tick: string | null | undefined, now: number, none = '—'): string {
  if (!tick) return none;
  const at = Date.parse(tick);
  if (Number.isNaN(at)) return tick;
  const d = at - now;
  if (Math.abs(d) < 1000) return 'now';
  return d > 0 ? `in ${span(d)}` : `${span(d)} ago`;
}

// The state shown beside its id.
export function stateText(s: Pick<Schedule, 'paused' | 'pendingTick'>): string {
  if (s.paused) return 'paused';
  return s.pendingTick ? 'firing' : 'active';
}

// The turn a fired tick started, in words: its outcome from the agent's log, "queued" when the
// prompt waited behind another turn (no turn id), "unknown" when the turn is no longer among
// the agent's recent events.
export function turnText(f: ScheduleFiring): string {
  if (f.outcome !== 'fired') return '';
  if (!f.turnId) return 'queued';
  return f.turnOutcome || 'unknown';
}

// What became of a tick beyond its outcome: a skipped run's extent ("3 ticks from T1"), and the
// daemon's words (why it failed or was skipped).
export function firingNote(f: ScheduleFiring): string {
  const parts: string[] = [];
  if (f.outcome === 'skipped' && f.ticks && f.ticks > 1) parts.push(`${f.ticks} ticks from ${f.firstTick ?? '?'}`);
  if (f.detail) parts.push(f.detail);
  return parts.join('; ');
}
