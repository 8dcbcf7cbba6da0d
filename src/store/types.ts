// The one interface for what instances share (CONTRACT 9): accounts and keys, dashboard sessions,
// login throttles, quota reservations and settlements, daily counters. Two implementations, like
// hono's routers: `file/` (the state directory, or memory) and `redis/`. The gate, the CLI, the
// dashboard and startServer() talk only to this; nothing else knows which one runs. The part the
// gate uses is named in src/quota/counting-store.ts (the gate stands below this room).
import type { AccountRecord } from '../access/types.ts';
import type { Quota } from '../access/plans.ts';
import type { CountingStore, QuotaTicket } from '../quota/counting-store.ts';
import type { Moment } from '../quota/month.ts';

export type {
  CountedRemotely,
  CountingStore,
  DailyUsage,
  MonthFigures,
  MonthlyUsage,
  QuotaStore,
  QuotaTicket,
  Reservation,
  StoreDeployment,
  StoreMetric,
  StoreStatus,
  UsageFigures,
} from '../quota/counting-store.ts';
export { StoreUnavailableError } from '../quota/counting-store.ts';

/**
 * Which 200s wait for their usage record to be on disk (CONTRACT 4): `strict` all of them,
 * `interval` none, and the default `auto` those of plans with a finite quota (an unlimited plan has
 * no quota a lost count could overrun).
 */
const DURABILITIES = ['strict', 'interval', 'auto'] as const;
export type Durability = (typeof DURABILITIES)[number];

export interface Store extends CountingStore {
  readonly sessions: SessionStore;
  readonly throttle: ThrottleStore;
  /** Every account as stored, password hash and sealed key included (`state export`; never a key in clear). */
  exportAccounts(): Promise<AccountRecord[]>;
  /**
   * Installs accounts as exported (`state import`). Refuses with STORE_NOT_EMPTY when the store holds
   * accounts, unless `replace`, which removes them first.
   */
  importAccounts(records: readonly AccountRecord[], replace: boolean): Promise<void>;
}

/** A ticket as the stores make it: `open` until settled (a second settle gives nothing back), and when. */
export class Ticket implements QuotaTicket {
  open = true;
  constructor(
    readonly account: string,
    readonly total: Quota,
    readonly remaining: number | null,
    readonly at: Moment,
    readonly now: number,
  ) {}
}

/** A dashboard session as stored: never the cookie value, only its digest. */
export interface SessionRecord {
  /** SHA-256 (hex) of the session id the browser holds. */
  readonly id: string;
  readonly account: string;
  /** ms since the epoch; the absolute expiry counts from here (CONTRACT 8, ASVS 7.3). */
  readonly createdMs: number;
  /** ms since the epoch of the last request; the idle expiry counts from here. */
  readonly seenMs: number;
  /** The session's anti-CSRF secret (CONTRACT 8, ASVS 3.5.1). */
  readonly csrf: string;
  /**
   * ms since the epoch when the session ends unless seen again: the earlier of the idle and the
   * absolute expiry, on the dashboard's clock. A store may forget the record from then on (Redis: a
   * TTL of the time left), and its get() never answers it afterwards.
   */
  readonly expiresMs: number;
}

export interface SessionStore {
  /**
   * Adds or replaces. A put that only moves seenMs and expiresMs of a known session (the dashboard
   * refreshes them at most once a minute) may be made durable lazily: losing it only ends the
   * session sooner. Every other change is durable when the Promise resolves.
   */
  put(session: SessionRecord): Promise<void>;
  /**
   * Replaces a session that still exists, as put() does; false, writing nothing, when it has ended
   * meanwhile (a logout or a password change elsewhere), so a refresh never brings one back.
   */
  refresh(session: SessionRecord): Promise<boolean>;
  /** The record, or null when unknown or past its expiresMs. */
  get(id: string): Promise<SessionRecord | null>;
  delete(id: string): Promise<void>;
  /** Ends every session of the account but `keep` (a password change), or all of them (null). */
  deleteForAccount(account: string, keep: string | null): Promise<number>;
  /**
   * A random secret (base64url, 256 bits) that every instance on this store reads alike, made on
   * first use: the dashboard binds the token of its login and sign-up forms to it (an HMAC of the form
   * cookie), so a cookie and token pair chosen by the client is refused. Never logged, never sent.
   */
  formKey(): Promise<string>;
}

/** Counters that expire, shared by every instance: login throttling (CONTRACT 8, ASVS 6.3.1). */
export interface ThrottleStore {
  /** Adds one to `key`; the count expires `windowMs` after its first hit. Returns the new count. */
  hit(key: string, windowMs: number, now: number): Promise<number>;
  /** The live count of `key` (0 when expired or unknown). */
  count(key: string, now: number): Promise<number>;
  clear(key: string): Promise<void>;
  /**
   * Reserves one password check in a single atomic step, whatever runs in parallel on any instance:
   * refused (false, nothing counted) when `address` has reached `limits.address`, or when `account`
   * has reached `limits.account` and `pair` is not zero; else adds one to all three, as a failure,
   * before the password is hashed. Counting only after the ~100 ms hash let every request in flight
   * pass the check (issue 24). Counters start their window as hit() does.
   */
  reserve(keys: AttemptKeys, limits: AttemptLimits, now: number): Promise<boolean>;
  /**
   * Gives a reserved check back (the password was right): `address` and `account` down by one where
   * their window still runs, `pair` removed (the owner's failures at that address are forgiven).
   */
  release(keys: AttemptKeys, now: number): Promise<void>;
}

/** The three counters one password check is reserved against (src/dashboard/login-throttle.ts names them). */
export interface AttemptKeys {
  /** Every check from one client address (IPv6: its /64), whatever the account. */
  readonly address: string;
  /** Every check on one account, from anywhere. */
  readonly account: string;
  /** The checks on that account from that address. */
  readonly pair: string;
}

export interface AttemptLimits {
  readonly address: number;
  /** Past it, only addresses whose pair count is zero may still try the account. */
  readonly account: number;
  readonly windowMs: number;
}

