// Issue 20: a list page or a detail asked again is sent as it was kept, by strong ETag and request target: the
// same bytes, never another target's, never another day's or another load's; bounded by bytes, least
// recently used out first; hits and misses in /metrics.
import assert from 'node:assert/strict';
import { after, before, describe, it, test } from 'node:test';
import { ASKED_ONCE_SLOTS, askedSlot, costOf, KeptPages } from '../../src/http/kept-pages.ts';
import { Metrics } from '../../src/http/metrics.ts';
import { fixture } from '../helpers/fixture.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const page = (n: number, size = 1000) => Buffer.alloc(size, n);

/** Keeps `body` under `key` as a server would: built on two misses, kept the second time. */
function keepNow(kept: KeptPages, tag: string, target: string, body: Buffer): void {
  kept.keep(tag, target, body);
  kept.keep(tag, target, body);
}

test('KeptPages: a page built the second time it is asked is kept; the same tag and target -> the kept bytes (a hit); another tag or target -> a miss', () => {
  const kept = new KeptPages();
  assert.equal(kept.get('"t-1"', '/a'), undefined);
  kept.keep('"t-1"', '/a', page(1));
  assert.equal(kept.get('"t-1"', '/a'), undefined, 'asked once: noted, not kept');
  const body = page(1);
  kept.keep('"t-1"', '/a', body);
  body.fill(9); // the body was a slice of a shared slab, written again by a later request: the kept copy stays
  assert.deepEqual(kept.get('"t-1"', '/a')?.body, page(1));
  assert.equal(kept.get('"t-1"', '/b'), undefined, 'another target under the same tag (a hash collision)');
  assert.equal(kept.get('"t-2"', '/a'), undefined, 'another day or load');
  assert.deepEqual({ hits: kept.hits, misses: kept.misses, entries: kept.size.entries }, { hits: 1, misses: 4, entries: 1 });
  // The colliding target kept in turn: each only ever gets its own page.
  keepNow(kept, '"t-1"', '/b', page(2));
  assert.deepEqual(kept.get('"t-1"', '/b')?.body, page(2));
  assert.equal(kept.get('"t-1"', '/a'), undefined);
});

test('KeptPages: every hit on an entry is the same answer object, made when the page was kept (nothing made per hit)', () => {
  const kept = new KeptPages();
  keepNow(kept, '"t-1"', '/a', page(1));
  const first = kept.get('"t-1"', '/a');
  assert.ok(first !== undefined && first.ok);
  assert.equal(kept.get('"t-1"', '/a'), first);
  keepNow(kept, '"t-1"', '/b', page(2)); // another target under that tag: a new entry, a new answer
  assert.notEqual(kept.get('"t-1"', '/b'), first);
  assert.deepEqual(first.body, page(1));
});

test('KeptPages: a tag asked once is noted in its slot until another tag takes that slot; asked again while noted -> kept', () => {
  const kept = new KeptPages();
  const first = '"first"';
  let other = 0;
  const others = (differ: boolean) => {
    for (;;) {
      const tag = `"k${other++}"`;
      if ((askedSlot(tag) === askedSlot(first)) !== differ) return tag;
    }
  };
  kept.keep(first, '/p', page(1));
  for (let i = 0; i < ASKED_ONCE_SLOTS; i++) kept.keep(others(true), '/p', page(1)); // other slots: first stays noted
  kept.keep(first, '/p', page(2));
  assert.deepEqual(kept.get(first, '/p')?.body, page(2), 'asked twice: kept');
  const second = '"second"';
  const rival = (() => {
    for (let i = 0; ; i++) if (askedSlot(`"r${i}"`) === askedSlot(second)) return `"r${i}"`;
  })();
  kept.keep(second, '/p', page(3));
  kept.keep(rival, '/p', page(4)); // takes second's slot: second is forgotten
  kept.keep(second, '/p', page(3)); // noted again, not kept
  assert.equal(kept.get(second, '/p'), undefined);
  kept.keep(second, '/p', page(3));
  assert.deepEqual(kept.get(second, '/p')?.body, page(3));
});

test('KeptPages: a page asked for between every keep of others stays kept while the others come and go', () => {
  const one = costOf('"a"', '/p', page(1));
  const kept = new KeptPages(one * 3 + one / 2); // room for three
  keepNow(kept, '"hot"', '/p', page(7));
  for (let i = 0; i < 100; i++) {
    keepNow(kept, `"c${i}"`, '/p', page(1));
    assert.deepEqual(kept.get('"hot"', '/p')?.body, page(7), `after ${i + 1} others kept`);
    assert.ok(kept.size.entries <= 3);
  }
  assert.equal(kept.get('"c0"', '/p'), undefined, 'the cold ones went');
});

test('KeptPages: over its byte budget -> the least recently used go first; a page larger than the budget is not kept', () => {
  const one = costOf('"a"', '/p', page(1));
  const kept = new KeptPages(one * 2 + one / 2); // room for two
  keepNow(kept, '"a"', '/p', page(1));
  keepNow(kept, '"b"', '/p', page(2));
  kept.get('"a"', '/p'); // a used last: b is the oldest
  keepNow(kept, '"c"', '/p', page(3));
  assert.equal(kept.size.entries, 2);
  assert.ok(kept.size.bytes <= one * 2 + one / 2);
  assert.deepEqual(kept.get('"a"', '/p')?.body, page(1));
  assert.deepEqual(kept.get('"c"', '/p')?.body, page(3));
  assert.equal(kept.get('"b"', '/p'), undefined, 'b evicted');
  keepNow(kept, '"d"', '/p', page(4, one * 3));
  assert.equal(kept.get('"d"', '/p'), undefined);
  assert.equal(kept.size.entries, 2);
});

describe('list pages asked again, over HTTP', () => {
  let server: TestServer;
  let key: string;
  let now = Date.parse('2026-03-14T12:00:00.000Z');
  const data = fixture();
  // A birthday tomorrow on the first page (the newest record): its age changes with the day.
  data.celebrities.push({ _id: 'b1', slug: 'birthday-person', name: 'Birthday Person', born: '2001-03-15', createdAt: '2026-01-01T00:00:00Z' });
  before(async () => {
    server = await startTestServer({ data, clock: () => now });
    key = await server.account();
  });
  after(() => server.close());
  const get = (path: string) => server.raw(path, { 'x-api-key': key });

  it('the same page three times -> the same bytes and tag, built twice (kept the second time), sent as kept the third; /metrics counts the misses and the hit', async () => {
    const before = { ...server.service.keptPages };
    const answers = [await get('/api/v1/news?limit=5'), await get('/api/v1/news?limit=5'), await get('/api/v1/news?limit=5')];
    assert.equal(answers[0]!.status, 200);
    for (const a of answers.slice(1)) {
      assert.deepEqual(a.body, answers[0]!.body);
      assert.equal(a.headers.etag, answers[0]!.headers.etag);
    }
    assert.deepEqual({ hits: server.service.keptPages.hits - before.hits, misses: server.service.keptPages.misses - before.misses }, { hits: 1, misses: 2 });
    const text = new Metrics({ clock: Date.now, draining: () => false, store: () => null, keptPages: () => server.service.keptPages }).render();
    assert.match(text, new RegExp(`^celebrity_api_kept_pages_total\\{result="hit"\\} ${server.service.keptPages.hits}$`, 'm'));
    assert.match(text, new RegExp(`^celebrity_api_kept_pages_total\\{result="miss"\\} ${server.service.keptPages.misses}$`, 'm'));
  });

  it('the same detail three times -> the same bytes and tag, built twice, sent as kept the third; a detail kept follows the day too', async () => {
    const before = { ...server.service.keptPages };
    const answers = [await get('/api/v1/news/' + data.news[0]!.slug), await get('/api/v1/news/' + data.news[0]!.slug), await get('/api/v1/news/' + data.news[0]!.slug)];
    assert.equal(answers[0]!.status, 200);
    for (const a of answers.slice(1)) {
      assert.deepEqual(a.body, answers[0]!.body);
      assert.equal(a.headers.etag, answers[0]!.headers.etag);
    }
    assert.deepEqual({ hits: server.service.keptPages.hits - before.hits, misses: server.service.keptPages.misses - before.misses }, { hits: 1, misses: 2 });
    const age = async () => (JSON.parse((await get('/api/v1/celebrities/birthday-person')).body.toString()) as { data: { age: number } }).data.age;
    const was = now;
    try {
      now = Date.parse('2026-03-14T13:00:00.000Z');
      assert.deepEqual([await age(), await age(), await age()], [24, 24, 24]);
      now = Date.parse('2026-03-15T13:00:00.000Z');
      assert.deepEqual([await age(), await age(), await age()], [25, 25, 25]);
    } finally {
      now = was;
    }
  });

  it('a kept page follows the day: the age on it changes at the birthday', async () => {
    const age = async () => (JSON.parse((await get('/api/v1/celebrities')).body.toString()) as { data: { slug: string; age: number }[] }).data.find((c) => c.slug === 'birthday-person')!.age;
    assert.deepEqual([await age(), await age(), await age()], [24, 24, 24]);
    now = Date.parse('2026-03-15T12:00:00.000Z');
    assert.deepEqual([await age(), await age(), await age()], [25, 25, 25]);
  });

  it('a reload -> the new data\'s page, not the kept one', async () => {
    const title = async () => (JSON.parse((await get('/api/v1/news?limit=1')).body.toString()) as { data: { title: string }[] }).data[0]!.title;
    const was = await title();
    assert.deepEqual([await title(), await title()], [was, was]); // kept now
    const next = fixture();
    next.news[0]!.title = 'A new title after the reload';
    await server.service.reload(next);
    assert.equal(await title(), 'A new title after the reload');
  });
});

test('two targets whose tags collide each get their own page, kept or not', async () => {
  // The same pair as in compress.test.ts: one 32-bit hash of the target, so one tag (bundled data).
  const server = await startTestServer();
  try {
    const key = await server.account();
    const get = (path: string) => server.raw(path, { 'x-api-key': key });
    const a = '/api/v1/news?search=dy&limit=41&page=1&sort=oldest';
    const b = '/api/v1/news?sort=popular&page=1&limit=74&search=po';
    const [a1, a2, a3] = [await get(a), await get(a), await get(a)]; // kept from the second
    assert.deepEqual([a2.body, a3.body], [a1.body, a1.body]);
    const [b1, b2, b3] = [await get(b), await get(b), await get(b)];
    assert.equal(b1.headers.etag, a1.headers.etag, 'the premise: the same tag');
    assert.notDeepEqual(b1.body, a1.body);
    assert.deepEqual([b2.body, b3.body], [b1.body, b1.body]);
    assert.deepEqual((await get(a)).body, a1.body);
  } finally {
    await server.close();
  }
});
