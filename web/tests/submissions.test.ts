import { describe, expect, it } from 'vitest';
import { AgentstreamError, type SendReply, type SubmissionStatus } from '@agentstream/client';
import { SubmissionRegistry, isSettled } from '../src/core/submissions';
import { rng } from './fake_daemon';

// What the package's Submissions reports (its sending and retrying are tested in the package,
// clients/typescript/test/submissions.test.mjs), fed to the registry by hand.
function report(reg: SubmissionRegistry, cmid: string, st: Partial<SubmissionStatus>) {
  const attempts = reg.get(cmid)?.attempts ?? 0;
  reg.onStatus({ clientMessageId: cmid, agentId: 'a', state: 'waiting', attempts, ...st });
}
function markSent(reg: SubmissionRegistry, cmid: string) {
  report(reg, cmid, { state: 'sending', attempts: (reg.get(cmid)?.attempts ?? 0) + 1 });
}
function onReply(reg: SubmissionRegistry, cmid: string, reply: Pick<SendReply, 'accepted' | 'outcome'> & Partial<SendReply>) {
  const full: SendReply = { turnId: null, cursor: '', message: '', ...reply };
  report(reg, cmid, { state: 'acknowledged', reply: { ...full, clientMessageId: cmid } });
}
function onRpcError(reg: SubmissionRegistry, cmid: string, message: string) {
  report(reg, cmid, { state: 'failed', error: new AgentstreamError('invalid_argument', message) });
}
// The connection dropped: the package puts every send in flight back to waiting.
function onTransportLost(reg: SubmissionRegistry) {
  for (const s of reg.openFor('a')) if (s.rpc === 'sent') report(reg, s.clientMessageId, { state: 'waiting' });
}
function unsent(reg: SubmissionRegistry) {
  return reg.openFor('a').filter((s) => s.rpc === 'unsent');
}

function make(reg: SubmissionRegistry, cmid: string, agentId = 'a') {
  return reg.create({ clientMessageId: cmid, agentId, text: cmid, attachments: [], whileRunning: 'queue', createdAt: 0 });
}

describe('SubmissionRegistry', () => {
  it('settles when the RPC reply and the provider acknowledgement arrive, in either order', () => {
    const reg = new SubmissionRegistry();
    make(reg, 'a1');
    make(reg, 'a2');
    markSent(reg, 'a1');
    markSent(reg, 'a2');
    onReply(reg, 'a1', { accepted: true, outcome: 'accepted', turnId: 't1' });
    expect(reg.openCount()).toBe(2); // acceptance alone does not settle
    reg.onProviderAck('a1');
    reg.onProviderAck('a2'); // acknowledgement first
    expect(reg.openCount()).toBe(1);
    onReply(reg, 'a2', { accepted: true, outcome: 'accepted', turnId: 't2' });
    expect(reg.openCount()).toBe(0);
    expect(isSettled(reg.get('a1')!)).toBe(true);
  });

  it('a directory observation of the accepted run settles only that RPC-accepted send', () => {
    const reg = new SubmissionRegistry();
    make(reg, 'x');
    make(reg, 'y');
    markSent(reg, 'x');
    markSent(reg, 'y');
    reg.onRunObserved('a', 't1'); // nothing is accepted yet: a fresh send cannot settle
    expect(reg.openCount()).toBe(2);
    onReply(reg, 'x', { accepted: true, outcome: 'accepted', turnId: 't1' });
    reg.onRunObserved('a', 't1');
    expect(reg.get('x')!.runObserved).toBe(true);
    expect(reg.openCount()).toBe(1);
  });

  it('a transport error after the provider acknowledged cannot roll the prompt back', () => {
    const reg = new SubmissionRegistry();
    make(reg, 'k');
    markSent(reg, 'k');
    reg.onProviderAck('k');
    onRpcError(reg, 'k', 'boom');
    expect(reg.get('k')!.rpc).toBe('accepted');
    expect(reg.get('k')!.error).toBeUndefined();
  });

  it('a rejected send fails; a queued one waits for the provider', () => {
    const reg = new SubmissionRegistry();
    make(reg, 'r');
    make(reg, 'q');
    markSent(reg, 'r');
    markSent(reg, 'q');
    onReply(reg, 'r', { accepted: false, outcome: 'rejected', message: 'closed' });
    onReply(reg, 'q', { accepted: true, outcome: 'queued' });
    expect(reg.get('r')!.rpc).toBe('failed');
    expect(reg.openFor('a').map((s) => s.clientMessageId)).toEqual(['q']);
    reg.onProviderAck('q');
    expect(reg.openCount()).toBe(0);
  });

  it('a lost connection puts unanswered sends back to be sent again with the same id', () => {
    const reg = new SubmissionRegistry();
    make(reg, 'l');
    markSent(reg, 'l');
    onTransportLost(reg);
    expect(unsent(reg).map((s) => s.clientMessageId)).toEqual(['l']);
    markSent(reg, 'l');
    onReply(reg, 'l', { accepted: true, outcome: 'duplicate', turnId: 't' });
    reg.onProviderAck('l');
    expect(reg.get('l')!.attempts).toBe(2);
    expect(reg.openCount()).toBe(0);
  });

  it('randomized orders of replies, acknowledgements, observations and reconnects settle every send', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const rand = rng(seed);
      const reg = new SubmissionRegistry();
      const n = 1 + Math.floor(rand() * 6);
      type Ev = { kind: 'reply' | 'ack' | 'observe' | 'lost'; id: string };
      const events: Ev[] = [];
      for (let i = 0; i < n; i++) {
        const id = `c${i}`;
        make(reg, id);
        markSent(reg, id);
        events.push({ kind: 'reply', id }, { kind: 'ack', id });
        if (rand() < 0.5) events.push({ kind: 'observe', id });
      }
      if (rand() < 0.5) events.push({ kind: 'lost', id: '' });
      for (let i = events.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [events[i], events[j]] = [events[j], events[i]];
      }
      const replied = new Set<string>();
      for (const ev of events) {
        if (ev.kind === 'reply') {
          const s = reg.get(ev.id)!;
          if (s.rpc === 'unsent') markSent(reg, ev.id); // resent after the reconnect
          onReply(reg, ev.id, { accepted: true, outcome: replied.has(ev.id) ? 'duplicate' : 'accepted', turnId: `t_${ev.id}` });
          replied.add(ev.id);
        } else if (ev.kind === 'ack') reg.onProviderAck(ev.id);
        else if (ev.kind === 'observe') reg.onRunObserved('a', `t_${ev.id}`);
        else onTransportLost(reg);
      }
      // Whatever was unanswered when the connection dropped is sent again and answered.
      for (const s of unsent(reg)) {
        markSent(reg, s.clientMessageId);
        onReply(reg, s.clientMessageId, { accepted: true, outcome: 'duplicate', turnId: `t_${s.clientMessageId}` });
      }
      expect(reg.openCount(), `seed ${seed}`).toBe(0);
      for (let i = 0; i < n; i++) {
        const s = reg.get(`c${i}`)!;
        // Settled by the acknowledgement or by observing its run; never failed, never lost.
        expect(s.rpc, `seed ${seed} c${i}`).toBe('accepted');
        expect(s.providerAck || s.runObserved, `seed ${seed} c${i}`).toBe(true);
      }
    }
  });
});
