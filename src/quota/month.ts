// UTC calendar arithmetic for quota months and daily counters (CONTRACT 4: reset at 00:00 UTC on the 1st).

/** 'YYYY-MM' of the UTC month containing `ms`. */
export type MonthKey = string;
/** 'YYYY-MM-DD' of the UTC day containing `ms`. */
export type DayKey = string;

const pad2 = (n: number) => (n < 10 ? '0' + n : String(n));

/** The quota month around an instant: its key, first instant and the next month's first instant. */
export interface MonthWindow {
  readonly key: MonthKey;
  readonly start: number;
  readonly end: number;
  /** `new Date(end).toISOString()`: the `resetsOn` of 429 bodies and usage reports. */
  readonly resetsOn: string;
  /** Whole seconds in the month: the `w` of the RateLimit-Policy header. */
  readonly seconds: number;
}

export function monthWindow(ms: number): MonthWindow {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  // Date.UTC normalises month 12 to January of the next year, which makes Dec 31 -> Jan 1 free.
  const start = Date.UTC(y, m, 1);
  const end = Date.UTC(y, m + 1, 1);
  return Object.freeze({
    key: `${String(y).padStart(4, '0')}-${pad2(m + 1)}`,
    start,
    end,
    resetsOn: new Date(end).toISOString(),
    seconds: (end - start) / 1000,
  });
}

export function dayKey(ms: number): DayKey {
  const d = new Date(ms);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** The month a day belongs to: its first 7 characters. */
export function monthOfDay(day: DayKey): MonthKey {
  return day.slice(0, 7);
}

/** Seconds until the reset, rounded up so a client that waits that long is past it (RFC 9110 Retry-After). */
export function secondsUntil(end: number, now: number): number {
  return Math.max(0, Math.ceil((end - now) / 1000));
}

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar day in 'YYYY-MM-DD' form (usage log validation). */
export function isDayKey(value: unknown): value is DayKey {
  if (typeof value !== 'string') return false;
  const m = DAY_RE.exec(value);
  if (!m) return false;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return dayKey(ms) === value;
}

const DAY_MS = 86_400_000;

/** The month and the day of an instant, as the quota store counts them. */
export interface Moment {
  readonly month: MonthWindow;
  readonly day: DayKey;
}

/**
 * Caches the current month window and day so the hot path compares numbers instead of building
 * dates: one frozen Moment per UTC day. The clock is read on every call, so a clock moved to the
 * next month sees a fresh window.
 */
export class CalendarCache {
  private window: MonthWindow;
  private dayStart = NaN;
  private current: Moment | null = null;
  constructor(now: number) {
    this.window = monthWindow(now);
  }
  month(now: number): MonthWindow {
    const w = this.window;
    if (now >= w.start && now < w.end) return w;
    return (this.window = monthWindow(now));
  }
  // UTC days are exactly 86 400 000 ms in ECMAScript time (no leap seconds).
  moment(now: number): Moment {
    if (this.current !== null && now >= this.dayStart && now < this.dayStart + DAY_MS) return this.current;
    this.dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    return (this.current = Object.freeze({ month: this.month(now), day: dayKey(now) }));
  }
}
