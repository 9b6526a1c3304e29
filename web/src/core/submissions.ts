// Submission lifecycle (docs/web.md, "Submissions"): a record per send, keyed by client message id
// and separate from the row the user sees. It records transport acceptance (the send RPC) and
// provider acknowledgement (the canonical user message carrying the id) independently; it settles
// when both are known, in either order. A directory observation of the accepted run also settles an
// RPC-accepted record. Overlapping sends settle independently.
// The sending itself (the client message id on the wire, the retry with the same id across
// reconnects, bounded, with backoff) is the package's `Submissions`: this registry hears its
// changes through onStatus() and keeps only the page's own part, the record the rows show.
import type { Attachment, SendReply, SubmissionStatus, WhileRunning } from '@agentstream/client';

export type RpcState = 'unsent' | 'sent' | 'accepted' | 'queued' | 'failed';

export interface Submission {
  clientMessageId: string;
  agentId: string;
  text: string;
  attachments: Attachment[];
  whileRunning: WhileRunning;
  rpc: RpcState;
  providerAck: boolean;
  runObserved: boolean;
  turnId?: string;
  outcome?: SendReply['outcome'];
  error?: string;
  attempts: number;
  createdAt: number;
}

// Unsettled submissions kept at most; a send past it is refused rather than silently dropped.
export const MAX_OPEN_SUBMISSIONS = 256;

export function isSettled(s: Submission): boolean {
  if (s.rpc === 'failed') return true;
  if (s.providerAck) return s.rpc === 'accepted' || s.rpc === 'queued';
  return s.rpc === 'accepted' && s.runObserved;
}

export class SubmissionRegistry {
  private open = new Map<string, Submission>();
  private done = new Map<string, Submission>(); // recent settled records, bounded
  // Provider acknowledgements seen before their record reached "sent" (a page can race the RPC).
  private earlyAcks = new Set<string>();
  version = 0;

  create(init: Omit<Submission, 'rpc' | 'providerAck' | 'runObserved' | 'attempts'>): Submission {
    if (this.open.size >= MAX_OPEN_SUBMISSIONS) throw new Error('too many unsettled sends');
    const s: Submission = { ...init, rpc: 'unsent', providerAck: false, runObserved: false, attempts: 0 };
    if (this.earlyAcks.delete(s.clientMessageId)) s.providerAck = true;
    this.open.set(s.clientMessageId, s);
    this.version++;
    return s;
  }

  get(cmid: string): Submission | undefined {
    return this.open.get(cmid) ?? this.done.get(cmid);
  }

  // A change reported by the package's Submissions: waiting (for the connection or a retry),
  // sending, answered, or given up.
  onStatus(st: SubmissionStatus): void {
    const s = this.open.get(st.clientMessageId);
    if (!s) return;
    s.attempts = st.attempts;
    if (st.state === 'acknowledged') return this.onReply(s, st.reply!);
    if (st.state === 'failed') return this.onRpcError(s, st.error?.message ?? 'failed');
    s.rpc = st.state === 'sending' ? 'sent' : 'unsent';
    this.version++;
  }

  onProviderAck(cmid: string): void {
    const s = this.open.get(cmid);
    if (!s) {
      if (!this.done.has(cmid)) this.earlyAcks.add(cmid);
      if (this.earlyAcks.size > MAX_OPEN_SUBMISSIONS) this.earlyAcks.delete(this.earlyAcks.values().next().value!);
      return;
    }
    s.providerAck = true;
    this.settleIfDone(s);
  }

  // The agent directory shows `activeTurn`: it settles RPC-accepted records of that run only.
  onRunObserved(agentId: string, activeTurn: string | null): void {
    if (!activeTurn) return;
    for (const s of [...this.open.values()]) {
      if (s.agentId === agentId && s.rpc === 'accepted' && s.turnId === activeTurn) {
        s.runObserved = true;
        this.settleIfDone(s);
      }
    }
  }

  openFor(agentId: string): Submission[] {
    return [...this.open.values()].filter((s) => s.agentId === agentId);
  }

  openCount(): number {
    return this.open.size;
  }

  private onReply(s: Submission, reply: Pick<SendReply, 'outcome'> & Partial<SendReply>): void {
    s.outcome = reply.outcome;
    if (reply.turnId) s.turnId = reply.turnId;
    if (reply.outcome === 'accepted' || reply.outcome === 'duplicate') s.rpc = 'accepted';
    else if (reply.outcome === 'queued') s.rpc = 'queued';
    else if (s.providerAck)
      s.rpc = 'accepted'; // observed canonically: cannot be rolled back
    else {
      s.rpc = 'failed';
      s.error = reply.message || reply.outcome;
    }
    this.settleIfDone(s);
  }

  // The daemon refused the send, or the package gave up retrying it.
  private onRpcError(s: Submission, message: string): void {
    if (s.providerAck) s.rpc = 'accepted';
    else {
      s.rpc = 'failed';
      s.error = message;
    }
    this.settleIfDone(s);
  }

  private settleIfDone(s: Submission): void {
    this.version++;
    if (!isSettled(s)) return;
    this.open.delete(s.clientMessageId);
    this.done.set(s.clientMessageId, s);
    if (this.done.size > MAX_OPEN_SUBMISSIONS) this.done.delete(this.done.keys().next().value!);
  }
}
