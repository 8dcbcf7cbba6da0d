// This instance's copy of the active keys (digest -> account), so the key check of every request is a
// Map lookup. It follows every change made anywhere within 2 s (CONTRACT 4 and 9), two ways:
// - pub/sub: each change publishes its version; a message starts a catch-up at once (milliseconds).
//   Messages are fire-and-forget: lost while the subscriber reconnects, and never replayed.
// - the version key, polled every pollMs (500 ms): what the guarantee rests on. A catch-up asks for
//   every account changed after the version it last saw, so a missed message, a reconnect or a
//   restarted Redis are all caught at the next poll, whatever happened to the messages.
// A node that lacks accounts this instance knows (one restarted empty, a promoted replica that lagged)
// never locks their customers out at once: see fetch().
import type { AccountRecord, AccountView } from '../../access/types.ts';
import type { Logger } from '../../log.ts';
import { StoreUnavailableError, type StoreMetric } from '../types.ts';
import { ACCOUNT_KEY_LIST } from './keys.ts';
import type { RedisLink } from './link.ts';

interface Known {
  /** The account version this entry reflects: an older answer never overwrites a newer one (-1: kept though Redis lacks it). */
  readonly version: number;
  readonly digest: string | null;
}

export interface ReplicaOptions {
  /**
   * How long a key is kept after a full answer from Redis stopped naming its account (ms). Past it, a
   * full answer that still lacks the account drops the key.
   */
  readonly missingGraceMs?: number;
  readonly clock?: () => number;
}

/** Past this, a catch-up that keeps failing is a warning and changes made elsewhere (revocations) wait (CONTRACT 4: 2 s). */
const FAILING_WARN_MS = 2000;
/** Default of ReplicaOptions.missingGraceMs: longer than Sentinel takes to demote a restarted old primary. */
export const MISSING_GRACE_MS = 60_000;
/** While keys are kept that Redis lacks, a full answer is asked for after 1 s, then 2, 4, ... (the data may be back). */
const FIRST_RECHECK_MS = 1000;

export class KeyReplica {
  private byDigest = new Map<string, AccountView>();
  private byId = new Map<string, Known>();
  /** The latest version whose changes are all here, and the epoch it counts in (keys.ts). */
  private since = 0;
  private epoch = '';
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private syncs = 0;
  private lastSyncMs = 0;
  /** Catch-ups that failed, and since when they fail (0: the last one succeeded). */
  private failures = 0;
  private failingSince = 0;
  private failingWarned = false;
  /** Accounts kept though the last full answer lacked them: id -> when they were first found missing. */
  private readonly missing = new Map<string, number>();
  private recheckAt = 0;
  private recheckMs = FIRST_RECHECK_MS;
  private readonly missingGraceMs: number;
  private readonly clock: () => number;
  /** Told after a catch-up or an own change that altered what lookup() answers (threads drop their view of the keys). */
  private readonly changed: (() => void)[] = [];

  constructor(
    private readonly link: RedisLink,
    private readonly log: Logger,
    options: ReplicaOptions = {},
  ) {
    this.missingGraceMs = options.missingGraceMs ?? MISSING_GRACE_MS;
    this.clock = options.clock ?? Date.now;
  }

  lookup(digest: string): AccountView | undefined {
    return this.byDigest.get(digest);
  }

  /** Loads every account, then follows changes (subscribe, poll, catch up after a reconnect). */
  async follow(pollMs: number): Promise<void> {
    await this.sync();
    await this.link.subscribe((message) => {
      if (Number(message) > this.since) this.catchUp();
    });
    this.link.onReady(() => this.catchUp());
    this.timer = setInterval(() => this.catchUp(), pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Calls `listener` whenever what lookup() answers may have changed, right after it has. */
  onChange(listener: () => void): void {
    this.changed.push(listener);
  }

  /** Installs a record this instance just wrote (at `version`), so its own change applies at once. */
  apply(record: AccountRecord, version: number): void {
    if (this.install(record.id, record, version)) this.tell();
  }

  private tell(): void {
    for (const l of this.changed) l();
  }

  /**
   * A failure is one warning once catch-ups have failed for FAILING_WARN_MS while Redis answers (an
   * error reply, an answer of the wrong shape, or other calls succeeding: this instance may be serving
   * with keys that changed elsewhere). A Redis that answers nothing is the link's to report: every
   * request gets 503 then, and the failover is one line (issue 22). The metrics show both.
   */
  private catchUp(): void {
    this.sync().catch((err: Error) => {
      this.failures++;
      const now = this.clock();
      if (this.failingSince === 0) this.failingSince = now;
      if (!this.failingWarned && now - this.failingSince > FAILING_WARN_MS && (answeredWithError(err) || this.link.healthy)) {
        this.failingWarned = true;
        this.log.warn('account replica: catch-up failing; key changes made elsewhere (revocations, new keys) do not apply here until it succeeds', { seconds: (now - this.failingSince) / 1000, version: this.since, error: err.message });
      } else {
        this.log.debug('account replica: catch-up failed; keeping the keys it has', { error: err.message });
      }
    });
  }

  /** One catch-up at a time; a request for one while it runs makes it run once more after. */
  sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.fetch().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.catchUp();
      }
    });
    return this.running;
  }

  /**
   * One catch-up. A full answer (the first load, or a Redis whose version is behind the one seen here:
   * a restart that lost writes, a promoted replica that lagged, a node not yet demoted) is taken as
   * that node's state, with one exception: an account it does not name at all is kept, with its key.
   * The change log never forgets an account (a deletion is recorded as a change), so a full answer
   * lacking one means the node lacks data, not that the account went; wiping it locked every customer
   * out on the word of a node that was about to be replaced, and for good when the node then gained
   * a change of its own, since later catch-ups ask only for what changed after its version. Kept keys
   * are looked for again in full answers after 1, 2, 4... s, and dropped only when one still lacks
   * them after missingGraceMs: a loss that lasts is then confirmed (no one could revoke those keys).
   */
  private async fetch(): Promise<void> {
    const now = this.clock();
    const recheck = this.missing.size > 0 && now >= this.recheckAt;
    const asked = recheck ? 0 : this.since;
    const reply = await this.link.script('sync', 'syncAccounts', ACCOUNT_KEY_LIST, [String(asked), this.epoch]);
    // Checked, so that an answer of another shape fails the catch-up instead of setting `since` to NaN.
    if (!Array.isArray(reply) || reply.length % 2 !== 1 || !Number.isSafeInteger(Number(reply[0])) || typeof reply[2] !== 'string') {
      throw new Error(`unexpected answer to syncAccounts: ${JSON.stringify(reply)?.slice(0, 80)}`);
    }
    const version = Number(reply[0]);
    const full = reply[1] === 1;
    let changed = false;
    if (full) {
      const named = new Set<string>();
      for (let i = 3; i < reply.length; i += 2) named.add(reply[i] as string);
      changed = this.rebase(named, version, asked, now);
    }
    this.epoch = reply[2];
    for (let i = 3; i < reply.length; i += 2) {
      const id = reply[i] as string;
      const json = reply[i + 1] as string;
      if (this.install(id, json === '' ? null : (JSON.parse(json) as AccountRecord), version)) changed = true;
      this.found(id);
    }
    this.since = version;
    this.syncs++;
    this.lastSyncMs = this.clock();
    if (this.failingWarned) this.log.info('account replica: catching up again', { seconds: (now - this.failingSince) / 1000, version });
    this.failingSince = 0;
    this.failingWarned = false;
    // A poll that found nothing new tells no one: the threads' views of the keys stay (every 500 ms).
    if (changed) this.tell();
  }

  /**
   * A full answer: the node's versions become the reference (they may be behind the ones seen here);
   * accounts it does not name are kept as missing, or dropped once their grace is over.
   */
  private rebase(named: ReadonlySet<string>, version: number, asked: number, now: number): boolean {
    let changed = false;
    const kept: string[] = [];
    const dropped: string[] = [];
    for (const [id, known] of this.byId) {
      if (named.has(id)) {
        // Installed again below from the node's record, whatever version it had here.
        this.byId.set(id, { version: -1, digest: known.digest });
        continue;
      }
      const since = this.missing.get(id) ?? now;
      if (known.digest !== null && now - since < this.missingGraceMs) {
        this.missing.set(id, since);
        this.byId.set(id, { version: -1, digest: known.digest });
        kept.push(id);
      } else {
        if (known.digest) this.byDigest.delete(known.digest);
        this.byId.delete(id);
        this.missing.delete(id);
        if (known.digest) dropped.push(id);
        changed = true;
      }
    }
    // Asked for changes after a version and answered in full: the node is behind what was seen here,
    // or counts in another epoch (flushed, or restarted empty, since).
    if (asked > 0) this.log.warn('account replica: Redis holds an older account history than this instance saw; taking its accounts', { had: this.since, now: version });
    if (kept.length > 0) {
      let first = now;
      for (const since of this.missing.values()) first = Math.min(first, since);
      if (kept.some((id) => this.missing.get(id) === now)) this.log.warn('account replica: Redis lacks accounts this instance knows; keeping their keys until it has them again or the grace ends', { missing: kept.length, graceSeconds: this.missingGraceMs / 1000, version });
      // The next look in full: sooner and sooner apart, the last one right at the end of the grace.
      this.recheckAt = Math.min(now + this.recheckMs, first + this.missingGraceMs);
      this.recheckMs *= 2;
    }
    if (dropped.length > 0) {
      this.log.error('account replica: Redis still lacks accounts after the grace; their keys no longer work here', { dropped: dropped.length, graceSeconds: this.missingGraceMs / 1000, version });
    }
    return changed;
  }

  /** An account the node named: no longer missing. */
  private found(id: string): void {
    if (!this.missing.delete(id)) return;
    if (this.missing.size === 0) {
      this.recheckMs = FIRST_RECHECK_MS;
      this.log.info('account replica: Redis has every account this instance knows again', { version: this.since });
    }
  }

  /** Whether the record was newer than the one known (what lookup() answers may then differ). */
  private install(id: string, record: AccountRecord | null, version: number): boolean {
    const known = this.byId.get(id);
    if (known && known.version >= version) return false;
    const digest = record?.key?.digest ?? null;
    if (known?.digest) this.byDigest.delete(known.digest);
    if (record && digest) this.byDigest.set(digest, Object.freeze({ id: record.id, email: record.email, plan: record.plan }));
    this.byId.set(id, { version, digest });
    return true;
  }

  metrics(now = this.clock()): StoreMetric[] {
    return [
      { name: 'celebrity_api_store_replica_keys', type: 'gauge', help: 'Active keys in this instance\'s replica of the accounts.', value: this.byDigest.size },
      { name: 'celebrity_api_store_replica_version', type: 'gauge', help: 'The account version the replica has caught up to.', value: this.since },
      { name: 'celebrity_api_store_replica_syncs_total', type: 'counter', help: 'Catch-ups of the replica (polls, messages, reconnects).', value: this.syncs },
      { name: 'celebrity_api_store_replica_sync_failures_total', type: 'counter', help: 'Catch-ups of the replica that failed (Redis unreachable, or an unexpected answer).', value: this.failures },
      { name: 'celebrity_api_store_replica_failing_seconds', type: 'gauge', help: 'How long catch-ups have been failing (0: the last one succeeded); past 2 s, changes made elsewhere wait.', value: this.failingSince === 0 ? 0 : (now - this.failingSince) / 1000 },
      { name: 'celebrity_api_store_replica_missing_keys', type: 'gauge', help: 'Keys kept though Redis lacks their accounts (a node that lost data); dropped once it still lacks them after the grace.', value: this.missing.size },
      { name: 'celebrity_api_store_replica_age_seconds', type: 'gauge', help: 'Time since the last successful catch-up; past 2 s, changes may be missed.', value: this.lastSyncMs === 0 ? 0 : (now - this.lastSyncMs) / 1000 },
    ];
  }
}

/** Whether Redis answered, with an error (node-redis's ErrorReply: WRONGTYPE, LOADING, a script error), or an answer of the wrong shape. */
function answeredWithError(err: Error): boolean {
  if (!(err instanceof StoreUnavailableError)) return true;
  for (let p = err.cause === undefined ? null : Object.getPrototypeOf(err.cause); p !== null; p = Object.getPrototypeOf(p)) {
    if ((p as { constructor?: { name?: string } }).constructor?.name === 'ErrorReply') return true;
  }
  return false;
}
