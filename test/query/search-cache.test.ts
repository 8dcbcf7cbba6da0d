// src/query/search-cache.ts: a search asked again is answered from what was kept, for the data it was
// made from only, and the cache stays within its bytes, those not used lately out (second-chance.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CollectionIndex } from '../../src/data/indexes.ts';
import { buildSearchIndex } from '../../src/data/search-index.ts';
import { stringTable } from '../../src/data/string-table.ts';
import { SEARCH_CACHE_BYTES, SEARCH_CACHE_ENTRIES, searchCacheStats, searchIds, searchInOrder } from '../../src/query/search-cache.ts';
import { stillHeld } from '../helpers/collected.ts';

/** Just what a search reads of a collection: its grams and its texts. */
const collection = (texts: readonly string[]) =>
  ({ search: buildSearchIndex(texts), searchText: stringTable(texts, false) }) as unknown as CollectionIndex;
const expected = (texts: readonly string[], q: string) => texts.flatMap((t, id) => (t.includes(q) ? [id] : []));

test('the same search again -> the kept answer; 1 or 2 units -> not kept', () => {
  const texts = ['savannah brennan', 'anna vasseur', 'joanna anna', 'hannah', 'bob'];
  const ix = collection(texts);
  const first = searchIds(ix, 'anna');
  assert.deepEqual([...first], expected(texts, 'anna'));
  assert.equal(searchIds(ix, 'anna'), first, 'the same array: no search made');
  const { entries } = searchCacheStats();
  assert.deepEqual([...searchIds(ix, 'an')], expected(texts, 'an'));
  assert.equal(searchCacheStats().entries, entries, 'a 2-unit search is not kept');
  const three = searchIds(ix, 'ann');
  assert.deepEqual([...three], expected(texts, 'ann'));
  assert.equal(searchIds(ix, 'ann'), three, 'a 3-unit search is kept');
});

test('reloaded data (a new index) -> its own answer, never the one kept for the old data', () => {
  const before = ['anna one', 'two', 'anna three'];
  const after = ['no match', 'anna here', 'none', 'hannah and anna'];
  assert.deepEqual([...searchIds(collection(before), 'anna')], [0, 2]);
  assert.deepEqual([...searchIds(collection(after), 'anna')], [1, 3]);
});

test('more answers than the bytes allow -> the least recently used go, the rest stay, within the bound', () => {
  // Every text holds the alphabet: each 4-unit slice of it matches all 100,000 records (400 KB kept).
  const texts = Array.from({ length: 100_000 }, () => 'abcdefghijklmnopqrstuvwxyz');
  const ix = collection(texts);
  const queries = Array.from({ length: 23 }, (_, i) => texts[0]!.slice(i, i + 4));
  const first = searchIds(ix, queries[0]!);
  const answers = new Map<string, Int32Array>();
  for (const q of queries.slice(1)) {
    answers.set(q, searchIds(ix, q));
    assert.equal(answers.get(q)!.length, texts.length, q);
    assert.equal(searchIds(ix, queries[0]!), first, 'kept: asked again after each other search');
    assert.ok(searchCacheStats().bytes <= SEARCH_CACHE_BYTES, `${searchCacheStats().bytes} bytes kept`);
  }
  assert.ok(23 * first.byteLength > SEARCH_CACHE_BYTES, 'the test asks for more than the cache holds');
  assert.equal(searchIds(ix, queries[22]!), answers.get(queries[22]!), 'the last one asked: kept');
  const again = searchIds(ix, queries[1]!); // the least recently used: gone, searched again
  assert.notEqual(again, answers.get(queries[1]!));
  assert.equal(again.length, texts.length);
});

test('more small answers than the entries allow -> at most that many kept, each still exact', () => {
  const texts = Array.from({ length: 2000 }, (_, i) => `name ${String(i).padStart(4, '0')}`);
  const ix = collection(texts);
  for (let i = 0; i < SEARCH_CACHE_ENTRIES + 100; i++) {
    const q = String(i).padStart(4, '0');
    assert.deepEqual([...searchIds(ix, q)], expected(texts, q), q);
  }
  assert.equal(searchCacheStats().entries, SEARCH_CACHE_ENTRIES);
});

test('a kept answer in a sort order -> its ids in that order, made on the second request and kept; any other set -> null', () => {
  const texts = ['anna b', 'xx', 'anna a', 'hannah', 'anna c', 'joanna'];
  const ix = collection(texts);
  const ids = searchIds(ix, 'anna'); // 0, 2, 3, 4, 5
  const order = Int32Array.from([5, 3, 1, 4, 2, 0]); // some sort: record 5 first
  const rank = new Int32Array(order.length);
  order.forEach((id, pos) => (rank[id] = pos));
  const before = searchCacheStats().bytes;
  assert.equal(searchInOrder(ids, 'some', rank, order), null, 'the first request: not made yet');
  assert.equal(searchCacheStats().bytes, before + ids.byteLength, 'counted in the bound');
  const sorted = searchInOrder(ids, 'some', rank, order)!;
  assert.deepEqual([...sorted], [5, 3, 4, 2, 0]);
  assert.equal(searchCacheStats().bytes, before + ids.byteLength, 'counted once');
  assert.equal(searchInOrder(ids, 'some', rank, order), sorted, 'made once');
  assert.equal(searchInOrder(ids.slice(), 'some', rank, order), null, 'not a kept answer');
});

test('a kept answer in a sort order holds no array of the snapshot: replaced data can be collected', async () => {
  const texts = ['anna one', 'two', 'anna three', 'joanna'];
  const made = () => {
    // The order's arrays as a restart makes them: views of one large buffer of the snapshot.
    const buffer = new ArrayBuffer(1 << 20);
    const order = new Int32Array(buffer, 0, 4);
    order.set([3, 2, 1, 0]);
    const rank = new Int32Array(buffer, 64, 4);
    order.forEach((id, pos) => (rank[id] = pos));
    const ix = collection(texts);
    const ids = searchIds(ix, 'anna');
    searchInOrder(ids, 'latest', rank, order);
    assert.deepEqual([...searchInOrder(ids, 'latest', rank, order)!], [3, 2, 0]);
    return new WeakRef(buffer);
  };
  const buffer = made();
  assert.equal(await stillHeld([buffer]), 0, "the replaced snapshot's buffer is gone, though its answer is still kept");
});
