// Issue 20: a collection's first pages (page 1 of each sort at the default limit, nothing filtered)
// are kept with the index once made: the same bytes as a page joined from the records, under every
// spelling of their query, made again for a new serving day where a field depends on it.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import type { CollectionIndex } from '../../src/data/indexes.ts';
import { listPage } from '../../src/http/handlers.ts';

const DATA = fileURLToPath(new URL('../../data/', import.meta.url));
const DAY = 20261127;
let snapshot: Snapshot;
before(async () => {
  snapshot = await loadSnapshot(DATA);
});

const body = (index: CollectionIndex, query: string, day = DAY): Buffer => {
  const o = listPage(index, query, day);
  assert.ok(o.ok, `${index.def.name}?${query}`);
  return o.body;
};
/** The page as joined from the records: an index object no first page was kept for yet. */
const joined = (index: CollectionIndex, query: string, day = DAY): Buffer => Buffer.from(body({ ...index }, query, day));

test('first pages: every collection and sort, under any spelling of page 1 at the default limit, the bytes of the page joined from the records', () => {
  for (const index of Object.values(snapshot.collections)) {
    for (const sort of index.def.sorts) {
      const expected = joined(index, `sort=${sort.name}`);
      // Its items are those of the first 20 of a longer page (which is not a first page, so it is joined).
      const longer = JSON.parse(body(index, `sort=${sort.name}&limit=40`).toString());
      const page = JSON.parse(expected.toString());
      assert.deepEqual(page.data, longer.data.slice(0, 20), `${index.def.name} ${sort.name}`);
      assert.deepEqual(page.pagination, { page: 1, limit: 20, total: longer.pagination.total, pages: Math.ceil(longer.pagination.total / 20) });
      const spellings = [`sort=${sort.name}`, `limit=20&sort=${sort.name}&v=1`, `page=1&sort=${sort.name}&search=`, `sort=${sort.name}&v=2`];
      if (sort === index.def.sorts[0]) spellings.push('', 'limit=20', 'v=3', 'page=1');
      for (const q of spellings) assert.deepEqual(body(index, q), expected, `${index.def.name}?${q}`);
    }
  }
});

test('first pages: a kept one is never written over by the pages built after it (which share a slab)', () => {
  const index = snapshot.collections.celebrities;
  const first = body(index, '');
  const copy = Buffer.from(first);
  for (let p = 2; p <= 6; p++) body(index, `page=${p}`);
  for (const index2 of Object.values(snapshot.collections)) body(index2, 'limit=50&sort=oldest');
  assert.deepEqual(first, copy);
  assert.equal(body(index, ''), first, 'kept: the same buffer');
});

test('first pages: a page holding a field of the day (celebrity age) is made again for a new day; others are the same on any day', () => {
  const celebrities = snapshot.collections.celebrities;
  assert.ok(celebrities.def.late !== undefined);
  const today = body(celebrities, '', DAY);
  const later = body(celebrities, '', DAY + 10_000); // ten years on: every known age moved
  assert.notDeepEqual(later, today);
  assert.deepEqual(later, joined(celebrities, '', DAY + 10_000));
  assert.deepEqual(body(celebrities, '', DAY), joined(celebrities, '', DAY));
  const movies = snapshot.collections.movies;
  assert.equal(movies.def.late, undefined);
  assert.equal(body(movies, '', DAY + 10_000), body(movies, '', DAY));
});

test('first pages: a reload\'s index gets its own', async () => {
  const again = await loadSnapshot(DATA);
  const a = body(snapshot.collections.news, '');
  const b = body(again.collections.news, '');
  assert.notEqual(a, b);
  assert.deepEqual(a, b);
});
