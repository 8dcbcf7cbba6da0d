// The typed client (`import { createClient } from 'celebrity-api/client'`): fetch only, no dependency.
// Types come from the resource definitions (./types.ts); retry honours Retry-After and never asks
// again before a quota resets; a small cache revalidates with If-None-Match (CONTRACT 11).
import { COLLECTIONS, type CollectionName } from '../resources/types.ts';
import { CelebrityApiError, ConnectionError, errorFromResponse } from './errors.ts';
import type { ListParams, One, Page } from './types.ts';

export * from './errors.ts';
export type { Detail, ErrorBody, ListItem, ListParams, One, Page, Pagination, Quota } from './types.ts';
export type { CollectionName };

export interface RetryOptions {
  /** Tries after the first one. Default 3. */
  readonly retries?: number;
  /** The longest wait the client accepts; a Retry-After beyond it is thrown at once. Default 30000 ms. */
  readonly maxDelayMs?: number;
  /** First wait after a 500 or a failed connection, doubled each time. Default 200 ms. */
  readonly baseDelayMs?: number;
}

export interface ClientOptions {
  /** Scheme, host and port of the server, e.g. https://api.example.com (paths start with /api/v1). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /**
   * Off by default. On: a 503 is retried after its Retry-After, a 500 or a failed connection after a
   * growing wait, a 429 only once its quota has reset (Retry-After) and only if that is within
   * maxDelayMs. Anything else is thrown at once.
   */
  readonly retry?: boolean | RetryOptions;
  /**
   * Off by default. On: 200s with an ETag are kept (the last `maxEntries` URLs, default 100) and
   * revalidated with If-None-Match; a 304 is answered from the cache and does not count against the quota.
   */
  readonly cache?: boolean | { readonly maxEntries?: number };
  /** Default: the global fetch. Pass one with a dispatcher to trust a private CA, for example. */
  readonly fetch?: typeof fetch;
}

export interface Collection<C extends CollectionName> {
  /** One page. */
  list(params?: ListParams<C>): Promise<Page<C>>;
  /** One record by slug; NotFoundError when there is none. */
  get(slug: string): Promise<One<C>>;
  /** Every page from `page` (default 1) to the last, `limit` (default 50, the most) records at a time; each page is one request. */
  pages(params?: ListParams<C>): AsyncGenerator<Page<C>, void, undefined>;
}

export type Client = { readonly [C in CollectionName]: Collection<C> };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A number as the server reads it: digits and an optional fraction, never an exponent. */
function decimal(value: number | string): string {
  if (typeof value === 'string') return value;
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/\.?0+$/, '') : text;
}

function queryString(params: Readonly<Record<string, unknown>>): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    q.set(name, typeof value === 'number' ? decimal(value) : String(value));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** Seconds of a Retry-After header given as a number (the form this server sends), else null. */
function retryAfterSeconds(res: Response): number | null {
  const value = res.headers.get('retry-after');
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}

interface Cached {
  readonly etag: string;
  readonly text: string;
}

export function createClient(options: ClientOptions): Client {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const retry = options.retry === true ? {} : options.retry || null;
  const retries = retry?.retries ?? 3;
  const maxDelayMs = retry?.maxDelayMs ?? 30_000;
  const baseDelayMs = retry?.baseDelayMs ?? 200;
  const maxEntries = options.cache === true ? 100 : options.cache ? (options.cache.maxEntries ?? 100) : 0;
  const cache = new Map<string, Cached>(); // insertion order is recency: a hit moves to the end

  /** How long to wait before trying `error`'s request again, or null to throw it now. */
  function delay(error: CelebrityApiError, attempt: number): number | null {
    if (retry === null || attempt >= retries) return null;
    let ms: number;
    if (error.status === 503 || error.status === 429) {
      // A 429 waits for its reset (Retry-After is the seconds until resetsOn), never less.
      ms = (error.retryAfter ?? (error.status === 503 ? 1 : Infinity)) * 1000;
    } else if (error.status === 500 || error instanceof ConnectionError) {
      ms = baseDelayMs * 2 ** attempt;
    } else {
      return null;
    }
    return ms <= maxDelayMs ? ms : null;
  }

  async function request(path: string): Promise<unknown> {
    const url = base + path;
    for (let attempt = 0; ; attempt++) {
      const cached = maxEntries > 0 ? cache.get(url) : undefined;
      const headers: Record<string, string> = { 'x-api-key': options.apiKey, accept: 'application/json' };
      if (cached) headers['if-none-match'] = cached.etag;
      let error: CelebrityApiError;
      try {
        const res = await doFetch(url, { headers });
        if (res.status === 304 && cached) {
          await res.body?.cancel();
          cache.delete(url);
          cache.set(url, cached);
          return JSON.parse(cached.text);
        }
        const text = await res.text();
        if (res.status === 200) {
          const etag = res.headers.get('etag');
          if (maxEntries > 0 && etag !== null) {
            cache.delete(url);
            cache.set(url, { etag, text });
            if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
          }
          return JSON.parse(text);
        }
        error = errorFromResponse(res.status, text, res.headers.get('x-request-id'), retryAfterSeconds(res));
      } catch (err) {
        if (err instanceof CelebrityApiError) throw err;
        error = new ConnectionError(`${url}: ${(err as Error).message}`, 0, 'CONNECTION_FAILED', null, null, { cause: err });
      }
      const wait = delay(error, attempt);
      if (wait === null) throw error;
      await sleep(wait);
    }
  }

  function collection<C extends CollectionName>(name: C): Collection<C> {
    // The types of a collection's parameters and answers are ListParams<C>, Page<C> and One<C>; on the
    // wire they are a query string and JSON, so inside they are plain records.
    const list = (params: Readonly<Record<string, unknown>> = {}) => request(`/api/v1/${name}${queryString(params)}`) as Promise<Page<C>>;
    return {
      list,
      get: (slug) => request(`/api/v1/${name}/${encodeURIComponent(slug)}`) as Promise<One<C>>,
      async *pages(params: Readonly<Record<string, unknown>> = {}) {
        for (let page = typeof params.page === 'number' ? params.page : 1; ; page++) {
          const result = await list({ limit: 50, ...params, page });
          yield result;
          if (page >= result.pagination.pages) return;
        }
      },
    };
  }

  return Object.fromEntries(COLLECTIONS.map((name) => [name, collection(name)])) as Client;
}
