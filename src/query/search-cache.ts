// The matches of recent searches, by collection and folded query (issue 20): a term asked again (the
// next page, another sort or filter, the same request from many clients) costs a Map lookup instead
// of an intersection of trigram postings (up to milliseconds for a common word at 100k). Bounded in
// bytes and entries, those not used lately out (second-chance.ts). Keyed by the collection's SearchIndex object: a reload builds new
// ones, so an answer from replaced data is never given, and the old entries age out with no sweep.
// Per thread (each has its own module), like the AnswerCache of compressed bodies.
import { searchTextIncludes, type CollectionIndex } from '../data/indexes.ts';
import { searchMatches, type SearchIndex } from '../data/search-index.ts';
import { SecondChance, type Used } from './second-chance.ts';

/** Ids kept in all, 4 bytes each: 8 MB, a few dozen common-word answers at 100k. */
export const SEARCH_CACHE_BYTES = 8 << 20;
/** Answers kept at most, however small: the recent terms of a busy server, not every term ever asked. */
export const SEARCH_CACHE_ENTRIES = 512;
/** Counted per entry besides its ids (the Map entries and the array object), so tiny answers are bounded too. */
const ENTRY_BYTES = 160;

interface Entry extends Used {
  readonly queries: Map<string, Int32Array>;
  readonly query: string;
  /**
   * The answer in each sort order asked for twice, by sort name (searchInOrder); ASKED_ONCE after the
   * first time. Not keyed by the order's arrays: those are views of the snapshot's buffers, which a
   * kept entry would then hold after a reload replaced them.
   */
  readonly orders: Map<string, Int32Array>;
}

const byIndex = new WeakMap<SearchIndex, Map<string, Int32Array>>();
/** Every kept answer; a hit sets its flag, and the hand evicts those not used since it last passed. */
const recent = new Map<Int32Array, Entry>();
const hand = new SecondChance(recent);
let bytes = 0;

/** A sort asked for once: its order is made the second time (a first page is a short walk anyway). */
const ASKED_ONCE = new Int32Array(0);

/** Bytes an entry holds: its ids, once per order made of them too (or asked for once: counted alike). */
const cost = (ids: Int32Array, orders = 0) => ids.byteLength * (1 + orders) + ENTRY_BYTES;

/**
 * The ascending ids of the records of `index` whose folded search text contains the folded, non-empty
 * `query`: exact, as searchMatches answers. Shared with later requests: the caller never writes it.
 */
export function searchIds(index: CollectionIndex, query: string): Int32Array {
  // 1 or 2 units are one posting (its bitmap, or a few ids): nothing to intersect or decode, not kept.
  // 3 units are one posting too, but its ids are decoded from their low bits and blocks: kept.
  if (query.length < 3) return searchMatches(index.search, query, searchTextIncludes, index);
  let queries = byIndex.get(index.search);
  if (queries === undefined) byIndex.set(index.search, (queries = new Map()));
  const kept = queries.get(query);
  if (kept !== undefined) {
    recent.get(kept)!.used = true;
    return kept;
  }
  // searchMatches answers in an array it reuses: the kept answer is a copy of its own size.
  const ids = keptCopy(searchMatches(index.search, query, searchTextIncludes, index));
  if (cost(ids) > SEARCH_CACHE_BYTES) return ids;
  queries.set(query, ids);
  recent.set(ids, { queries, query, orders: new Map(), used: false });
  bytes += cost(ids);
  evict();
  return ids;
}

/** Answers up to this many ids are copied into a shared slab; larger ones get an array of their own. */
const SLAB_IDS = 4096;
let slab = new Int32Array(0);
let slabUsed = 0;

/**
 * A copy of `ids` to keep. A small answer (a rare name: tens of ids) goes into a 16 KB slab shared with
 * others, a view of it: a typed array of its own over 64 bytes is memory outside the heap, 0.8-1.6 µs
 * for a few hundred bytes on Node 20 (0.8-1 on 26), about the cost of searching a rare name's
 * candidates. A slab goes when every answer in it has gone: at most 16 KB held per kept answer.
 */
function keptCopy(ids: Int32Array): Int32Array {
  if (ids.length > SLAB_IDS / 4) return ids.slice();
  if (slabUsed + ids.length > slab.length) {
    slab = new Int32Array(SLAB_IDS);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + ids.length);
  out.set(ids);
  slabUsed += ids.length;
  return out;
}

/** Answers not used lately out until within the bounds (the last one stays). */
function evict(): void {
  while ((bytes > SEARCH_CACHE_BYTES || recent.size > SEARCH_CACHE_ENTRIES) && recent.size > 1) {
    const [old, entry] = hand.next()!;
    recent.delete(old);
    entry.queries.delete(entry.query);
    bytes -= cost(old, entry.orders.size);
  }
}

/**
 * A kept answer (`ids`, as searchIds gave it) in the order of sort `sort`, made from its `rank` and
 * `order` (sortRank, sortOrder of the answer's collection) on the second request for that sort and
 * kept with the answer: later pages of a search are then a slice, as for a filter, not a selection
 * over the whole order. Null the first time, for any other set, or when the answer is too large to
 * keep once more. Made as the selection makes a page (a mark per match by rank, then the marks in
 * order: O(matches + records / 32)); sorting the ranks took 4 ms for 55,000 matches.
 */
export function searchInOrder(ids: Int32Array, sort: string, rank: Int32Array, order: Int32Array): Int32Array | null {
  const entry = recent.get(ids);
  if (entry === undefined) return null;
  let sorted = entry.orders.get(sort);
  if (sorted !== undefined && sorted !== ASKED_ONCE) return sorted;
  if (cost(ids, entry.orders.size + (sorted === undefined ? 1 : 0)) > SEARCH_CACHE_BYTES / 4) return null;
  if (sorted === undefined) {
    entry.orders.set(sort, ASKED_ONCE);
    bytes += ids.byteLength;
    evict();
    return null;
  }
  const marks = new Uint32Array((order.length + 31) >>> 5);
  for (let i = 0; i < ids.length; i++) {
    const r = rank[ids[i]!]!;
    marks[r >>> 5]! |= 1 << (r & 31);
  }
  sorted = new Int32Array(ids.length);
  let k = 0;
  for (let w = 0; w < marks.length; w++) {
    for (let word = marks[w]!; word !== 0; word &= word - 1) sorted[k++] = order[(w << 5) + 31 - Math.clz32(word & -word)]!;
  }
  entry.orders.set(sort, sorted);
  return sorted;
}

/** What the cache holds (tests and tools). */
export function searchCacheStats(): { entries: number; bytes: number } {
  return { entries: recent.size, bytes };
}
