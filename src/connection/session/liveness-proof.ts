import { Fifo } from '../fifo.js';

/**
 * What an answer can prove: `plain` (a ping, a read, a multi, an error), `sync` and `failedSync`
 * (a sync's reply; only a successful one counts), `write` (a create, delete, setData or setACL
 * answered without error: the leader found the session live when it ran it).
 */
export type AnswerKind = 'plain' | 'sync' | 'failedSync' | 'write';

/**
 * Until when is our session certainly alive, whichever server we talk to?
 *
 * Only the leader expires sessions. It sets a session's expiry to (the moment it learns of a
 * touch) + the session timeout, rounded up to its next tick, and learns of touches in two ways:
 * requests from a client connected to the leader itself, and, for a client of a follower, the
 * list of sessions the follower saw since its last report, which the follower sends back in its
 * reply to each of the leader's pings (the leader pings every follower every tickTime/2). A
 * follower answers pings and reads on its own, so its reply says nothing about what the leader
 * knows: a follower frozen right after answering us never passes our touch on. (Java's client,
 * Curator and kazoo all assume it does; the recipes' design note made the same mistake.)
 *
 * What we can prove, on one connection, with `sync` (the follower forwards it to the leader and
 * answers only once the leader's reply came back through the same ordered link):
 *
 *   Let packet j (any request or ping) be sent at s_j and answered at e_j, let a sync k be sent
 *   at s_k ≥ e_j + G, answered at e_k, and let a later request m, a sync or a write, sent at
 *   s_m ≥ e_k, be answered. Then the leader processed a touch of our session from after s_j;
 *   if the session was still live then, the leader will not expire it before s_j + timeout.
 *
 *   Proof. The follower saw j at some a_j with s_j < a_j < e_j. The leader pings the follower at
 *   least every G, so it sent a ping P inside [e_j, s_k]. The leader sent its sync reply for k
 *   only after receiving k, which the follower forwarded after s_k, so P went first on the
 *   leader-to-follower link, and the follower, which handles that link in order, handled P
 *   before it could answer k (before e_k). Handling P, it wrote its reply R listing every session
 *   touched since its previous report: ours, touched at a_j < P, is in R or in an earlier report.
 *   The follower forwarded m after s_m ≥ e_k, so after R on the follower-to-leader link, and m
 *   was answered, so the leader received m, hence R before it, and touched our session at a time
 *   T_R with a_j < T_R < e_m. ∎
 *
 * A touch does nothing for a session the leader has already expired, and a sync is answered
 * even then (the leader's sync path ignores the session check's failure). So the chain counts:
 * - when m is a sync, only if m was answered while the previous proof still stood (e_m before
 *   its bound): then the session was live at T_R < e_m;
 * - when m is a write answered without error (create, delete, setData, setACL: not multi, whose
 *   header says 0 even when its ops failed), always: the leader checks the session before every
 *   write (PrepRequestProcessor), after T_R, and a session once expired stays so. This is how a
 *   proof that lapsed (a stall) is built again without a reconnect.
 *
 * A client connected to the leader, or to a standalone server, is touched by every packet the
 * server receives: the same rule holds there, only more conservatively. A handshake proves its
 * own send time: a new session is created by the leader, and a resumed one is revalidated by the
 * leader (Learner.validateSession), which touches it. Not a read-only server's: it has no leader
 * (before 3.7 it even resumes sessions on its own word).
 *
 * Not covered: an observer that syncs through a follower (observerMasterPort): its touches take
 * two relays to reach the leader, and this chain proves only one.
 *
 * G is the longest the leader may go between two pings to a follower: tickTime/2 plus its own
 * scheduling delay (Leader.lead waits tickTime/2, checks its quorum, then queues a ping to every
 * learner). ZooKeeper grants no session shorter than minSessionTimeout, 2 × tickTime by default,
 * so tickTime/2 ≤ timeout/4; we take G = timeout/4 + 100 ms (see relayBound in session.ts). That
 * is the assumption the lease's promise rests on: an operator who lowers minSessionTimeout below
 * 2 × tickTime breaks it. A leader paused as a whole (GC) pings late, but it expires nobody
 * while paused either.
 */
export class LivenessProof {
  private provenSentAt = 0;
  /** Recent answered packets, oldest first, thinned to one per `G / 32` (keeping the earlier: less proof, never more). */
  private answered = new Fifo<{ sentAt: number; answeredAt: number }>();
  /** The send time of the newest answered packet whose answer is at least G old: what a sync sent now can cover. */
  private coverable = 0;
  /** Syncs sent and not yet answered, each with the send time it will cover once chained. */
  private syncsInFlight = new Fifo<{ sentAt: number; covers: number }>();
  /** Answered syncs waiting for a later sync, sent after their answer, to chain them. */
  private chainable: { answeredAt: number; covers: number }[] = [];

  constructor(
    private readonly relayBound: () => number,
    private readonly timeout: () => number,
  ) {}

  /** G: how old an answer must be before a sync sent then can carry it (see the class comment). */
  get relayMs(): number {
    return this.relayBound();
  }

  /** The send time of the newest packet the leader has provably heard of (0: none yet). */
  get sentAt(): number {
    return this.provenSentAt;
  }

  /**
   * A session was established or resumed by a handshake sent at `sentAt`: the start of a new
   * chain, and proof in itself unless the server is read-only.
   */
  onHandshake(sentAt: number, answeredAt: number, readOnly: boolean): void {
    if (!readOnly) this.provenSentAt = Math.max(this.provenSentAt, sentAt);
    this.onConnectionLost();
    this.answered.push({ sentAt, answeredAt });
  }

  /** A proof chain holds only through one follower: a new connection starts afresh. */
  onConnectionLost(): void {
    this.answered = new Fifo();
    this.coverable = 0;
    this.syncsInFlight = new Fifo();
    this.chainable = [];
  }

  onSyncSent(now: number): void {
    this.advanceCoverable(now);
    this.syncsInFlight.push({ sentAt: now, covers: this.coverable });
  }

  /** A reply (or a ping's) arrived for a packet sent at `sentAt`: see AnswerKind. */
  onAnswer(sentAt: number, now: number, kind: AnswerKind): void {
    this.advanceCoverable(now);
    const last = this.answered.last();
    if (!last || now - last.answeredAt >= this.relayBound() / 32) this.answered.push({ sentAt, answeredAt: now });
    // Syncs are answered in the order sent: a failed one must still leave the queue.
    const trip = kind === 'sync' || kind === 'failedSync' ? this.syncsInFlight.shift() : undefined;
    if (kind === 'write' || (kind === 'sync' && now < this.provenSentAt + this.timeout())) this.chain(sentAt);
    if (kind === 'sync' && trip && trip.covers > this.provenSentAt) this.chainable.push({ answeredAt: now, covers: trip.covers });
  }

  /** A request sent at `sentAt` went through the leader: it chains every answered sync whose answer came before it was sent. */
  private chain(sentAt: number): void {
    this.chainable = this.chainable.filter((earlier) => {
      if (earlier.answeredAt > sentAt) return true;
      this.provenSentAt = Math.max(this.provenSentAt, earlier.covers);
      return false;
    });
  }

  /** Folds into `coverable` every answer at least G old: any sync sent from now on covers it (syncs in flight keep what they covered when sent). */
  private advanceCoverable(now: number): void {
    const limit = now - this.relayBound();
    for (let oldest = this.answered.peek(); oldest && oldest.answeredAt <= limit; oldest = this.answered.peek()) {
      this.coverable = Math.max(this.coverable, oldest.sentAt);
      this.answered.shift();
    }
  }
}
