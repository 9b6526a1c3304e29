// The Schedules view's logic: the definition its form sends, the words of a schedule and of its
// firings, the calls going through the page's DaemonHttp adapter (a refusal as a value with the
// daemon's words), and a schedule's automation.fired event projected live as the daemon does.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope, Schedule, ScheduleFiring } from '@agentstream/client';
import { DaemonHttp } from '../src/core/daemon_http';
import { foldEvent } from '../src/core/project';
import {
  emptyScheduleForm,
  firingNote,
  scheduleDefinition,
  stateText,
  targetText,
  tickText,
  turnText,
  whenText,
} from '../src/ui/schedules';

const SCHEDULE: Schedule = {
  id: 'nightly',
  cron: '0 2 * * *',
  timezone: 'Europe/Berlin',
  agent: 'ses_1',
  prompt: 'Run the tests',
  missed: 'skip',
  paused: false,
  createdMs: 1,
  lastTick: null,
  nextTick: '2026-12-07T01:00:00Z',
  pendingTick: null,
  leaseOwner: '',
};

describe('the definition the form sends', () => {
  it('an interval to a new agent: only those members, trimmed, and no default sent', () => {
    const form = { ...emptyScheduleForm('Europe/Berlin'), id: ' tick ', every: ' 1s ', prompt: 'go {{tick}}' };
    expect(scheduleDefinition(form)).toEqual({
      id: 'tick',
      every: '1s',
      template: { provider: 'scripted', cwd: '/tmp' },
      prompt: 'go {{tick}}',
    });
    const titled = { ...form, title: ' Nightly {{date}} ', worktree: true, provider: 'claude', cwd: '/src/app' };
    expect(scheduleDefinition(titled).template).toEqual({
      provider: 'claude',
      cwd: '/src/app',
      title: 'Nightly {{date}}',
      worktree: true,
    });
  });

  it('a cron expression in a zone to an agent, with the run-once policy', () => {
    const form = {
      ...emptyScheduleForm('UTC'),
      id: 'standup',
      when: 'cron' as const,
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      target: 'agent' as const,
      agent: 'ses_1',
      title: 'ignored for an agent',
      prompt: 'Standup {{date}}',
      missed: 'run-once' as const,
    };
    expect(scheduleDefinition(form)).toEqual({
      id: 'standup',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      agent: 'ses_1',
      prompt: 'Standup {{date}}',
      missed: 'run-once',
    });
    // No zone typed: the daemon's default (UTC).
    expect(scheduleDefinition({ ...form, timezone: ' ' }).timezone).toBeUndefined();
  });
});

describe('the words of a schedule', () => {
  it('when, what and its state', () => {
    expect(whenText(SCHEDULE)).toBe('0 2 * * * (Europe/Berlin)');
    expect(whenText({ every: '15m' })).toBe('every 15m');
    expect(targetText(SCHEDULE, (id) => (id === 'ses_1' ? 'Parser work' : id))).toBe('agent Parser work');
    expect(targetText({ template: { provider: 'claude', cwd: '/src/app', worktree: true } })).toBe(
      'new claude agent in /src/app (worktree)',
    );
    expect(stateText(SCHEDULE)).toBe('active');
    expect(stateText({ ...SCHEDULE, pendingTick: '2026-12-06T01:00:00Z' })).toBe('firing');
    expect(stateText({ ...SCHEDULE, paused: true })).toBe('paused');
  });

  it('ticks relative to now', () => {
    const now = Date.parse('2026-12-06T09:00:00Z');
    expect(tickText('2026-12-06T09:00:42Z', now)).toBe('in 42s');
    expect(tickText('2026-12-06T08:55:00Z', now)).toBe('5m ago');
    expect(tickText('2026-12-06T12:00:00Z', now)).toBe('in 3h');
    expect(tickText('2026-12-08T09:00:00Z', now)).toBe('in 2d');
    expect(tickText('2026-12-06T09:00:00Z', now)).toBe('now');
    expect(tickText(null, now, 'never')).toBe('never');
  });
});

describe('the words of a firing', () => {
  const fired: ScheduleFiring = {
    tick: '2026-12-06T09:00:00Z',
    outcome: 'fired',
    recordedMs: 1,
    agent: 'ses_1',
    clientMessageId: 'schedule:nightly:2026-12-06T09:00:00Z',
    turnId: 'turn_1',
    turnOutcome: 'completed',
  };
  it("the turn's outcome, queued, or unknown", () => {
    expect(turnText(fired)).toBe('completed');
    expect(turnText({ ...fired, turnOutcome: '' })).toBe('unknown');
    expect(turnText({ ...fired, turnId: undefined, turnOutcome: undefined })).toBe('queued');
    expect(turnText({ tick: fired.tick, outcome: 'failed', recordedMs: 1, detail: 'not found' })).toBe('');
  });

  it("a skipped run's extent and the daemon's words", () => {
    const skipped: ScheduleFiring = {
      tick: '2026-12-08T09:00:00Z',
      firstTick: '2026-12-06T09:00:00Z',
      ticks: 3,
      outcome: 'skipped',
      recordedMs: 1,
      detail: 'missed: no daemon fired them within 60 s',
    };
    expect(firingNote(skipped)).toBe('3 ticks from 2026-12-06T09:00:00Z; missed: no daemon fired them within 60 s');
    expect(firingNote({ tick: fired.tick, outcome: 'failed', recordedMs: 1, detail: 'session ses_9 not found' })).toBe(
      'session ses_9 not found',
    );
    expect(firingNote(fired)).toBe('');
  });
});

describe('the schedule calls through DaemonHttp', () => {
  it("create refused with the daemon's words as a value; show with its firings query; pause", async () => {
    const seen: { method: string; url: string; body?: unknown }[] = [];
    const fetchFn = (url: string, init?: RequestInit) => {
      seen.push({ method: init?.method ?? 'GET', url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      if (init?.method === 'POST' && url.endsWith('/v1/schedules'))
        return Promise.resolve(
          new Response(
            JSON.stringify({
              error: { code: 'invalid_argument', message: 'schedule x: every: an interval is a whole number of seconds' },
            }),
            { status: 400 },
          ),
        );
      const body = url.includes('/pause') ? { ...SCHEDULE, paused: true, nextTick: null } : { ...SCHEDULE, firings: [] };
      return Promise.resolve(new Response(JSON.stringify(body), { status: 200 }));
    };
    const http = new DaemonHttp('http://daemon', '', fetchFn);
    expect(
      await http.run((api) =>
        api.createSchedule({ id: 'x', every: '500ms', template: { provider: 'scripted', cwd: '/tmp' }, prompt: 'p' }),
      ),
    ).toEqual({ ok: false, status: 400, message: 'schedule x: every: an interval is a whole number of seconds' });
    expect(await http.run((api) => api.showSchedule('nightly', { firings: 10 }))).toMatchObject({
      ok: true,
      value: { firings: [] },
    });
    expect(await http.run((api) => api.pauseSchedule('nightly'))).toMatchObject({ ok: true, value: { paused: true } });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST http://daemon/v1/schedules',
      'GET http://daemon/v1/schedules/nightly?firings=10',
      'POST http://daemon/v1/schedules/nightly/pause',
    ]);
  });
});

describe("a schedule's automation.fired event, projected live", () => {
  const ev = (seq: number, payload: Record<string, unknown>): EventEnvelope => ({
    v: 1,
    session: 'ses_1',
    epoch: 1,
    seq,
    time: 0,
    kind: 'automation.fired',
    payload: { source: 'schedule', id: 'nightly', key: '2026-12-06T09:00:00Z', missingFields: [], ...payload },
  });

  // The daemon's AutomationFiredText (src/core/event_text.cc) for a schedule.
  it('names the schedule and its tick; missing fields make it a warning', () => {
    expect(foldEvent(undefined, ev(2, {}))).toMatchObject({
      kind: 'notice',
      level: 'info',
      text: 'schedule nightly: tick 2026-12-06T09:00:00Z',
    });
    expect(foldEvent(undefined, ev(3, { missingFields: ['nope'] }))).toMatchObject({
      level: 'warning',
      text: 'schedule nightly: tick 2026-12-06T09:00:00Z; missing fields: nope',
    });
  });
});
