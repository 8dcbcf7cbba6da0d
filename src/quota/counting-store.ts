// What the quota gate needs of a store (CONTRACT 4 and 9): the key lookup, one unit reserved and
// settled, the usage figures, health. The gate stands below src/store/, so it names this here and
// both stores implement it as part of their Store (src/store/types.ts).
import type { AccountService, AccountView } from '../access/types.ts';
import type { Quota } from '../access/plans.ts';
import type { DayKey, Moment, MonthKey } from './month.ts';

/** The part of a Store the gate and the usage service use. */
export interface CountingStore {
  /** For logs and /metrics labels only: nothing may branch on it. */
  readonly kind: 'memory' | 'file' | 'redis';
  /** Account and key operations: the same ones for the CLI, the dashboard and the embedding API. */
  readonly accounts: AccountService;
  /**
   * The hot-path key check: SHA-256 digest of a presented key -> its account. Answered from a local
   * replica that follows changes made anywhere within 2 seconds (CONTRACT 4 and 9), so it is
   * synchronous and costs a Map lookup.
   */
  lookupKey(digest: string): AccountView | undefined;
  /**
   * Calls `listener` whenever what lookupKey answers may have changed (a key made, rotated or
   * revoked, a plan changed, here or by another process), as it changes: threads that keep their own
   * view of the keys drop it (src/threads/shared-quota.ts). Absent: no such view may be kept.
   */
  onKeysChanged?(listener: () => void): void;
  readonly quota: QuotaStore;
  /** Health for /healthz and /api/v1 (false: 503), and the store's own series for /metrics. */
  status(): StoreStatus;
  /** Makes what was counted durable (the file store's log); a no-op where every change already is. */
  flush(): Promise<void>;
  /** Flushes, stops following changes and releases what the store holds (locks, connections). */
  close(): Promise<void>;
}

/** An admitted request's reservation, to be settled exactly once. Implementations extend it. */
export interface QuotaTicket {
  readonly account: string;
  /** The plan's monthly quota when reserved; null = unlimited. */
  readonly total: Quota;
  /** Units left after this reservation (what RateLimit `r` says); null when unlimited. */
  readonly remaining: number | null;
  /** The month and day it counts in (the gate's per-day Moment object). */
  readonly at: Moment;
}

/** A reserved unit, or null when the month is used up (the store has then counted the day's rejection). */
export type Reservation = QuotaTicket | null;

export interface QuotaStore {
  /**
   * Reserves one unit of the month atomically, or refuses when the month's count (with the units
   * reserved by requests in flight, on any instance) has reached `total`. Never counts first and
   * refunds later. Synchronous where the counters are local; a Promise where they are remote, which
   * rejects with StoreUnavailableError when the store cannot answer in time.
   */
  reserve(account: string, total: Quota, at: Moment, now: number): Reservation | Promise<Reservation>;
  /**
   * Once per reservation: a 200 keeps the unit, a 304 gives it back and counts nothing (a
   * revalidation is neither a success nor a rejection, CONTRACT 11), anything else gives it back and
   * counts a rejection for the day. Returns a Promise when the answer must wait until the count is durable
   * (`--usage-durability strict`, CONTRACT 4), else null. The Promise rejects with
   * StoreUnavailableError when the count could not be made durable: the unit is then given back.
   */
  settle(ticket: QuotaTicket, status: number): Promise<void> | null;
  /** The account's figures around `at`: this month, its days, the last six months, the last use. */
  report(account: string, at: Moment): Promise<UsageFigures>;
  /** Puts the month's count at `used` (test suites); resolves once that is durable. */
  set(account: string, used: number, at: Moment): Promise<void>;
  /** Puts the account's month at these figures, days and last use included (`state import`); resolves once durable. */
  restore(account: string, month: MonthFigures, at: Moment): Promise<void>;
  /** Present where the counters are this process's own: threads then reserve in shared memory (src/threads/). */
  readonly elsewhere?: CountedElsewhere;
  /** Present where the counters are in a server every thread can reach (Redis): each thread then has its own connection. */
  readonly remote?: CountedRemotely;
}

/**
 * The counters of a shared server (Redis) for `serve --threads`: each thread opens its own
 * connection with what `connection` says and reserves there as one instance does; what it counted
 * goes to this process's usage log through record(), the log's one writer staying the main thread.
 */
export interface CountedRemotely {
  /** Plain data (posted to each thread): the server's URL and the same deadlines as the store's own. */
  readonly connection: { readonly url: string; readonly timeoutMs: number; readonly connectTimeoutMs: number };
  /** One request a thread counted, as reserve (refused: 429) and settle record it: 200 a success, 304 nothing, anything else a rejection. */
  record(account: string, day: DayKey, status: number, now: number): void;
}

/**
 * The counters' side of units reserved outside the store, by Atomics on a shared copy of the count
 * (`serve --threads`, src/threads/shared-quota.ts): the store stays the one writer of the usage log.
 */
export interface CountedElsewhere {
  /** The month's units taken: counted and reserved here (a shared count starts from it). */
  taken(account: string, at: Moment): number;
  /**
   * One request whose unit was reserved elsewhere, settled with `status` (or refused: 429): counted as
   * reserve and settle count it, but never refused. The same Promise as settle's (strict durability).
   */
  count(account: string, total: Quota, at: Moment, now: number, status: number): Promise<void> | null;
  /**
   * `n` 200s counted (their Promise resolved) and never sent after all: the thread that held them
   * died first. They leave the month's count and the day's successes, as a strict timeout's do.
   */
  withdraw(account: string, at: Moment, n: number): void;
  /** Whether count() of a 200 on a plan with this quota returns a Promise (the 200 then waits for it). */
  waits(total: Quota): boolean;
  /** Told when a month's count is put (set, restore): the account, the month and how much it moved. */
  moved: ((account: string, month: MonthKey, delta: number) => void) | null;
  /**
   * Called before the counters are read or put (report, set): counts what was settled elsewhere and
   * not yet reported, so usage read after an answer arrived includes it, as with one thread.
   */
  catchUp: (() => void) | null;
}

/** One account's month as `state export` moves it. */
export interface MonthFigures {
  readonly used: number;
  readonly daily: readonly DailyUsage[];
  readonly lastUsedMs: number | null;
}

export interface DailyUsage {
  readonly date: DayKey;
  readonly success: number;
  readonly rejected: number;
}

export interface MonthlyUsage {
  readonly month: MonthKey;
  /** Requests counted against the quota that month (a `set` may differ from the days' successes). */
  readonly used: number;
  readonly success: number;
  readonly rejected: number;
}

export interface UsageFigures {
  /** 200 responses this month (with the Redis store, also units reserved by requests in flight). */
  readonly used: number;
  /** This month's days with any traffic, oldest first. */
  readonly daily: readonly DailyUsage[];
  /** This month and the five before it, newest first; months without traffic show zeros. */
  readonly months: readonly MonthlyUsage[];
  /** ms since the epoch of the account's last authenticated request, or null. */
  readonly lastUsedMs: number | null;
}

/** One Prometheus series a store exposes (names start with `celebrity_api_store_` or `celebrity_api_usage_`). */
export interface StoreMetric {
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  readonly help: string;
  readonly value: number;
  /** Optional labels, already escaped. */
  readonly labels?: string;
}

export interface StoreStatus {
  readonly healthy: boolean;
  readonly metrics: readonly StoreMetric[];
  /** What kind of store answers, for /healthz (absent: the store does not say). */
  readonly deployment?: StoreDeployment;
}

/**
 * The store behind the counts, as /healthz names it: the state directory's files (`memory` when it
 * has none), or Redis as one server, a cluster or a Sentinel-managed primary; and for Redis the
 * host:port of the primary that answered last ('' until known).
 */
export interface StoreDeployment {
  readonly mode: 'files' | 'memory' | 'single' | 'cluster' | 'sentinel';
  readonly node: string;
}

/** The shared store did not answer in time or refused: the request gets 503, nothing is served uncounted. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
