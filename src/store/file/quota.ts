// The QuotaStore of the state directory: counters in this process's memory, made durable by the
// usage log (group commit for `strict`, a timer for `interval`; CONTRACT 4). In 'memory' state the
// sink is NULL_SINK and nothing waits.
import { monthWindow, type Moment } from '../../quota/month.ts';
import type { Quota } from '../../access/plans.ts';
import { AccountError } from '../../access/types.ts';
import type { CountedElsewhere } from '../../quota/counting-store.ts';
import type { MonthKey } from '../../quota/month.ts';
import { NO_HEADERS, type Headers } from '../../quota/responses.ts';
import { StoreUnavailableError, type Durability, type MonthFigures, type MonthlyUsage, type QuotaStore, type QuotaTicket, type UsageFigures } from '../types.ts';
import { withdraw, type Counters, type DayCount, type MonthCount } from './counters.ts';
import { NULL_SINK, type UsageSink } from './usage-log.ts';

/**
 * A ticket holding its month's and day's counters, so settling looks nothing up. Ticket's fields in a
 * class of its own: a derived class's constructor (super) cost 50 ns per request more. It is also the
 * gate's admission of its request (`ok`, `ticket`, `headers`: src/quota/gate.ts), one object per
 * request where the admission was a second.
 */
class FileTicket implements QuotaTicket {
  open = true;
  readonly ok = true;
  readonly ticket: FileTicket = this;
  headers: Headers = NO_HEADERS;
  constructor(
    readonly account: string,
    readonly total: Quota,
    readonly remaining: number | null,
    readonly at: Moment,
    readonly now: number,
    readonly month: MonthCount,
    readonly daily: DayCount,
  ) {}
}

/** An account's counters of one day (and its month), as the last reservation found them. */
interface Counted {
  readonly account: string;
  readonly at: Moment | null;
  readonly month: MonthCount;
  readonly daily: DayCount;
}

export class FileQuota implements QuotaStore, CountedElsewhere {
  /** @param sink the usage log, or NULL_SINK in memory. */
  constructor(
    private readonly counters: Counters,
    private readonly sink: UsageSink,
    private readonly durability: Durability,
  ) {}

  /** Threads reserve in shared memory and report here (src/threads/shared-quota.ts). */
  get elsewhere(): CountedElsewhere {
    return this;
  }

  moved: ((account: string, month: MonthKey, delta: number) => void) | null = null;
  catchUp: (() => void) | null = null;

  taken(account: string, at: Moment): number {
    const month = this.counters.peek(account)?.months.get(at.month.key);
    return month === undefined ? 0 : month.used + month.reserved;
  }

  count(account: string, total: Quota, at: Moment, now: number, status: number): Promise<void> | null {
    const usage = this.counters.of(account);
    const month = usage.month(at.month.key);
    if (now > month.lastMs) month.lastMs = now;
    month.reserved++; // as reserve() would have, so settle() counts it the one way both share
    return this.settle(new FileTicket(account, total, null, at, now, month, usage.day(at.day)), status);
  }

  withdraw(account: string, at: Moment, n: number): void {
    const usage = this.counters.of(account);
    withdraw(usage.month(at.month.key), usage.day(at.day), n);
    this.sink.withdraw(account, at.day, n);
  }

  waits(total: Quota): boolean {
    return this.sink !== NULL_SINK && (this.durability === 'strict' || (this.durability === 'auto' && total !== null));
  }

  reserve(account: string, total: Quota, at: Moment, now: number): FileTicket | null {
    const last = this.counted(account, at);
    const month = last.month;
    if (now > month.lastMs) month.lastMs = now;
    if (total !== null && month.used + month.reserved >= total) {
      // In-flight reservations count: N + 50 concurrent requests can never take N + 1 units.
      last.daily.rejected++;
      this.sink.add(account, at.day, 0, 1, now);
      return null;
    }
    month.reserved++;
    return new FileTicket(account, total, total === null ? null : total - month.used - month.reserved, at, now, month, last.daily);
  }

  /**
   * The month's and day's counters of `account` at `at`, those of the last reservation when it was the
   * same account on the same day (a busy key asks again and again: three Map lookups saved). Counters
   * only grow: an account's, a month's or a day's counter object, once made, is the one for good.
   */
  private counted(account: string, at: Moment): Counted {
    const last = this.last;
    if (last.account === account && last.at === at) return last;
    const usage = this.counters.of(account);
    return (this.last = { account, at, month: usage.month(at.month.key), daily: usage.day(at.day) });
  }
  private last: Counted = { account: '', at: null, month: { used: 0, reserved: 0, lastMs: 0 }, daily: { success: 0, rejected: 0 } };

  settle(ticket: QuotaTicket, status: number): Promise<void> | null {
    const t = ticket as FileTicket;
    if (!t.open) return null; // a double settle must not give back a unit twice
    t.open = false;
    t.month.reserved--;
    if (status === 304) return null;
    if (status !== 200) {
      t.daily.rejected++;
      this.sink.add(t.account, t.at.day, 0, 1, t.now);
      return null;
    }
    t.month.used++;
    t.daily.success++;
    this.sink.add(t.account, t.at.day, 1, 0, t.now);
    if (this.durability === 'interval' || (this.durability === 'auto' && t.total === null)) return null;
    const durable = this.sink.durable({ id: t.account, day: t.at.day });
    if (durable === null) return null;
    return durable.catch((err: Error) => {
      // The log has written a withdrawal for this success; the live counters follow it.
      withdraw(t.month, t.daily, 1);
      throw new StoreUnavailableError(`usage could not be recorded: ${err.message}`, { cause: err });
    });
  }

  async report(account: string, at: Moment): Promise<UsageFigures> {
    this.catchUp?.();
    const usage = this.counters.peek(account);
    const months: MonthlyUsage[] = [];
    let lastUsedMs = 0;
    let start = at.month.start;
    for (let i = 0; i < 6; i++) {
      const window = monthWindow(start);
      const count = usage?.months.get(window.key);
      let success = 0;
      let rejected = 0;
      for (const d of usage?.daysOf(window.key) ?? []) {
        success += d.success;
        rejected += d.rejected;
      }
      months.push({ month: window.key, used: count?.used ?? 0, success, rejected });
      start = monthWindow(window.start - 1).start; // the month before
    }
    // Up to the month asked about: a clock set back in a test suite does not see its own future.
    for (const [key, count] of usage?.months ?? []) if (key <= at.month.key && count.lastMs > lastUsedMs) lastUsedMs = count.lastMs;
    return {
      used: usage?.months.get(at.month.key)?.used ?? 0,
      daily: usage ? usage.daysOf(at.month.key) : [],
      months,
      lastUsedMs: lastUsedMs > 0 ? lastUsedMs : null,
    };
  }

  async set(account: string, used: number, at: Moment): Promise<void> {
    if (!Number.isSafeInteger(used) || used < 0) throw new RangeError(`used must be a non-negative integer, got ${used}`);
    this.catchUp?.();
    const month = this.counters.of(account).month(at.month.key);
    const delta = used - month.used;
    month.used = used;
    if (delta !== 0) this.moved?.(account, at.month.key, delta);
    this.sink.set(account, at.day, used);
    await this.sink.durable(null);
  }

  /**
   * The log only adds to days (and sets the month's count), so the figures are reached by adding what
   * is missing; a day already above them (a second import) is refused before anything is written.
   */
  async restore(account: string, figures: MonthFigures, at: Moment): Promise<void> {
    const usage = this.counters.of(account);
    for (const d of figures.daily) {
      const day = usage.days.get(d.date);
      if (day && (day.success > d.success || day.rejected > d.rejected)) {
        throw new AccountError('STORE_NOT_EMPTY', `account ${account} already has more usage on ${d.date} than the import; import into a state directory without it`);
      }
    }
    const month = usage.month(at.month.key);
    const last = figures.lastUsedMs ?? 0;
    for (const d of figures.daily) {
      const day = usage.day(d.date);
      const success = d.success - day.success;
      const rejected = d.rejected - day.rejected;
      if (success === 0 && rejected === 0) continue;
      day.success += success;
      day.rejected += rejected;
      this.sink.add(account, d.date, success, rejected, last);
    }
    if (last > month.lastMs) month.lastMs = last;
    await this.set(account, figures.used, at);
  }
}
