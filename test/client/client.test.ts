// The typed client against a real server (startServer): every collection's list, get and pages; an
// error class per code; retry that honours Retry-After and waits for a quota reset, through the fault
// modes; a cache that revalidates with If-None-Match and so costs no quota.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CelebrityApiError, ConnectionError, createClient, InvalidApiKeyError, InvalidParameterError, NotFoundError, QuotaExceededError,
  ServiceUnavailableError, type Client, type ClientOptions,
} from '../../src/client/index.ts';
import { startServer, type RunningServer } from '../../src/index.ts';
import { COLLECTIONS } from '../../src/resources/types.ts';
import { assertMatchesDocument } from '../helpers/openapi-validator.ts';

let server: RunningServer;
let key: string;
/** Every URL the clients fetched, in order. */
const calls: string[] = [];
const counted: typeof fetch = async (url, init) => {
  calls.push(String(url));
  return fetch(url, init);
};
const client = (over: Partial<ClientOptions> = {}): Client => createClient({ baseUrl: `${server.url}/`, apiKey: key, fetch: counted, ...over });
const used = async () => (await server.usage.get('client@example.com')).used;

before(async () => {
  server = await startServer({ plans: { free: 1000 } });
  ({ key } = await server.accounts.create({ email: 'client@example.com' }));
});
after(() => server.close());

test('list, get and pages on every collection give what the server sends', async () => {
  const api = client();
  for (const name of COLLECTIONS) {
    const page = await api[name].list({ limit: 3, sort: 'oldest' });
    assertMatchesDocument(`/api/v1/${name}`, 200, page);
    assert.equal(page.data.length, 3);
    const raw = await (await fetch(`${server.url}/api/v1/${name}?limit=3&sort=oldest`, { headers: { 'x-api-key': key } })).json();
    assert.deepEqual(page, raw);
    const one = await api[name].get(page.data[0]!.slug);
    assertMatchesDocument(`/api/v1/${name}/${one.data.slug}`, 200, one);
    assert.equal(one.data.slug, page.data[0]!.slug);
    const slugs: string[] = [];
    let pages = 0;
    for await (const p of api[name].pages({ limit: 40 })) {
      pages++;
      slugs.push(...p.data.map((r) => r.slug));
    }
    assert.equal(slugs.length, page.pagination.total, name);
    assert.equal(new Set(slugs).size, slugs.length, `${name}: no record twice`);
    assert.equal(pages, Math.ceil(page.pagination.total / 40));
  }
});

test('parameters are typed from the definitions and sent as the server reads them', async () => {
  const api = client();
  calls.length = 0;
  const reviews = await api.reviews.list({ minRating: 7.5, maxRating: 10, featured: false, sort: 'rating_high', search: 'the night' });
  assert.equal(calls[0], `${server.url}/api/v1/reviews?minRating=7.5&maxRating=10&featured=false&sort=rating_high&search=the+night`);
  assert.ok(reviews.data.every((r) => r.rating >= 7.5));
  await api.reviews.list({ minRating: 1e-7 }); // String(1e-7) is '1e-7', which the server refuses
  assert.equal(calls.at(-1), `${server.url}/api/v1/reviews?minRating=0.0000001`);
  const movies = await api.movies.list({ status: 'upcoming', genre: 'Drama' });
  assert.ok(movies.data.every((m) => m.status === 'upcoming'));
});

test('errors are classes named by code, with status, request id and, for a 429, the quota', async () => {
  const api = client();
  const expect = async (call: Promise<unknown>, Class: new (...args: never[]) => CelebrityApiError, status: number, code: string) => {
    const err = await call.then(() => assert.fail('no error'), (e: unknown) => e);
    assert.ok(err instanceof Class && err instanceof CelebrityApiError, String(err));
    assert.deepEqual([err.status, err.code, err.name], [status, code, Class.name]);
    if (status !== 0) assert.match(err.requestId ?? '', /^[0-9a-f]{8}-/);
    return err;
  };
  await expect(client({ apiKey: 'cel_nope' }).movies.list(), InvalidApiKeyError, 401, 'INVALID_API_KEY');
  await expect(api.movies.get('no-such-movie'), NotFoundError, 404, 'NOT_FOUND');
  await expect(api.movies.get('Not A Slug/..'), NotFoundError, 404, 'NOT_FOUND');
  const bad = await expect(api.reviews.list({ minRating: '.5' }), InvalidParameterError, 400, 'INVALID_PARAMETER');
  assert.match(bad.message, /'minRating'/);
  await server.usage.set('client@example.com', 1000);
  const quota = await expect(api.news.list(), QuotaExceededError, 429, 'QUOTA_EXCEEDED');
  assert.ok(quota instanceof QuotaExceededError);
  assert.deepEqual([quota.quota.used, quota.quota.total], [1000, 1000]);
  assert.ok(quota.retryAfter! > 0);
  await server.usage.set('client@example.com', 0);
  server.faults.set([{ status: 503, times: 1 }, { drop: true, times: 1 }]);
  const busy = await expect(api.news.list(), ServiceUnavailableError, 503, 'SERVICE_UNAVAILABLE');
  assert.equal(busy.retryAfter, 1);
  const dropped = await expect(api.news.list(), ConnectionError, 0, 'CONNECTION_FAILED');
  assert.ok(dropped.cause instanceof Error);
  server.faults.clear();
});

test('retry: a 503 after its Retry-After, a dropped connection and a 500 after a short wait; a wait beyond maxDelayMs is not taken', async () => {
  server.faults.set([{ status: 503, times: 1 }, { drop: true, times: 1 }, { status: 500, times: 1 }]);
  calls.length = 0;
  const page = await client({ retry: { baseDelayMs: 5 } }).outfits.list({ limit: 1 });
  assert.equal(page.data.length, 1);
  assert.equal(calls.length, 4, 'three faults, then the answer');
  assert.equal(server.faults.injected, 3);
  server.faults.set([{ status: 503, times: 1 }]);
  calls.length = 0;
  await assert.rejects(client({ retry: { maxDelayMs: 500 } }).outfits.list(), ServiceUnavailableError); // Retry-After: 1 s > 500 ms
  assert.equal(calls.length, 1);
  server.faults.set([{ status: 500 }]);
  calls.length = 0;
  await assert.rejects(client({ retry: { retries: 2, baseDelayMs: 1 } }).outfits.list(), (err: unknown) => err instanceof CelebrityApiError && err.status === 500);
  assert.equal(calls.length, 3, 'the first try and 2 retries');
  server.faults.clear();
});

test('retry never asks again before the quota resets: at once if the reset is far, after Retry-After if it is near', async (t) => {
  // A server whose clock stands one and a half seconds before a month ends until the client asks again
  // (then on the new month's first second), however long the start and each request take under load.
  const monthEnd = Date.parse('2026-12-01T00:00:00Z');
  let now = monthEnd - 1500;
  const edge = await startServer({ plans: { free: 1 }, clock: () => now });
  t.after(() => edge.close());
  const { key: edgeKey } = await edge.accounts.create({ email: 'edge@example.com' });
  const sent: number[] = [];
  const timed: typeof fetch = async (url, init) => {
    sent.push(performance.now());
    if (sent.length === 3) now = monthEnd; // the retry of the month's last request
    return counted(url, init);
  };
  const api = createClient({ baseUrl: edge.url, apiKey: edgeKey, fetch: timed, retry: { maxDelayMs: 5000 } });
  await api.movies.list();
  calls.length = 0;
  const page = await api.movies.list(); // 429 with Retry-After: 2, then the new month
  assert.equal(page.success, true);
  assert.equal(calls.length, 2);
  assert.ok(sent[2]! - sent[1]! >= 1500, `asked again ${Math.round(sent[2]! - sent[1]!)} ms after the 429, before the reset 1.5 s away`);
  await edge.usage.set('edge@example.com', 1);
  calls.length = 0;
  await assert.rejects(api.movies.list(), QuotaExceededError); // the next reset is a month away
  assert.equal(calls.length, 1);
});

test('cache: a 304 is answered from the cache, sent If-None-Match, and costs no quota', async () => {
  await server.usage.set('client@example.com', 0);
  const seen: (string | null)[] = [];
  const api = client({
    cache: { maxEntries: 2 },
    fetch: async (url, init) => {
      seen.push(new Headers(init?.headers).get('if-none-match'));
      return fetch(url, init);
    },
  });
  const first = await api.celebrities.get('imogen-blackwood');
  const again = await api.celebrities.get('imogen-blackwood');
  assert.deepEqual(again, first);
  assert.notEqual(again, first, 'a fresh copy: changing it cannot change the cache');
  assert.equal(seen[0], null);
  assert.match(seen[1] ?? '', /^"/);
  assert.equal(await used(), 1, 'the 304 did not count');
  await api.movies.list();
  await api.news.list(); // a third URL: the celebrity, least recently used, leaves the cache
  await api.celebrities.get('imogen-blackwood');
  assert.equal(seen.at(-1), null);
  await server.reload();
  const afterReload = await api.news.list();
  assert.equal(afterReload.success, true, 'new data: a new tag, a 200');
  assert.equal(await used(), 5);
});
