// UsageService: an account's month (used, total, remaining, resetsOn), its days, the last six months
// and its last use, from whichever store runs; `set` for test suites.
import { lookupEmail } from '../access/account-ops.ts';
import { AccountError, type AccountDetail } from '../access/types.ts';
import type { CountingStore, DailyUsage, MonthlyUsage } from './counting-store.ts';
import type { CalendarCache } from './month.ts';
import type { Plan, Quota } from '../access/plans.ts';

export type { DailyUsage, MonthlyUsage } from './counting-store.ts';

export interface UsageReport {
  readonly email: string;
  readonly plan: Plan;
  /** 200 responses this UTC month. */
  readonly used: number;
  /** The plan's monthly quota; null when unlimited. */
  readonly total: number | null;
  readonly remaining: number | null;
  readonly resetsOn: string;
  /** This month's days with any traffic, oldest first. */
  readonly daily: readonly DailyUsage[];
  /** This month and the five before it, newest first. */
  readonly months: readonly MonthlyUsage[];
  /** ISO time of the account's last authenticated request, or null. */
  readonly lastUsedAt: string | null;
}

export interface UsageService {
  get(email: string): Promise<UsageReport>;
  /** By account id (the dashboard's sessions name accounts by id). */
  of(account: AccountDetail): Promise<UsageReport>;
  /** Puts the account's count for the current month at `used` (test suites); resolves once durable. */
  set(email: string, used: number): Promise<void>;
}

export interface UsageServiceDeps {
  readonly store: CountingStore;
  readonly quotas: Readonly<Record<Plan, Quota>>;
  readonly calendar: CalendarCache;
  readonly clock: () => number;
}

export function createUsageService({ store, quotas, calendar, clock }: UsageServiceDeps): UsageService {
  const account = async (email: string): Promise<AccountDetail> => {
    const canonical = lookupEmail(email); // a malformed email is a usage error, as in every other command
    const found = await store.accounts.find(canonical);
    if (!found) throw new AccountError('UNKNOWN_ACCOUNT', `no account with email ${canonical}`);
    return found;
  };
  const of = async (a: AccountDetail): Promise<UsageReport> => {
    const at = calendar.moment(clock());
    const figures = await store.quota.report(a.id, at);
    const total = quotas[a.plan];
    return {
      email: a.email,
      plan: a.plan,
      used: figures.used,
      total,
      remaining: total === null ? null : Math.max(0, total - figures.used),
      resetsOn: at.month.resetsOn,
      daily: figures.daily,
      months: figures.months,
      lastUsedAt: figures.lastUsedMs === null ? null : new Date(figures.lastUsedMs).toISOString(),
    };
  };
  return {
    get: async (email) => of(await account(email)),
    of,
    async set(email, used) {
      if (!Number.isSafeInteger(used) || used < 0) throw new RangeError(`used must be a non-negative integer, got ${used}`);
      await store.quota.set((await account(email)).id, used, calendar.moment(clock()));
    },
  };
}
