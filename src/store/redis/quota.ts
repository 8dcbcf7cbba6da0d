// The QuotaStore on Redis: one round trip per request (the reserve script), none more for a 200; a
// request that ends otherwise gives its unit back off the answer's path. The acknowledged reservation
// is the durable record (issue 13): what Redis keeps of it depends on its persistence (README).
import { monthWindow, type MonthKey, type MonthWindow, type Moment } from '../../quota/month.ts';
import type { Quota } from '../../access/plans.ts';
import type { UsageSink } from '../file/usage-log.ts';
import { Ticket, type CountedRemotely, type DailyUsage, type MonthlyUsage, type MonthFigures, type QuotaStore, type QuotaTicket, type UsageFigures } from '../types.ts';
import { monthExpiresAt, MONTHS_KEPT, monthKey } from './keys.ts';
import type { RedisLink } from './link.ts';


export class RedisQuota implements QuotaStore {
  /** Give-backs that failed: the unit stays taken (fail closed, never one more than the quota). */
  lostSettles = 0;
  private expiry: { month: MonthKey; at: number } | null = null;

  /** With threads: how each opens its own connection, and this instance's log for what they count. */
  readonly remote?: CountedRemotely;

  /**
   * @param sink this instance's own usage log (CONTRACT 9), or NULL_SINK in memory.
   * @param connection how a thread of this process connects (a server's store), or none (a thread's own, a command's).
   */
  constructor(
    private readonly link: RedisLink,
    private readonly sink: UsageSink,
    connection?: CountedRemotely['connection'],
  ) {
    if (connection) {
      this.remote = {
        connection,
        record: (account, day, status, now) => {
          if (status !== 304) this.sink.add(account, day, status === 200 ? 1 : 0, status === 200 ? 0 : 1, now);
        },
      };
    }
  }

  async reserve(account: string, total: Quota, at: Moment, now: number): Promise<QuotaTicket | null> {
    const key = monthKey(account, at.month.key);
    const taken = (await this.link.script('reserve', 'reserve', [key], [total === null ? '-1' : String(total), at.day, String(now), String(this.ttl(at.month, now))])) as number;
    if (taken < 0) {
      this.sink.add(account, at.day, 0, 1, now);
      return null;
    }
    return new Ticket(account, total, total === null ? null : total - taken, at, now);
  }

  /** Never waits: a 200 has nothing left to write; anything else gives the unit back in the background. */
  settle(ticket: QuotaTicket, status: number): null {
    const t = ticket as Ticket;
    if (!t.open) return null; // a double settle must not give a unit back twice
    t.open = false;
    if (status === 200) {
      this.sink.add(t.account, t.at.day, 1, 0, t.now);
      return null;
    }
    const rejected = status !== 304; // a revalidation gives the unit back and counts nothing
    if (rejected) this.sink.add(t.account, t.at.day, 0, 1, t.now);
    // Not retried: a give-back whose answer was lost may have run, and running it twice would hand out
    // a unit the month does not have. Lost, the unit stays counted: the error shows in /metrics.
    this.link.script('settle', 'giveBack', [monthKey(t.account, t.at.month.key)], [t.at.day, String(this.ttl(t.at.month, t.now)), rejected ? '1' : '0']).catch(() => this.lostSettles++);
    return null;
  }

  async report(account: string, at: Moment): Promise<UsageFigures> {
    const windows: MonthWindow[] = [];
    for (let start = at.month.start, i = 0; i < MONTHS_KEPT; i++) {
      const w = monthWindow(start);
      windows.push(w);
      start = monthWindow(w.start - 1).start;
    }
    // One slot (the account's hash tag): the six reads go out together, pipelined.
    const hashes = (await Promise.all(windows.map((w) => this.link.command('report', ['HGETALL', monthKey(account, w.key)])))) as Record<string, string>[];
    let lastUsedMs = 0;
    const months: MonthlyUsage[] = windows.map((w, i) => {
      const h = hashes[i]!;
      const t = Number(h.t ?? 0);
      if (t > lastUsedMs) lastUsedMs = t;
      let success = 0;
      let rejected = 0;
      for (const d of days(h)) {
        success += d.success;
        rejected += d.rejected;
      }
      return { month: w.key, used: Number(h.u ?? 0), success, rejected };
    });
    return { used: months[0]!.used, daily: days(hashes[0]!), months, lastUsedMs: lastUsedMs > 0 ? lastUsedMs : null };
  }

  async set(account: string, used: number, at: Moment): Promise<void> {
    if (!Number.isSafeInteger(used) || used < 0) throw new RangeError(`used must be a non-negative integer, got ${used}`);
    const now = at.month.start;
    await this.link.script('report', 'setUsed', [monthKey(account, at.month.key)], [String(used), String(this.ttl(at.month, now))]);
  }

  async restore(account: string, month: MonthFigures, at: Moment): Promise<void> {
    const args = [String(month.used), String(month.lastUsedMs ?? 0), String(this.ttl(at.month, at.month.start))];
    for (const d of month.daily) args.push(d.date, String(d.success), String(d.rejected));
    await this.link.script('report', 'restoreMonth', [monthKey(account, at.month.key)], args);
  }

  /** The month hash's TTL in ms; its end is computed once per month (the TTL rides on every reserve). */
  private ttl(window: MonthWindow, now: number): number {
    if (this.expiry?.month !== window.key) this.expiry = { month: window.key, at: monthExpiresAt(window) };
    return Math.max(1, this.expiry.at - now);
  }
}

/** The `s:<day>` and `r:<day>` fields of a month hash, oldest day first. */
function days(h: Record<string, string>): DailyUsage[] {
  const byDay = new Map<string, { success: number; rejected: number }>();
  for (const field in h) {
    const kind = field[0];
    if ((kind !== 's' && kind !== 'r') || field[1] !== ':') continue;
    const date = field.slice(2);
    let d = byDay.get(date);
    if (!d) byDay.set(date, (d = { success: 0, rejected: 0 }));
    if (kind === 's') d.success = Number(h[field]);
    else d.rejected = Number(h[field]);
  }
  return [...byDay]
    .filter(([, d]) => d.success > 0 || d.rejected > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([date, d]) => ({ date, success: d.success, rejected: d.rejected }));
}
