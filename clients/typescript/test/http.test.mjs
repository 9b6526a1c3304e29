// The HTTP client against a real daemon: a round trip of every call, a permission answered, the
// error shape, the git actions on a worktree agent, and schedules firing into an agent.
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {after, before, describe, test} from 'node:test';

import {AgentstreamError, AgentstreamHttp, readAllEvents} from '../dist/index.js';
import {Daemon, SKIP, tempDir, until} from './harness.mjs';

describe('HTTP client', {skip: SKIP, timeout: 60000}, () => {
  let daemon;
  let http;
  before(async () => {
    daemon = await new Daemon().start();
    http = new AgentstreamHttp({baseUrl: daemon.baseUrl});
  });
  after(async () => daemon?.stop());

  const idle = (id) => until(async () => {
    const a = await http.getAgent(id);
    return a.status === 'idle' && a.activeTurn === null && a;
  }, `${id} idle`);

  test('round trip', async () => {
    assert.deepEqual(await http.health(), {status: 'ok'});
    const catalog = await http.catalog();
    assert.ok(Array.isArray(catalog.agents));

    const a = await http.createAgent({provider: 'scripted', cwd: '/tmp', clientRequestId: 'create-1'});
    assert.match(a.id, /^ses_/);
    assert.equal(a.provider, 'scripted');
    // The same clientRequestId answers the same agent.
    assert.equal((await http.createAgent({provider: 'scripted', cwd: '/tmp', clientRequestId: 'create-1'})).id, a.id);
    assert.ok((await http.listAgents()).some((x) => x.id === a.id));
    assert.equal((await http.getAgent(a.id)).id, a.id);

    const reply = await http.send(a.id, {text: 'hello parser', clientMessageId: 'm1'});
    assert.equal(reply.outcome, 'accepted');
    assert.equal(reply.clientMessageId, 'm1');
    // A retry of the same id is recorded once.
    const again = await http.send(a.id, {text: 'hello parser', clientMessageId: 'm1'});
    assert.equal(again.outcome, 'duplicate');
    assert.equal(again.turnId, reply.turnId);
    // An id is made when none is given.
    await idle(a.id);
    const auto = await http.send(a.id, 'second prompt');
    assert.match(auto.clientMessageId, /^msg_/);
    await idle(a.id);
    const {events} = await readAllEvents(http, a.id);
    assert.equal(events.filter((e) => e.kind === 'user.message' && e.payload.clientMessageId === 'm1').length, 1);
    assert.equal(events.filter((e) => e.kind === 'user.message').length, 2);

    // Timeline pages.
    const tail = await http.timeline(a.id, {direction: 'tail', limit: 2});
    assert.equal(tail.epoch, 1);
    assert.equal(tail.items.length, 2);
    const pages = [];
    for await (const p of http.timelinePages(a.id, {cursor: '1:0', limit: 3})) pages.push(p);
    assert.ok(pages.length >= 2);
    assert.equal(pages.at(-1).hasNewer, false);
    assert.equal(pages.at(-1).endCursor, `1:${events.at(-1).seq}`);
    const items = pages.flatMap((p) => p.items);
    assert.ok(items.some((i) => i.kind === 'user_message' && i.text === 'hello parser'));

    // Settings.
    await http.setMode(a.id, 'default');
    await http.setModel(a.id, 'scripted-2');
    await http.setThinking(a.id, 'on');
    const titled = await http.setTitle(a.id, 'Parser refactor');
    assert.equal(titled.title, 'Parser refactor');
    await until(async () => (await http.getAgent(a.id)).thinking === 'on', 'thinking on');

    // Search (the indexer runs about 200 ms after a commit).
    const found = await until(async () => {
      const r = await http.search('parser', {agent: a.id});
      return r.hits.length > 0 && r;
    }, 'a search hit');
    assert.equal(found.hits[0].agent, a.id);

    // Interrupt (idle: a no-op), fork, rewind, close.
    await http.interrupt(a.id);
    const fork = await http.fork(a.id, '1:4');
    assert.notEqual(fork.id, a.id);
    assert.deepEqual(fork.forkedFrom, {agent: a.id, cursor: '1:4'});
    const rewound = await http.rewind(a.id, '1:4');
    assert.equal(parseInt(rewound.cursor), 2);
    const closed = await http.closeAgent(fork.id);
    assert.equal(closed.closed, true);
    assert.ok(!(await http.listAgents()).some((x) => x.id === fork.id));
    assert.ok((await http.listAgents({includeClosed: true})).some((x) => x.id === fork.id));
  });

  test('a permission answered', async () => {
    const a = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    await http.send(a.id, 'please ask permission first');
    // (A snapshot may list the permission while its status still says `running`; wait for both.)
    const asking = await until(async () => {
      const x = await http.getAgent(a.id);
      return x.permissions.length > 0 && x.status === 'permission' && x;
    }, 'a permission request');
    const requestId = asking.permissions[0].requestId;
    await http.replyPermission(a.id, requestId, {decision: 'allow'});
    await idle(a.id);
    const {events} = await readAllEvents(http, a.id);
    const resolved = events.find((e) => e.kind === 'permission.resolved');
    assert.ok(resolved, 'a permission.resolved event');
    // A second answer: the request is gone.
    await assert.rejects(http.replyPermission(a.id, requestId, {decision: 'deny'}),
                         (e) => e instanceof AgentstreamError && e.code === 'not_found' && e.status === 404);
  });

  test('the error shape', async () => {
    const err = await http.getAgent('ses_none').catch((e) => e);
    assert.ok(err instanceof AgentstreamError);
    assert.equal(err.code, 'not_found');
    assert.equal(err.status, 404);
    assert.match(err.message, /ses_none/);
    assert.equal(err.retryable, false);

    const a = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    const bad = await http.timeline(a.id, {direction: 'after'}).catch((e) => e);
    assert.equal(bad.code, 'invalid_argument');
    assert.equal(bad.status, 400);
    const cwd = await http.createAgent({provider: 'scripted', cwd: '/no/such/dir'}).catch((e) => e);
    assert.equal(cwd.code, 'invalid_argument');
    assert.match(cwd.message, /no\/such\/dir/);
    const past = await http.readEvents(a.id, {offset: '1:999999'}).catch((e) => e);
    assert.equal(past.status, 400);

    // No answer at all: a network error with status 0, after the retries.
    const nobody = new AgentstreamHttp({baseUrl: 'http://127.0.0.1:1', retries: 1, retryMinDelayMs: 10});
    const net = await nobody.listAgents().catch((e) => e);
    assert.equal(net.code, 'network');
    assert.equal(net.status, 0);
    assert.equal(net.retryable, true);
  });

  test('git actions: commit and merge a worktree agent\'s file into main', async () => {
    const repo = tempDir('agentstream-client-repo-');
    const git = (...args) => execFileSync('git', ['-C', repo, ...args], {encoding: 'utf8'}).trim();
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README.md'), 'hello\n');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first');
    const agent = await http.createAgent({provider: 'scripted', cwd: repo, worktree: true});
    assert.notEqual(agent.cwd, repo);
    fs.writeFileSync(path.join(agent.cwd, 'notes.md'), 'from the agent\n');

    const commit = await http.gitAction(agent.id, 'commit', {message: 'Add notes'});
    assert.equal(commit.agent, agent.id);
    assert.equal(commit.action, 'commit');
    assert.equal(commit.outcome, 'committed');
    assert.equal(commit.message, 'Add notes');
    assert.match(commit.commit, /^[0-9a-f]{40}$/);
    assert.equal(git('rev-parse', commit.branch), commit.commit);
    assert.deepEqual((await http.diff(agent.id)).files.map((f) => `${f.path}|${f.status}`), ['notes.md|added']);
    // Nothing left to commit: 409.
    const again = await http.gitAction(agent.id, 'commit').catch((e) => e);
    assert.ok(again instanceof AgentstreamError);
    assert.deepEqual([again.code, again.status], ['conflict', 409]);
    // A member another action takes: 400.
    const bad = await http.gitAction(agent.id, 'commit', {into: 'main'}).catch((e) => e);
    assert.equal(bad.status, 400);

    const merge = await http.gitAction(agent.id, 'merge');
    assert.equal(merge.outcome, 'fast-forward');
    assert.equal(merge.target, 'main');
    assert.equal(merge.commit, commit.commit);
    assert.equal(git('rev-parse', 'main'), commit.commit);
    assert.equal(git('show', 'main:notes.md'), 'from the agent');
    assert.equal((await http.gitAction(agent.id, 'merge')).outcome, 'up-to-date');

    const {events} = await readAllEvents(http, agent.id);
    const actions = events.filter((e) => e.kind === 'workspace.action');
    assert.deepEqual(actions.map((e) => `${e.epoch}:${e.seq} ${e.payload.action} ${e.payload.outcome}`),
                     [`${commit.cursor} commit committed`, `${merge.cursor} merge fast-forward`,
                      `${actions[2]?.epoch}:${actions[2]?.seq} merge up-to-date`]);
  });

  test('a token', async () => {
    const guarded = await new Daemon({token: 'sekrit-token'}).start();
    try {
      const anon = new AgentstreamHttp({baseUrl: guarded.baseUrl});
      const e = await anon.listAgents().catch((x) => x);
      assert.equal(e.code, 'unauthorized');
      assert.equal(e.status, 401);
      const owner = new AgentstreamHttp({baseUrl: guarded.baseUrl, token: 'sekrit-token'});
      assert.ok(Array.isArray(await owner.listAgents()));
      assert.match(owner.websocketUrl(), /^ws:\/\/127\.0\.0\.1:\d+\/ws\?token=sekrit-token$/);
    } finally {
      await guarded.stop();
    }
  });
});

describe('schedules', {skip: SKIP, timeout: 60000}, () => {
  let daemon;
  let http;
  before(async () => {
    // Ticks a second apart need a floor under the default of one a minute.
    daemon = await new Daemon({args: ['--schedule-floor', '1s']}).start();
    http = new AgentstreamHttp({baseUrl: daemon.baseUrl});
  });
  after(async () => daemon?.stop());

  const TICK = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

  test('an interval schedule fires into its agent, once per tick; pause, resume, delete', async () => {
    const agent = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    const made = await http.createSchedule({id: 'every-second', every: '1s', agent: agent.id,
                                            prompt: 'tick {{tick}} of {{schedule}}'});
    assert.deepEqual([made.id, made.every, made.agent, made.missed, made.paused, made.lastTick, made.pendingTick],
                     ['every-second', '1s', agent.id, 'skip', false, null, null]);
    assert.equal(made.timezone, undefined);
    assert.match(made.nextTick, TICK);
    assert.ok((await http.listSchedules()).some((s) => s.id === 'every-second'));

    // The first tick comes a second after the creation; the daemon looks once a second.
    const first = await until(async () => {
      const shown = await http.showSchedule('every-second');
      return shown.firings.find((f) => f.outcome === 'fired');
    }, 'a fired tick', 15000);
    const paused = await http.pauseSchedule('every-second');
    assert.equal(paused.paused, true);
    assert.equal(paused.nextTick, null);
    assert.match(paused.lastTick, TICK);
    assert.match(first.tick, TICK);
    assert.equal(first.agent, agent.id);
    assert.equal(first.clientMessageId, `schedule:every-second:${first.tick}`);
    assert.ok(first.turnId, 'the prompt to an idle agent starts a turn');
    const done = await until(async () => {
      const shown = await http.showSchedule('every-second', {firings: 100});
      const f = shown.firings.find((x) => x.tick === first.tick);
      return f?.turnOutcome === 'completed' && shown;
    }, 'the fired turn completed');
    assert.ok(done.firings.length >= 1 && done.firings.length <= 100);
    assert.ok(done.firings.every((f, i) => i === 0 || f.tick < done.firings[i - 1].tick), 'newest first');

    // The agent's log: one automation.fired per fired tick, keyed by the tick, before its prompt.
    await until(async () => (await http.getAgent(agent.id)).status === 'idle', `${agent.id} idle`);
    const {events} = await readAllEvents(http, agent.id);
    const fired = events.filter((e) => e.kind === 'automation.fired');
    const keys = fired.map((e) => e.payload.key);
    assert.equal(new Set(keys).size, keys.length, 'each tick once');
    const mine = fired.find((e) => e.payload.key === first.tick);
    assert.deepEqual(mine.payload, {source: 'schedule', id: 'every-second', key: first.tick, missingFields: []});
    const prompt = events.find((e) => e.kind === 'user.message' && e.payload.clientMessageId === first.clientMessageId);
    assert.equal(prompt.payload.text, `tick ${first.tick} of every-second`);
    assert.ok(prompt.seq > mine.seq);

    // Paused: no more firings (one in flight at the pause may still be recorded: wait it out).
    await new Promise((r) => setTimeout(r, 1500));
    const recorded = (await http.showSchedule('every-second', {firings: 100})).firings.length;
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal((await http.showSchedule('every-second', {firings: 100})).firings.length, recorded);
    // Pausing again changes nothing; resuming goes on from the next tick.
    assert.equal((await http.pauseSchedule('every-second')).paused, true);
    const resumed = await http.resumeSchedule('every-second');
    assert.equal(resumed.paused, false);
    assert.match(resumed.nextTick, TICK);

    await http.deleteSchedule('every-second');
    assert.ok(!(await http.listSchedules()).some((s) => s.id === 'every-second'));
    await assert.rejects(http.showSchedule('every-second'),
                         (e) => e instanceof AgentstreamError && e.code === 'not_found' && e.status === 404);
    await assert.rejects(http.deleteSchedule('every-second'), (e) => e.status === 404);
  });

  test('a cron schedule in a time zone that makes an agent from a template', async () => {
    // The system's zoneinfo (the daemon reads it); UTC is built in.
    const zone = fs.existsSync('/usr/share/zoneinfo/Europe/Berlin') ? 'Europe/Berlin' : 'UTC';
    const template = {provider: 'scripted', cwd: '/tmp', title: 'Standup {{date}}'};
    const made = await http.createSchedule({id: 'standup', cron: '0 9 * * 1-5', timezone: zone, template,
                                            prompt: 'Summarize what changed since yesterday ({{date}})',
                                            missed: 'run-once'});
    assert.deepEqual([made.cron, made.timezone, made.missed, made.agent, made.every],
                     ['0 9 * * 1-5', zone, 'run-once', undefined, undefined]);
    assert.deepEqual(made.template, template);
    // The next tick: 09:00 on a weekday in the zone.
    const next = new Date(made.nextTick);
    assert.ok(next.getTime() > Date.now());
    const inZone = (o) => new Intl.DateTimeFormat('en-GB', {timeZone: zone, ...o}).format(next);
    assert.ok(['Mon', 'Tue', 'Wed', 'Thu', 'Fri'].includes(inZone({weekday: 'short'})), made.nextTick);
    assert.equal(inZone({hour: '2-digit', minute: '2-digit', hourCycle: 'h23'}), '09:00');
    const shown = await http.showSchedule('standup');
    assert.deepEqual(shown.firings, []);
    assert.equal(shown.template.title, 'Standup {{date}}');
    await http.deleteSchedule('standup');
  });

  test('refusals: the daemon\'s words, naming what is wrong', async () => {
    const agent = await http.createAgent({provider: 'scripted', cwd: '/tmp'});
    const refused = async (definition, code, status, words) => {
      const e = await http.createSchedule(definition).catch((x) => x);
      assert.ok(e instanceof AgentstreamError, JSON.stringify(definition));
      assert.deepEqual([e.code, e.status], [code, status], e.message);
      assert.match(e.message, words);
    };
    const base = {id: 'r', agent: agent.id, prompt: 'x'};
    await refused({...base, cron: '0 9 * * *', every: '1h'}, 'invalid_argument', 400, /cron.*every/);
    await refused({...base}, 'invalid_argument', 400, /cron.*every/);
    await refused({...base, every: '1h', colour: 'blue'}, 'invalid_argument', 400, /colour/);
    await refused({...base, every: '500ms'}, 'invalid_argument', 400, /interval/);
    await refused({...base, cron: '0 25 * * *'}, 'invalid_argument', 400, /cron/);
    await refused({...base, cron: '0 0 30 2 *'}, 'invalid_argument', 400, /never fires/);
    await refused({...base, cron: '0 9 * * *', timezone: 'Mars/Olympus'}, 'invalid_argument', 400, /timezone/);
    await refused({...base, every: '1h', timezone: 'UTC'}, 'invalid_argument', 400, /timezone/);
    await refused({id: 'r', every: '1h', prompt: 'x'}, 'invalid_argument', 400, /agent.*template/);
    await refused({...base, every: '1h', missed: 'later'}, 'invalid_argument', 400, /missed/);
    await refused({...base, id: 'no spaces', every: '1h'}, 'invalid_argument', 400, /id/);
    await http.createSchedule({...base, id: 'taken', every: '1d'});
    await refused({...base, id: 'taken', every: '1d'}, 'already_exists', 409, /taken exists/);
    for (const firings of [0, 101]) {
      await assert.rejects(http.showSchedule('taken', {firings}),
                           (e) => e.code === 'invalid_argument' && e.status === 400 && /firings/.test(e.message));
    }
    for (const call of [() => http.pauseSchedule('none'), () => http.resumeSchedule('none'), () => http.showSchedule('none')])
      await assert.rejects(call(), (e) => e instanceof AgentstreamError && e.code === 'not_found' && e.status === 404);
    await http.deleteSchedule('taken');
  });
});

describe('imports', {skip: SKIP, timeout: 60000}, () => {
  // A claude transcript in the daemon's own HOME (docs/import.md): one prompt and its answer.
  const home = tempDir('agentstream-client-home-');
  const cwd = '/tmp/imported-work';
  const sessionId = '3f6c1b2a-9d8e-4c7b-a6f5-0e1d2c3b4a59';
  const file = path.join(home, '.claude', 'projects', '-tmp-imported-work', `${sessionId}.jsonl`);
  const line = (type, uuid, content) => JSON.stringify({type, uuid, sessionId, cwd, message: {role: type, content}}) + '\n';
  let daemon;
  let http;
  before(async () => {
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(file, line('user', 'u1', 'count the marmosets') +
                           line('assistant', 'a1', [{type: 'text', text: 'three marmosets'}]));
    daemon = await new Daemon({env: {HOME: home, CLAUDE_CONFIG_DIR: ''}}).start();
    http = new AgentstreamHttp({baseUrl: daemon.baseUrl});
  });
  after(async () => daemon?.stop());

  test('list, import, import again', async () => {
    const list = await http.listImports('claude', {project: cwd});
    assert.equal(list.transcripts.length, 1);
    assert.equal(list.transcripts[0].sessionId, sessionId);
    assert.equal(list.transcripts[0].agent, undefined);

    const first = await http.importTranscript('claude', list.transcripts[0].path);
    assert.equal(first.outcome, 'created');
    assert.equal(first.agent.imported, 'claude');
    assert.equal(first.agent.title, 'count the marmosets');
    assert.equal(first.importedBytes, fs.statSync(file).size);
    const page = await http.timeline(first.agent.id);
    assert.ok(JSON.stringify(page).includes('three marmosets'));

    const again = await http.importTranscript('claude', list.transcripts[0].path);
    assert.equal(again.outcome, 'unchanged');
    assert.equal(again.agent.id, first.agent.id);
    const listed = (await http.listImports('claude')).transcripts[0];
    assert.equal(listed.agent, first.agent.id);
    assert.equal(listed.continued, false);

    await assert.rejects(http.importTranscript('claude', '/etc/passwd'),
                         (e) => e instanceof AgentstreamError && e.status === 400);
  });
});
