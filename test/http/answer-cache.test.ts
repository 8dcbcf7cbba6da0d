// Issue 20: an answer compressed per request is kept by its strong ETag from its second ask, so the same
// answer asked again is not compressed again; bounded by bytes, those not used lately out first (second
// chance); hits and misses counted. An answer asked once is not kept (made in the send slab).
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { test } from 'node:test';
import { AnswerCache } from '../../src/http/compressed-bodies.ts';
import { Metrics } from '../../src/http/metrics.ts';
import { startTestServer } from '../helpers/server.ts';

const body = (n: number) => Buffer.from(JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ i, n, text: `value ${i * n}` })) }));

test('AnswerCache: asked once -> compressed, not kept; asked again -> compressed and kept; then the kept bytes (a hit); another coding, tag or target -> a miss', () => {
  const cache = new AnswerCache();
  assert.deepEqual(gunzipSync(cache.get('"t-1"', '/t', 'gzip', body(1))), body(1));
  assert.equal(cache.size.entries, 0, 'asked once: not kept');
  const a = cache.get('"t-1"', '/t', 'gzip', body(1));
  assert.deepEqual(gunzipSync(a), body(1));
  assert.equal(cache.size.entries, 1, 'asked twice: kept');
  assert.equal(cache.get('"t-1"', '/t', 'gzip', body(1)), a);
  // The other coding of a kept answer: kept at once, in the same entry.
  const b = cache.get('"t-1"', '/t', 'br', body(1));
  assert.equal(cache.get('"t-1"', '/t', 'br', body(1)), b);
  assert.equal(cache.size.entries, 1);
  cache.get('"t-2"', '/t', 'gzip', body(2));
  // The same tag for another target (its 32-bit hash collides): its own answer, never the other's.
  assert.deepEqual(gunzipSync(cache.get('"t-1"', '/u', 'gzip', body(3))), body(3));
  assert.deepEqual(gunzipSync(cache.get('"t-1"', '/u', 'gzip', body(3))), body(3));
  assert.deepEqual(gunzipSync(cache.get('"t-1"', '/t', 'gzip', body(1))), body(1));
  assert.deepEqual({ hits: cache.hits, misses: cache.misses }, { hits: 2, misses: 7 });
});

test('AnswerCache: a kept answer holds an ArrayBuffer of its own size, not the 16 KB chunk zlib wrote it into', () => {
  const cache = new AnswerCache();
  for (const coding of ['br', 'gzip'] as const) {
    cache.get('"t-1"', '/t', coding, body(1));
    const a = cache.get('"t-1"', '/t', coding, body(1));
    assert.ok(a.length < 4096, `${coding}: ${a.length} bytes`);
    assert.equal(a.buffer.byteLength, a.length, coding);
  }
});

test('AnswerCache: over its byte budget -> the least recently used go first', () => {
  const probe = new AnswerCache();
  probe.get('"a"', '/t', 'gzip', body(1));
  probe.get('"a"', '/t', 'gzip', body(1));
  const one = probe.size.bytes;
  const cache = new AnswerCache(one * 2 + one / 2); // room for two
  const twice = (t: string) => {
    cache.get(t, '/t', 'gzip', body(1));
    cache.get(t, '/t', 'gzip', body(1));
  };
  twice('"a"');
  twice('"b"');
  cache.get('"a"', '/t', 'gzip', body(1)); // a used last: b is the oldest
  twice('"c"');
  assert.equal(cache.size.entries, 2);
  assert.ok(cache.size.bytes <= one * 2 + one / 2);
  const misses = cache.misses;
  cache.get('"a"', '/t', 'gzip', body(1));
  cache.get('"c"', '/t', 'gzip', body(1));
  assert.equal(cache.misses, misses, 'a and c kept');
  cache.get('"b"', '/t', 'gzip', body(1));
  assert.equal(cache.misses, misses + 1, 'b evicted');
});

test('a filtered page asked three times with gzip -> compressed twice (kept on its second ask), the third the kept bytes; /metrics counts hits and misses', async () => {
  const server = await startTestServer({ protocol: 'http1' });
  try {
    const key = await server.account();
    const path = '/api/v1/celebrities?sort=name_desc&limit=50';
    const plain = await server.raw(path, { 'x-api-key': key });
    const first = await server.raw(path, { 'x-api-key': key, 'accept-encoding': 'gzip' });
    const second = await server.raw(path, { 'x-api-key': key, 'accept-encoding': 'gzip' });
    const third = await server.raw(path, { 'x-api-key': key, 'accept-encoding': 'gzip' });
    assert.equal(first.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(first.body), plain.body);
    assert.deepEqual(second.body, first.body);
    assert.deepEqual(third.body, first.body);
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(third.headers.etag, first.headers.etag);
    assert.deepEqual({ hits: server.service.compressed.hits, misses: server.service.compressed.misses }, { hits: 1, misses: 2 });
    const text = new Metrics({ clock: Date.now, draining: () => false, store: () => null, compressed: () => server.service.compressed }).render();
    assert.match(text, /^celebrity_api_compressed_answers_total\{result="hit"\} 1$/m);
    assert.match(text, /^celebrity_api_compressed_answers_total\{result="miss"\} 2$/m);
  } finally {
    await server.close();
  }
});
