// What the gate answers: the shared 401, the 429 with its quota object, and the RateLimit headers.
import { errorBody, ERRORS } from '../errors.ts';
import { secondsUntil, type MonthWindow } from './month.ts';
import { quotaMessage, type Plan } from '../access/plans.ts';

export type Headers = Readonly<Record<string, string>>;

export const NO_HEADERS: Headers = Object.freeze({});

export interface Rejection {
  readonly ok: false;
  readonly status: 401 | 429 | 503;
  readonly body: string;
  readonly headers: Headers;
}

/**
 * One frozen object for every 401: missing, malformed, bad checksum, unknown and revoked keys are
 * indistinguishable, so the answer reveals nothing about which keys exist (CONTRACT 2).
 */
export const UNAUTHORIZED: Rejection = Object.freeze({
  ok: false,
  status: 401,
  body: errorBody('INVALID_API_KEY', ERRORS.INVALID_API_KEY.message),
  headers: NO_HEADERS,
});

/**
 * The shared store cannot count this request (CONTRACT 9): fail closed, with a short Retry-After so
 * clients come back once it does.
 */
export const UNAVAILABLE: Rejection = Object.freeze({
  ok: false,
  status: 503,
  body: errorBody('SERVICE_UNAVAILABLE'),
  headers: Object.freeze({ 'Retry-After': '1' }),
});

/**
 * IETF draft-ietf-httpapi-ratelimit-headers: a "monthly" policy of q requests per w seconds, and
 * the remaining units with the seconds until the window resets.
 */
export function rateLimitHeaders(total: number, remaining: number, month: MonthWindow, now: number): Headers {
  return {
    'RateLimit-Policy': policy(total, month),
    RateLimit: `"monthly";r=${remaining};t=${secondsUntil(month.end, now)}`,
  };
}

const policies = new WeakMap<MonthWindow, Map<number, string>>();

/** The RateLimit-Policy value of a quota in a month: the same for every request, so made once. */
function policy(total: number, month: MonthWindow): string {
  let byTotal = policies.get(month);
  if (byTotal === undefined) policies.set(month, (byTotal = new Map()));
  let value = byTotal.get(total);
  if (value === undefined) byTotal.set(total, (value = `"monthly";q=${total};w=${month.seconds}`));
  return value;
}

/** 429 body (CONTRACT 4): quota.used equals total, resetsOn is the next month's first instant. */
const quotaBody = (plan: Plan, total: number, month: MonthWindow) =>
  errorBody('QUOTA_EXCEEDED', quotaMessage(plan, total), { used: total, total, resetsOn: month.resetsOn });

/** The 429: RateLimit headers with r=0, and Retry-After with the same seconds (RFC 9110 10.2.3). */
function rejection(body: string, total: number, month: MonthWindow, wait: number): Rejection {
  const t = String(wait);
  return Object.freeze({
    ok: false,
    status: 429,
    body,
    headers: Object.freeze({ 'RateLimit-Policy': policy(total, month), RateLimit: `"monthly";r=0;t=${t}`, 'Retry-After': t }),
  });
}

interface Cached {
  total: number;
  month: MonthWindow;
  wait: number;
  rejection: Rejection;
}

/**
 * The 429s of one gate. An account over quota tends to keep asking, so the answer is built once per
 * plan, quota and month (the body) and once per second (the headers, whose `t=` counts down), then
 * shared: frozen, like UNAUTHORIZED. The body names no account, so accounts on a plan share it.
 */
export class QuotaRejections {
  private readonly byPlan = new Map<Plan, Cached>();

  get(plan: Plan, total: number, month: MonthWindow, now: number): Rejection {
    const wait = secondsUntil(month.end, now);
    const cached = this.byPlan.get(plan);
    // `month` is CalendarCache's object for the whole month, so identity stands for the key.
    if (cached && cached.total === total && cached.month === month) {
      if (cached.wait !== wait) {
        cached.rejection = rejection(cached.rejection.body, total, month, wait);
        cached.wait = wait;
      }
      return cached.rejection;
    }
    const fresh = rejection(quotaBody(plan, total, month), total, month, wait);
    this.byPlan.set(plan, { total, month, wait, rejection: fresh });
    return fresh;
  }
}
