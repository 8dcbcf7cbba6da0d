// Every Redis key and channel the store uses, in one place. Hash tags ({...}) put the keys one script
// touches in one slot, so the same scripts run on Redis Cluster (CONTRACT 9).
import { monthWindow, type MonthKey, type MonthWindow } from '../../quota/month.ts';

export const PREFIX = 'celebrity-api';

/** The accounts: one hash of records by id, the email index, the change log and its version. */
export const ACCOUNT_KEYS = Object.freeze({
  records: `${PREFIX}:{accounts}:records`,
  emails: `${PREFIX}:{accounts}:emails`,
  /** Sorted set: account id -> the version of its last change (what a replica asks for). */
  changes: `${PREFIX}:{accounts}:changes`,
  version: `${PREFIX}:{accounts}:version`,
  /**
   * Names the history the version counts in: set (from the server's clock) when the version starts
   * again at 1 (a Redis flushed, or restarted empty). A replica that saw another one reloads in full,
   * even when the new history has reached the version it had.
   */
  epoch: `${PREFIX}:{accounts}:epoch`,
});
/** The five account keys in the order the scripts take them. */
export const ACCOUNT_KEY_LIST = [ACCOUNT_KEYS.records, ACCOUNT_KEYS.emails, ACCOUNT_KEYS.changes, ACCOUNT_KEYS.version, ACCOUNT_KEYS.epoch] as const;

/** Every account change publishes its version here: the fast path of propagation (replica.ts). */
export const CHANGES_CHANNEL = `${PREFIX}:accounts:changed`;
/**
 * The same on a cluster, where it is a sharded channel (SPUBLISH, Redis 7): hash-tagged like the
 * account keys, so the scripts may publish to it and the message stays on that shard instead of
 * crossing every node's cluster bus.
 */
export const SHARDED_CHANGES_CHANNEL = `${PREFIX}:{accounts}:changed`;

/**
 * One hash per account and UTC month: `u` units taken (200s and requests in flight), `t` the last
 * use in ms, `s:<day>` and `r:<day>` the day's successes and rejections.
 */
export const monthKey = (account: string, month: MonthKey) => `${PREFIX}:{${account}}:month:${month}`;

/** The usage table shows this month and the five before it (UsageFigures.months). */
export const MONTHS_KEPT = 6;

/**
 * When the month hash of `window` may go: the first instant of the seventh month after it, a month
 * after the last six-month usage table that shows it. Applied as a TTL from the server's clock
 * (PEXPIRE, not EXPIREAT), so an injected clock in another year never expires a live month.
 */
export function monthExpiresAt(window: MonthWindow): number {
  let end = window.end;
  for (let i = 0; i < MONTHS_KEPT; i++) end = monthWindow(end).end;
  return end;
}

export const sessionKey = (id: string) => `${PREFIX}:session:${id}`;
/** The secret the dashboard's pre-login form tokens are bound to (SessionStore.formKey). */
export const FORM_KEY = `${PREFIX}:form-key`;
/** The session ids of one account, so a password change can end them all (deleteForAccount). */
export const accountSessionsKey = (account: string) => `${PREFIX}:{${account}}:sessions`;
/**
 * Every throttle counter in one slot ({throttle}): a password check is reserved against three of them
 * in one script (scripts.ts throttleReserve). Login traffic is small, so one node holding them all costs nothing.
 */
export const throttleKey = (key: string) => `${PREFIX}:{throttle}:${key}`;
