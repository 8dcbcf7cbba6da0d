// Conditional requests over HTTP/1.1 and HTTP/2 (CONTRACT 11; over-h2.test.ts runs it again): a strong ETag on every API 200, If-None-Match -> 304
// with no body and the headers of the 200, never counted; HEAD and 304 agree with GET.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { adoptToken, dataToken, encodedTag, entityTag, targetHash } from '../../src/http/conditional.ts';
import type { Snapshot } from '../../src/data/snapshot.ts';
import { fixture } from '../helpers/fixture.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let key: string;
let now = Date.parse('2026-03-14T12:00:00Z');
before(async () => {
  server = await startTestServer({ data: fixture(), clock: () => now, plans: { free: 1000 } });
  key = await server.account('free', 'etag@example.com');
});
after(() => server.close());

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => server.request(path, { key, headers, method });
/** Headers a 200 and its 304 must share: all but the body's length and the per-response ones. */
const shared = (h: Headers) => Object.fromEntries([...h].filter(([n]) => !['content-length', 'x-request-id', 'date', 'keep-alive', 'connection'].includes(n)));

test('targetHash: FNV-1a 32 of the target in 8 hex digits', () => {
  // FNV-1a 32 test vectors (draft-eastlake-fnv): "" -> 811c9dc5, "a" -> e40c292c, "foobar" -> bf9cf968.
  const cases: [string, string][] = [['', '811c9dc5'], ['a', 'e40c292c'], ['foobar', 'bf9cf968']];
  for (const [target, hex] of cases) assert.equal(targetHash(target), hex, `${JSON.stringify(target)} -> ${hex}`);
  assert.notEqual(targetHash('/api/v1/news?limit=5'), targetHash('/api/v1/news?limit=6'));
});

test('entityTag: "<data token>-<targetHash>-<day>" (no day for null), byte for byte, for targets, days and tokens in turn', () => {
  const a = {} as Snapshot;
  const b = {} as Snapshot;
  adoptToken(b, 'Zz_-09');
  for (const [snapshot, target, day] of [
    [a, '/api/v1/celebrities?nationality=french&sort=name_asc&page=3', 20261129],
    [a, '/api/v1/celebrities?nationality=french&sort=name_asc&page=4', 20261129],
    [a, '/api/v1/celebrities?nationality=french&sort=name_asc&page=4', 20261130],
    [b, '/api/v1/movies?page=2', null],
    [a, '/api/v1/movies?page=2', null],
    [a, '/api/v1/celebrities', 20261129],
  ] as [Snapshot, string, number | null][]) {
    const want = `"${dataToken(snapshot)}-${targetHash(target)}${day === null ? '' : `-${day}`}"`;
    assert.equal(entityTag(snapshot, target, day), want);
    assert.equal(entityTag(snapshot, target, day), want, 'asked again (the last tag kept)');
  }
});

test('encodedTag: the tag with its coding before the closing quote, for each tag and coding in turn (the last one kept)', () => {
  const tags = ['"abc-12345678"', '"abc-87654321-20261129"', '"x"'];
  for (const a of tags) {
    for (const b of tags) {
      for (const [tag, encoding] of [[a, 'br'], [a, 'gzip'], [b, 'br'], [b, 'br'], [a, 'br']] as const) {
        assert.equal(encodedTag(tag, encoding), `${tag.slice(0, -1)}-${encoding}"`);
      }
    }
  }
});

test('a 200 carries a strong ETag and may be kept and revalidated; a matching If-None-Match is a 304 with the same headers, no body, not counted', async () => {
  const used = async () => (await server.service.gate.usage.get('etag@example.com')).used;
  const first = await get('/api/v1/movies?sort=title_asc');
  assert.equal(first.status, 200);
  const tag = first.headers.get('etag')!;
  assert.match(tag, /^"[^"]+"$/, 'strong: quoted, no W/');
  assert.equal(first.headers.get('cache-control'), 'private, no-cache');
  assert.equal(await used(), 1);
  for (const condition of [tag, `W/${tag}`, `"other", ${tag}`, `${tag} , "x"`]) {
    const again = await get('/api/v1/movies?sort=title_asc', { 'if-none-match': condition });
    assert.equal(again.status, 304, condition);
    assert.equal(again.text, '');
    assert.deepEqual(shared(again.headers), shared(first.headers), condition);
  }
  assert.equal(await used(), 1, 'no 304 counted');
  const report = await server.service.gate.usage.get('etag@example.com');
  assert.deepEqual(report.daily.map((d) => [d.success, d.rejected]), [[1, 0]], 'nor shown as a rejection');
  const stale = await get('/api/v1/movies?sort=title_asc', { 'if-none-match': '"stale", W/"x"' });
  assert.equal(stale.status, 200);
  assert.equal(stale.headers.get('etag'), tag, 'the same data, request and day give the same tag');
  assert.equal(await used(), 2);
});

test('the tag names the request, the data and (for celebrities) the day', async () => {
  const tag = async (path: string) => (await get(path)).headers.get('etag');
  const movies = await tag('/api/v1/movies');
  const celebrity = await tag('/api/v1/celebrities/zoe-martin');
  assert.notEqual(await tag('/api/v1/movies?limit=1'), movies);
  assert.notEqual(await tag('/api/v1/movies/night-train'), movies);
  now += 86_400_000; // the next UTC day: age may change, movies cannot
  try {
    assert.equal(await tag('/api/v1/movies'), movies);
    assert.notEqual(await tag('/api/v1/celebrities/zoe-martin'), celebrity);
    await server.service.reload(fixture()); // the same files, loaded again: a new data version
    assert.notEqual(await tag('/api/v1/movies'), movies);
  } finally {
    now -= 86_400_000;
    await server.service.gate.usage.set('etag@example.com', 0);
  }
});

test('HEAD agrees with GET, and a HEAD with a matching If-None-Match is a 304 too', async () => {
  const got = await get('/api/v1/news?featured=true');
  const head = await get('/api/v1/news?featured=true', {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  // Each counted once: their RateLimit `r` differs by one, every other header is the same.
  const { ratelimit: a, ...headHeaders } = shared(head.headers);
  const { ratelimit: b, ...getHeaders } = shared(got.headers);
  assert.deepEqual(headHeaders, getHeaders);
  assert.notEqual(a, b);
  assert.equal(head.headers.get('content-length'), got.headers.get('content-length'));
  const revalidated = await get('/api/v1/news?featured=true', { 'if-none-match': got.headers.get('etag')! }, 'HEAD');
  assert.equal(revalidated.status, 304);
  await server.service.gate.usage.set('etag@example.com', 0);
});

test('If-None-Match: * is a 304 only where a 200 would be; errors carry no ETag and are not hidden by a tag', async () => {
  assert.equal((await get('/api/v1/reviews/night-train-review', { 'if-none-match': '*' })).status, 304);
  const missing = await get('/api/v1/reviews/no-such-review', { 'if-none-match': '*' });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('etag'), null);
  assert.equal(missing.headers.get('cache-control'), 'no-store');
  const tag = (await get('/api/v1/reviews')).headers.get('etag')!;
  const bad = await get('/api/v1/reviews?minRating=.5', { 'if-none-match': tag });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get('etag'), null);
  await server.service.gate.usage.set('etag@example.com', 0);
});

test('the OpenAPI document is tagged too, and a 429 is a 429 whatever the tag', async () => {
  const doc = await server.request('/api/v1/openapi.json');
  const tag = doc.headers.get('etag')!;
  assert.match(tag, /^"openapi-/);
  assert.equal((await server.request('/api/v1/openapi.json', { headers: { 'if-none-match': tag } })).status, 304);
  const ok = await get('/api/v1/outfits');
  await server.service.gate.usage.set('etag@example.com', 1000);
  const limited = await get('/api/v1/outfits', { 'if-none-match': ok.headers.get('etag')! });
  assert.equal(limited.status, 429, 'the quota check comes first (CONTRACT 2)');
});
