// UsageService: an account's month (used, total, remaining, resetsOn) and daily counters; `set` for test suites.
import { AccountStore } from '../access/account-store.ts';
import { normalizeEmail } from '../access/account-ops.ts';
import { AccountError } from '../access/types.ts';
import { silentLogger } from '../log.ts';
import { Counters } from './counters.ts';
import { CalendarCache } from './month.ts';
import { resolveQuotas, type Plan, type Quota } from './plans.ts';
import type { UsageSink } from './usage-log.ts';
import { replayUsage } from './usage-replay.ts';

export interface DailyUsage {
  readonly date: string; // YYYY-MM-DD, UTC
  readonly success: number;
  readonly rejected: number;
}

export interface UsageReport {
  readonly email: string;
  readonly plan: Plan;
  /** 200 responses this UTC month (requests in flight are not counted until they are answered). */
  readonly used: number;
  /** The plan's monthly quota; null when unlimited. */
  readonly total: number | null;
  readonly remaining: number | null;
  readonly resetsOn: string;
  /** This month's days with any traffic, oldest first. */
  readonly daily: readonly DailyUsage[];
}

export interface UsageService {
  get(email: string): UsageReport;
  /** Puts the account's count for the current month at `used` (test suites); logged like any change. */
  set(email: string, used: number): void;
}

export interface UsageServiceDeps {
  readonly accounts: AccountStore;
  readonly counters: Counters;
  readonly quotas: Readonly<Record<Plan, Quota>>;
  readonly calendar: CalendarCache;
  readonly clock: () => number;
  /** null: read-only (the CLI beside a running server must not write the server's log). */
  readonly sink: UsageSink | null;
}

export function createUsageService(deps: UsageServiceDeps): UsageService {
  const account = (email: string) => {
    const canonical = normalizeEmail(email); // a malformed email is a usage error, as in every other command
    const view = deps.accounts.find(canonical);
    if (!view) throw new AccountError('UNKNOWN_ACCOUNT', `no account with email ${canonical}`);
    return view;
  };
  return {
    get(email) {
      const view = account(email);
      const month = deps.calendar.month(deps.clock());
      const usage = deps.counters.peek(view.id);
      const used = usage?.months.get(month.key)?.used ?? 0;
      const total = deps.quotas[view.plan];
      return {
        email: view.email,
        plan: view.plan,
        used,
        total,
        remaining: total === null ? null : Math.max(0, total - used),
        resetsOn: month.resetsOn,
        daily: usage ? usage.daysOf(month.key) : [],
      };
    },
    set(email, used) {
      if (!Number.isSafeInteger(used) || used < 0) throw new RangeError(`used must be a non-negative integer, got ${used}`);
      if (!deps.sink) throw new Error('usage counters are read-only here; set them through the running server');
      const view = account(email);
      const now = deps.clock();
      deps.counters.of(view.id).month(deps.calendar.month(now).key).used = used;
      deps.sink.set(view.id, deps.calendar.dayOf(now), used);
    },
  };
}

/**
 * Usage as the files say, for the CLI: replays the log without repairing it (a tail that looks torn
 * may be a write of the running server in progress), and refuses `set`.
 */
export async function readUsage(state: string, options: { clock?: () => number; plans?: Partial<Record<Plan, Quota>> } = {}): Promise<UsageService> {
  const clock = options.clock ?? Date.now;
  const accounts = await AccountStore.open({ state });
  const counters = new Counters();
  await replayUsage(state, counters, { repair: false, log: silentLogger });
  return createUsageService({ accounts, counters, quotas: resolveQuotas(options.plans), calendar: new CalendarCache(clock()), clock, sink: null });
}
