// Usage log records: their JSONL form, validation on replay, and the per-tick aggregation buffer.
import { isDayKey, monthOfDay, type DayKey, type MonthKey } from '../../quota/month.ts';

/**
 * One line of the log. Accounts are named by id, never by key (CONTRACT 4).
 * - delta: adds `s` successes (which are also the month's used count) and `r` rejections for account
 *   `a` on UTC day `d`; `t`, when present, is the time (ms) of the latest of those requests (the
 *   dashboard's "last used").
 * - set: puts the month of `d` at `u` used (UsageService.set).
 * - withdrawal: `x` successes of day `d` that were never answered with a 200 after all (strict
 *   durability gave up waiting for the disk and answered 503): they leave the used count and the
 *   day's successes and become rejections.
 */
export type UsageRecord =
  | { readonly a: string; readonly d: DayKey; readonly s: number; readonly r: number; readonly t?: number }
  | { readonly a: string; readonly d: DayKey; readonly u: number }
  | { readonly a: string; readonly d: DayKey; readonly x: number };

/** A count as the files hold it: a non-negative safe integer. */
export const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

// A month's log repeats the same few days on every line; checking each once halves replay time.
const validDays = new Set<string>();
function isDay(value: unknown): value is DayKey {
  if (typeof value === 'string' && validDays.has(value)) return true;
  if (!isDayKey(value)) return false;
  if (validDays.size < 10_000) validDays.add(value);
  return true;
}

/** Parses one line; returns a reason string when the line is not a record of `month`. */
export function parseRecord(line: string, month: MonthKey): UsageRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not valid JSON';
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (typeof r.a !== 'string' || r.a.length === 0) return 'field "a" (account id) missing';
  if (!isDay(r.d)) return 'field "d" is not a YYYY-MM-DD day';
  if (monthOfDay(r.d) !== month) return `day ${r.d} does not belong to this file's month ${month}`;
  const keys = Object.keys(r).length;
  if (keys === 3 && isCount(r.u)) return { a: r.a, d: r.d, u: r.u };
  if (keys === 3 && isCount(r.x)) return { a: r.a, d: r.d, x: r.x };
  if (keys === 4 && isCount(r.s) && isCount(r.r)) return { a: r.a, d: r.d, s: r.s, r: r.r };
  if (keys === 5 && isCount(r.s) && isCount(r.r) && isCount(r.t)) return { a: r.a, d: r.d, s: r.s, r: r.r, t: r.t };
  return 'expected counts "s" and "r" (and a time "t"), "u", or "x", as non-negative integers';
}

interface Delta {
  readonly a: string;
  readonly d: DayKey;
  s: number;
  r: number;
  t?: number;
}

/**
 * Records waiting for the next tick. Deltas of the same account and day are merged into one line,
 * so a tick writes one line per active account, not one per request. Order with set lines is kept.
 */
export class PendingRecords {
  private entries: (Delta | UsageRecord)[] = [];
  private open = new Map<string, Delta>();
  /** The delta the last request merged into: a busy key asks again and again, so no key string per request. */
  private last: Delta | null = null;

  get size(): number {
    return this.entries.length;
  }

  /** `at`: the time of the request (ms), kept as the delta's latest `t`. */
  add(id: string, day: DayKey, success: number, rejected: number, at: number): void {
    const last = this.last;
    const key = last !== null && last.a === id && last.d === day ? null : id + '\u0000' + day;
    const open = key === null ? last : this.open.get(key);
    if (open) {
      this.last = open;
      open.s += success;
      open.r += rejected;
      if (at > open.t!) open.t = at;
      return;
    }
    const delta: Delta = { a: id, d: day, s: success, r: rejected, t: at };
    this.entries.push(delta);
    this.open.set(key!, delta);
    this.last = delta;
  }

  set(id: string, day: DayKey, used: number): void {
    this.ordered({ a: id, d: day, u: used });
  }

  withdraw(id: string, day: DayKey, count: number): void {
    this.ordered({ a: id, d: day, x: count });
  }

  /** A line that must replay after everything before it: later deltas may not merge into earlier lines. */
  private ordered(record: UsageRecord): void {
    this.entries.push(record);
    this.open.clear();
    this.last = null;
  }

  /**
   * Takes everything pending as JSONL text per month file, months in order; `each` sees every record
   * in log order (the writer's copy of what the files will replay to).
   */
  drain(each: (record: UsageRecord) => void): Map<MonthKey, { text: string; records: number }> {
    const byMonth = new Map<MonthKey, { text: string; records: number }>();
    for (const e of this.entries) {
      each(e);
      const month = monthOfDay(e.d);
      const chunk = byMonth.get(month);
      if (chunk) {
        chunk.text += JSON.stringify(e) + '\n';
        chunk.records++;
      } else byMonth.set(month, { text: JSON.stringify(e) + '\n', records: 1 });
    }
    this.entries = [];
    this.open.clear();
    this.last = null;
    return new Map([...byMonth].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}
