// What the gate answers: the shared 401, the 429 with its quota object, and the RateLimit headers.
import { errorBody, ERRORS } from '../errors.ts';
import { secondsUntil, type MonthWindow } from './month.ts';
import { quotaMessage, type Plan } from './plans.ts';

export type Headers = Readonly<Record<string, string>>;

export const NO_HEADERS: Headers = Object.freeze({});

export interface Rejection {
  readonly ok: false;
  readonly status: 401 | 429;
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
 * IETF draft-ietf-httpapi-ratelimit-headers: a "monthly" policy of q requests per w seconds, and
 * the remaining units with the seconds until the window resets.
 */
export function rateLimitHeaders(total: number, remaining: number, month: MonthWindow, now: number): Headers {
  return {
    'RateLimit-Policy': `"monthly";q=${total};w=${month.seconds}`,
    RateLimit: `"monthly";r=${remaining};t=${secondsUntil(month.end, now)}`,
  };
}

/** 429 (CONTRACT 4): quota.used equals total, resetsOn is the next month's first instant. */
export function quotaExceeded(plan: Plan, total: number, month: MonthWindow, now: number): Rejection {
  const wait = String(secondsUntil(month.end, now));
  return {
    ok: false,
    status: 429,
    body: errorBody('QUOTA_EXCEEDED', quotaMessage(plan, total), { used: total, total, resetsOn: month.resetsOn }),
    headers: { ...rateLimitHeaders(total, 0, month, now), 'Retry-After': wait },
  };
}
