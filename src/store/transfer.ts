// `state export` / `state import` (issue 10): accounts (password hashes and sealed keys, never a key
// in clear) and one month's counters, as a JSON document any store can write and read, so an operator
// can start on files and move to Redis, or back.
import { AccountError, type AccountRecord } from '../access/types.ts';
import { CalendarCache, isDayKey, monthOfDay, monthWindow, type MonthKey } from '../quota/month.ts';
import { checkStore } from './file/store-file.ts';
import { isCount } from './file/usage-records.ts';
import type { DailyUsage, MonthFigures, Store } from './types.ts';

export const STATE_FORMAT = 'celebrity-api-state';

export interface AccountUsageDump extends MonthFigures {
  readonly account: string;
}

export interface StateDump {
  readonly format: typeof STATE_FORMAT;
  readonly version: 1;
  readonly exportedAt: string;
  /** The UTC month the counters are of. */
  readonly month: MonthKey;
  readonly accounts: readonly AccountRecord[];
  /** Accounts with any use that month (others have nothing to move). */
  readonly usage: readonly AccountUsageDump[];
}

export async function exportState(store: Store, now: number): Promise<StateDump> {
  const at = new CalendarCache(now).moment(now);
  const accounts = await store.exportAccounts();
  const usage: AccountUsageDump[] = [];
  for (const a of accounts) {
    const r = await store.quota.report(a.id, at);
    if (r.used > 0 || r.daily.length > 0) usage.push({ account: a.id, used: r.used, daily: r.daily, lastUsedMs: r.lastUsedMs });
  }
  return { format: STATE_FORMAT, version: 1, exportedAt: new Date(now).toISOString(), month: at.month.key, accounts, usage };
}

/** What an import did, for the command's last line. */
export interface ImportSummary {
  readonly accounts: number;
  readonly usage: number;
  readonly month: MonthKey;
}

/**
 * Installs a checked dump: the accounts (refused by the store when it has some, unless `replace`),
 * then each account's month. The counters go into the dump's month, whatever month it is now.
 */
export async function importState(store: Store, dump: StateDump, replace: boolean): Promise<ImportSummary> {
  await store.importAccounts(dump.accounts, replace);
  const window = monthWindow(Date.parse(`${dump.month}-01T00:00:00.000Z`));
  const at = new CalendarCache(window.start).moment(window.start);
  for (const u of dump.usage) await store.quota.restore(u.account, u, at);
  return { accounts: dump.accounts.length, usage: dump.usage.length, month: dump.month };
}


/** Parses and checks a dump completely before anything is written; errors name the source and the field. */
export function parseStateDump(text: string, source: string): StateDump {
  const bad = (why: string) => new AccountError('STORE_CORRUPT', `${source}: ${why}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw bad(`not valid JSON (${(err as Error).message})`);
  }
  const d = value as Partial<StateDump>;
  if (!d || typeof d !== 'object' || d.format !== STATE_FORMAT || d.version !== 1) throw bad(`not a state export (expected "format": "${STATE_FORMAT}", "version": 1)`);
  if (typeof d.month !== 'string' || !isDayKey(`${d.month}-01`)) throw bad('"month" is not a YYYY-MM month');
  const { accounts } = checkStore({ version: 1, accounts: d.accounts }, source);
  const ids = new Set(accounts.map((a) => a.id));
  if (ids.size !== accounts.length) throw bad('two accounts share an id');
  if (!Array.isArray(d.usage)) throw bad('"usage" is not an array');
  const usage = d.usage.map((u, i): AccountUsageDump => {
    const where = `usage[${i}]`;
    if (!u || !ids.has(u.account)) throw bad(`${where}.account: not one of the accounts`);
    if (!isCount(u.used)) throw bad(`${where}.used: not a non-negative integer`);
    if (u.lastUsedMs !== null && !isCount(u.lastUsedMs)) throw bad(`${where}.lastUsedMs: not a time in ms or null`);
    if (!Array.isArray(u.daily)) throw bad(`${where}.daily: not an array`);
    const daily = u.daily.map((x: DailyUsage, j: number) => {
      if (!x || !isDayKey(x.date) || monthOfDay(x.date) !== d.month) throw bad(`${where}.daily[${j}].date: not a day of ${d.month}`);
      if (!isCount(x.success) || !isCount(x.rejected)) throw bad(`${where}.daily[${j}]: success and rejected must be non-negative integers`);
      return { date: x.date, success: x.success, rejected: x.rejected };
    });
    return { account: u.account, used: u.used, daily, lastUsedMs: u.lastUsedMs };
  });
  return { format: STATE_FORMAT, version: 1, exportedAt: String(d.exportedAt), month: d.month, accounts, usage };
}
