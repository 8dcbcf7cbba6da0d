// The gate in front of every /api/v1 request: key check (401), quota reservation (429), settle.
// It knows plans, months and answers; counting and durability belong to the store (src/store/).
import { isWellFormedKey, keyDigest } from '../access/key-format.ts';
import type { AccountService } from '../access/types.ts';
import { StoreUnavailableError, type CountingStore, type QuotaTicket, type StoreStatus } from './counting-store.ts';
import { CalendarCache, type Moment } from './month.ts';
import { resolveQuotas, type Plan, type Quota } from '../access/plans.ts';
import { NO_HEADERS, QuotaRejections, rateLimitHeaders, UNAUTHORIZED, UNAVAILABLE, type Headers, type Rejection } from './responses.ts';
import { createUsageService, type UsageService } from './usage-service.ts';

export interface GateOptions {
  readonly store: CountingStore;
  /** ms since epoch; drives quota months and daily counters. Default Date.now. */
  readonly clock?: () => number;
  /** Quota overrides; null = unlimited. */
  readonly plans?: Partial<Record<Plan, Quota>>;
}

export interface Holder {
  readonly id: string;
  readonly plan: Plan;
  readonly total: Quota;
}

export type Admission = { readonly ok: true; readonly ticket: QuotaTicket; readonly headers: Headers } | Rejection;

export interface Gate {
  /**
   * Format + checksum, SHA-256 (cached per presented key), the store's key lookup, then one unit
   * reserved. Synchronous with the file store; a Promise when the store is remote (a 503 answer,
   * never a rejection, when it cannot be reached).
   */
  admit(apiKey: string | undefined): Admission | Promise<Admission>;
  /**
   * Once per admitted request: a 200 keeps the unit; anything else gives it back. A Promise means
   * the 200 may be written only once it resolves (strict durability); when it rejects, the unit was
   * given back and the answer is 503.
   */
  settle(ticket: QuotaTicket, status: number): Promise<void> | null;
  /**
   * The account of a presented key and its plan's quota, or undefined (a 401): what admit() checks
   * before it reserves, for threads that reserve in shared memory (src/threads/shared-quota.ts).
   */
  holder(apiKey: string): Holder | undefined;
  /** The RateLimit headers after a settle: a request that did not count leaves `r` as it was before it. */
  quotaHeaders(ticket: QuotaTicket, status: number): Headers;
  readonly store: CountingStore;
  readonly accounts: AccountService;
  readonly usage: UsageService;
  status(): StoreStatus;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Presented keys whose digest is known; cleared when full (a flood of made-up keys cannot grow it). */
const DIGEST_CACHE_MAX = 10_000;

export function openGate(options: GateOptions): Gate {
  const { store } = options;
  const clock = options.clock ?? Date.now;
  const quotas = resolveQuotas(options.plans);
  const calendar = new CalendarCache(clock());
  const rejections = new QuotaRejections();
  // The checksum and SHA-256 of a key cost microseconds; a client sends the same key again and again.
  const digests = new Map<string, string>();
  // The last key seen and its digest, compared before the Map: the key arrives as a new string with
  // every request, and a Map lookup hashes all its 42 characters first (a compare stops at the first
  // difference, or reads them once). The digest names the account anew on every request (a rotation
  // acts on the next one): only the key's own digest is remembered, which never changes.
  let lastKey = '';
  let lastDigest = '';

  function digestOf(apiKey: string): string | null {
    if (apiKey === lastKey) return lastDigest;
    let digest = digests.get(apiKey);
    if (digest === undefined) {
      if (!isWellFormedKey(apiKey)) return null;
      if (digests.size >= DIGEST_CACHE_MAX) digests.clear();
      digest = keyDigest(apiKey);
      digests.set(apiKey, digest);
    }
    lastKey = apiKey;
    lastDigest = digest;
    return digest;
  }

  function admitted(ticket: QuotaTicket | null, plan: Plan, total: Quota, at: Moment, now: number): Admission {
    if (ticket === null) return rejections.get(plan, total!, at.month, now);
    const headers = total === null ? NO_HEADERS : rateLimitHeaders(total, ticket.remaining!, at.month, now);
    // A ticket that is its own admission (the file store's) is answered as it is: no second object.
    const own = ticket as QuotaTicket & { ok?: true; ticket?: QuotaTicket; headers?: Headers };
    if (own.ticket === ticket) {
      own.headers = headers;
      return own as Admission;
    }
    return { ok: true, ticket, headers };
  }

  function unavailable(err: unknown): Rejection {
    if (err instanceof StoreUnavailableError) return UNAVAILABLE;
    throw err;
  }

  function admit(apiKey: string | undefined): Admission | Promise<Admission> {
    if (typeof apiKey !== 'string') return UNAUTHORIZED;
    const digest = digestOf(apiKey);
    if (digest === null) return UNAUTHORIZED;
    const account = store.lookupKey(digest);
    if (account === undefined) return UNAUTHORIZED;
    const now = clock();
    const at = calendar.moment(now); // read on every call: a new month needs no restart
    const total = quotas[account.plan];
    let reserved;
    try {
      reserved = store.quota.reserve(account.id, total, at, now);
    } catch (err) {
      return unavailable(err);
    }
    if (reserved instanceof Promise) return reserved.then((t) => admitted(t, account.plan, total, at, now), unavailable);
    return admitted(reserved, account.plan, total, at, now);
  }

  let closing: Promise<void> | null = null;
  return {
    admit,
    holder(apiKey) {
      const digest = digestOf(apiKey);
      const account = digest === null ? undefined : store.lookupKey(digest);
      return account === undefined ? undefined : { id: account.id, plan: account.plan, total: quotas[account.plan] };
    },
    settle: (ticket, status) => store.quota.settle(ticket, status),
    quotaHeaders(t, status) {
      if (t.total === null) return NO_HEADERS;
      return rateLimitHeaders(t.total, status === 200 ? t.remaining! : t.remaining! + 1, t.at.month, clock());
    },
    store,
    accounts: store.accounts,
    usage: createUsageService({ store, quotas, calendar, clock }),
    status: () => store.status(),
    flush: () => store.flush(),
    close() {
      closing ??= store.close();
      return closing;
    },
  };
}
