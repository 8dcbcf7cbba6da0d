// The matches of recent searches, by collection and folded query (issue 20): a term asked again (the
// next page, another sort or filter, the same request from many clients) costs a Map lookup instead
// of an intersection of trigram postings (up to milliseconds for a common word at 100k). Bounded in
// bytes and entries, those not used lately out (second-chance.ts). Keyed by the collection's SearchIndex object: a reload builds new
// ones, so an answer from replaced data is never given, and the old entries age out with no sweep.
// Per thread (each has its own module), like the AnswerCache of compressed bodies.
import { searchTextIncludes, type CollectionIndex } from '../data/indexes.ts';
import { recordsOf, searchGroups as matchingGroups, searchMatches, type SearchIndex } from '../data/search-index.ts';
import { SecondChance, type Used } from './second-chance.ts';

/** Ids kept in all, 4 bytes each: 8 MB, a few dozen common-word answers at 100k. */
export const SEARCH_CACHE_BYTES = 8 << 20;
/** Answers kept at most, however small: the recent terms of a busy server, not every term ever asked. */
export const SEARCH_CACHE_ENTRIES = 512;
/** Counted per entry besides its ids (the Map entries and the array object), so tiny answers are bounded too. */
const ENTRY_BYTES = 160;

interface Entry extends Used {
  readonly queries: Map<string, Entry>;
  readonly query: string;
  /** The answer: ascending record ids (searchIds), or text groups (searchGroups). */
  readonly ids: Int32Array;
  /** Records in the answer (its ids, or the records of its groups). */
  readonly records: number;
  /**
   * The answer in each sort order asked for twice, by sort name (searchInOrder); ASKED_ONCE after the
   * first time. Not keyed by the order's arrays: those are views of the snapshot's buffers, which a
   * kept entry would then hold after a reload replaced them.
   */
  orders: Map<string, Int32Array> | null;
  /** Bytes of `orders` (4 per record per order, counted from the first ask). */
  orderBytes: number;
}

const byIndex = new WeakMap<SearchIndex, Map<string, Entry>>();
/** The text groups a search found (searchGroups), apart from the records: by index, then query. */
const groupsByIndex = new WeakMap<SearchIndex, Map<string, Entry>>();
/** Every kept answer; a hit sets its flag, and the hand evicts those not used since it last passed. */
const recent = new Map<Int32Array, Entry>();
const hand = new SecondChance(recent);
let bytes = 0;

/** A sort asked for once: its order is made the second time (a first page is a short walk anyway). */
const ASKED_ONCE = new Int32Array(0);

/** Bytes an entry holds: its ids, and its answer in each order made of it (or asked for once: counted alike). */
const cost = (ids: Int32Array, orderBytes = 0) => ids.byteLength + orderBytes + ENTRY_BYTES;

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
    kept.used = true;
    return kept.ids;
  }
  // The groups of a search alone asked before: their records, no intersection.
  const groups = groupsByIndex.get(index.search)?.get(query);
  // searchMatches answers in an array it reuses: the kept answer is a copy of its own size.
  const ids = keptCopy(groups !== undefined ? recordsOf(index.search, groups.ids) : searchMatches(index.search, query, searchTextIncludes, index));
  return keep(queries, query, ids, ids.length).ids;
}

/** Text groups a search found, as searchGroups keeps them. */
export interface KeptGroups {
  /** Ascending group numbers. */
  readonly ids: Int32Array;
  /** The records of those groups in all. */
  readonly records: number;
}

/**
 * The ascending text groups (src/data/search-index.ts TextGroups) whose folded text contains the
 * folded `query`, when the collection's trigrams index groups and the query has 3 units or more;
 * else null (searchIds then). Kept as searchIds' answers are, apart from them: a search alone is
 * paged from its groups (src/query/execute.ts), with its records neither put in order nor kept.
 */
export function searchGroups(index: CollectionIndex, query: string): KeptGroups | null {
  const starts = index.search.groups.starts;
  if (query.length < 3 || starts.length === 0) return null;
  let queries = groupsByIndex.get(index.search);
  if (queries === undefined) groupsByIndex.set(index.search, (queries = new Map()));
  const kept = queries.get(query);
  if (kept !== undefined) {
    kept.used = true;
    return kept;
  }
  const groups = keptCopy(matchingGroups(index.search, query, searchTextIncludes, index));
  let records = 0;
  for (let i = 0; i < groups.length; i++) records += starts[groups[i]! + 1]! - starts[groups[i]!]!;
  return keep(queries, query, groups, records);
}

/** `ids` (of `records` records) kept as the answer to `query` in `queries`, within the bounds: its entry. */
function keep(queries: Map<string, Entry>, query: string, ids: Int32Array, records: number): Entry {
  const entry: Entry = { queries, query, ids, records, orders: null, orderBytes: 0, used: false };
  if (cost(ids) > SEARCH_CACHE_BYTES) return entry;
  queries.set(query, entry);
  recent.set(ids, entry);
  bytes += cost(ids);
  evict();
  return entry;
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
    bytes -= cost(old, entry.orderBytes);
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
  return inOrder(entry, sort, () => {
    const marks = new Uint32Array((order.length + 31) >>> 5);
    for (let i = 0; i < ids.length; i++) {
      const r = rank[ids[i]!]!;
      marks[r >>> 5]! |= 1 << (r & 31);
    }
    return marked(marks, ids.length, order);
  });
}

/**
 * The same for kept groups (`kept`, as searchGroups gave them), the records of group g being
 * `ids[starts[g], starts[g + 1])` (the collection's TextGroups).
 */
export function groupsInOrder(kept: KeptGroups, starts: Int32Array, ids: Int32Array, sort: string, rank: Int32Array, order: Int32Array): Int32Array | null {
  const entry = kept as Entry;
  if (recent.get(entry.ids) !== entry) return null; // not kept (or no longer)
  const groups = entry.ids;
  return inOrder(entry, sort, () => {
    const marks = new Uint32Array((order.length + 31) >>> 5);
    for (let i = 0; i < groups.length; i++) {
      for (let e = starts[groups[i]!]!; e < starts[groups[i]! + 1]!; e++) {
        const r = rank[ids[e]!]!;
        marks[r >>> 5]! |= 1 << (r & 31);
      }
    }
    return marked(marks, entry.records, order);
  });
}

/** The records at the `count` positions of `order` set in `marks`, in order. */
function marked(marks: Uint32Array, count: number, order: Int32Array): Int32Array {
  const sorted = new Int32Array(count);
  let k = 0;
  for (let w = 0; w < marks.length; w++) {
    for (let word = marks[w]!; word !== 0; word &= word - 1) sorted[k++] = order[(w << 5) + 31 - Math.clz32(word & -word)]!;
  }
  return sorted;
}

/** The kept answer of `entry` in order `sort`: made by `make` on its second ask. */
function inOrder(entry: Entry, sort: string, make: () => Int32Array): Int32Array | null {
  const orders = (entry.orders ??= new Map());
  let sorted = orders.get(sort);
  if (sorted !== undefined && sorted !== ASKED_ONCE) return sorted;
  const more = sorted === undefined ? entry.records * 4 : 0;
  if (cost(entry.ids, entry.orderBytes + more) > SEARCH_CACHE_BYTES / 4) return null;
  if (sorted === undefined) {
    orders.set(sort, ASKED_ONCE);
    entry.orderBytes += more;
    bytes += more;
    evict();
    return null;
  }
  sorted = make();
  orders.set(sort, sorted);
  return sorted;
}

/** What the cache holds (tests and tools). */
export function searchCacheStats(): { entries: number; bytes: number } {
  return { entries: recent.size, bytes };
}
