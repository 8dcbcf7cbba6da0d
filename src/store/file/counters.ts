// In-memory usage counters per account: month totals with in-flight reservations, and daily hits.
import { monthOfDay, type DayKey, type MonthKey } from '../../quota/month.ts';
import type { UsageRecord } from './usage-records.ts';

export interface MonthCount {
  /** 200 responses this month: durable via the usage log. */
  used: number;
  /** Admitted requests not settled yet: they hold a unit so concurrency cannot overshoot the quota. */
  reserved: number;
  /** ms of the latest authenticated request this month, or 0. */
  lastMs: number;
}

export interface DayCount {
  success: number;
  /** Authenticated requests that did not get a 200: 429s and other non-200 responses. */
  rejected: number;
}

export class AccountUsage {
  readonly months = new Map<MonthKey, MonthCount>();
  readonly days = new Map<DayKey, DayCount>();

  month(key: MonthKey): MonthCount {
    let count = this.months.get(key);
    if (!count) this.months.set(key, (count = { used: 0, reserved: 0, lastMs: 0 }));
    return count;
  }

  day(key: DayKey): DayCount {
    let count = this.days.get(key);
    if (!count) this.days.set(key, (count = { success: 0, rejected: 0 }));
    return count;
  }

  /** Daily counters of one month, oldest first. */
  daysOf(month: MonthKey): { date: DayKey; success: number; rejected: number }[] {
    const out: { date: DayKey; success: number; rejected: number }[] = [];
    for (const [date, c] of this.days) if (monthOfDay(date) === month) out.push({ date, success: c.success, rejected: c.rejected });
    return out.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  }
}

/** All accounts' counters, keyed by account id (the usage log never names the key). */
export class Counters {
  private readonly accounts = new Map<string, AccountUsage>();

  of(id: string): AccountUsage {
    let usage = this.accounts.get(id);
    if (!usage) this.accounts.set(id, (usage = new AccountUsage()));
    return usage;
  }

  peek(id: string): AccountUsage | undefined {
    return this.accounts.get(id);
  }

  entries(): IterableIterator<[string, AccountUsage]> {
    return this.accounts.entries();
  }

  /** Replays one log record: the same arithmetic the live path did when it was written. */
  apply(record: UsageRecord): void {
    const usage = this.of(record.a);
    const month = usage.month(monthOfDay(record.d));
    if ('u' in record) {
      month.used = record.u;
      return;
    }
    const day = usage.day(record.d);
    if ('x' in record) {
      withdraw(month, day, record.x);
      return;
    }
    month.used += record.s;
    day.success += record.s;
    day.rejected += record.r;
    if (record.t !== undefined && record.t > month.lastMs) month.lastMs = record.t;
  }

  /** The durable part (used and daily counts, no reservations) as a separate set of counters. */
  copy(): Counters {
    const out = new Counters();
    for (const [id, usage] of this.accounts) {
      const to = out.of(id);
      for (const [k, c] of usage.months) to.months.set(k, { used: c.used, reserved: 0, lastMs: c.lastMs });
      for (const [k, c] of usage.days) to.days.set(k, { success: c.success, rejected: c.rejected });
    }
    return out;
  }
}

/** Successes that were answered 503 after all (strict durability timed out): no longer used, now rejected. */
export function withdraw(month: MonthCount, day: DayCount, count: number): void {
  const n = Math.min(count, day.success, month.used);
  month.used -= n;
  day.success -= n;
  day.rejected += n;
}
