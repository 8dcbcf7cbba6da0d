// Runs a QueryPlan against a collection's indexes: smallest candidate set first, then the page in
// the precomputed sort order. No record is looked at unless a constraint needs it.
import {
  bitmapOf, forgetLastPosting, postingBits, postingIds, postingInOrder, postingPage, sortOrder, sortRank, type CollectionIndex, type RangeIndex,
} from '../data/indexes.ts';
import { searchBits } from '../data/search-index.ts';
import type { QueryPlan } from './plan.ts';
import { groupsInOrder, searchGroups, searchIds, searchInOrder } from './search-cache.ts';
import { scratchInt32 } from '../data/scratch.ts';

export interface PageResult {
  /** Matching records in all. */
  readonly total: number;
  /** Record ids of the requested page, in sort order: valid until the next executeQuery (an array pages reuse). */
  readonly ids: ArrayLike<number>;
}

const EMPTY = new Int32Array(0);

/** First position in the ascending `values` whose value is >= x (or > x when `after`). */
function bound(values: Float64Array, x: number, after: boolean): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x || (after && values[mid] === x)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function contains(sorted: Int32Array, id: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === id) return true;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * The constraints of a plan as id sets: filter postings and search matches (ascending ids), and the
 * range slice (ascending by value, so tested through `byId`); a search of 1 or 2 units whose gram is
 * kept as a bitmap is that bitmap and its count instead (src/data/search-index.ts).
 */
interface Constraints {
  readonly sets: Int32Array[];
  readonly range: RangeIndex | null;
  readonly rangeSet: Int32Array | null;
  readonly min: number;
  readonly max: number;
  readonly bits: Uint32Array | null;
  readonly bitsTotal: number;
}

function constraints(index: CollectionIndex, plan: QueryPlan): Constraints {
  const sets: Int32Array[] = [];
  for (const f of plan.filters) sets.push(postingIds(index, f.param, f.key));
  let range: RangeIndex | null = null;
  let rangeSet: Int32Array | null = null;
  let min = 0;
  let max = 0;
  if (plan.range && index.range) {
    range = index.range;
    min = plan.range.min;
    max = plan.range.max;
    rangeSet = range.ids.subarray(bound(range.values, min, false), bound(range.values, max, true));
    sets.push(rangeSet);
  }
  let bits: Uint32Array | null = null;
  let bitsTotal = 0;
  if (plan.search !== null) {
    const dense = searchBits(index.search, plan.search);
    if (dense !== null) {
      bits = dense.bits;
      bitsTotal = dense.total;
    } else sets.push(searchIds(index, plan.search));
  }
  return { sets, range, rangeSet, min, max, bits, bitsTotal };
}

/** True when `id` is in every set but `skip` (and has its bit in the search bitmap, if any). */
function accepts(c: Constraints, skip: Int32Array, id: number): boolean {
  if (c.bits !== null && ((c.bits[id >>> 5]! >>> (id & 31)) & 1) === 0) return false;
  for (const s of c.sets) {
    if (s === skip) continue;
    if (s === c.rangeSet) {
      const v = c.range!.byId[id]!;
      if (!(v >= c.min && v <= c.max)) return false;
    } else if (!contains(s, id)) return false;
  }
  return true;
}

/** Ids matching every constraint, in no particular order; null when the plan has none. */
function matches(index: CollectionIndex, c: Constraints): Int32Array | null {
  // Every constraint is a set (a search is its matches): no sets, no constraint.
  if (c.sets.length === 0) return null;
  let base = c.sets[0]!;
  for (const s of c.sets) if (s.length < base.length) base = s;
  // One set: the set is the answer, shared, never copied.
  if (c.sets.length === 1 && c.bits === null) return base;
  const n = base.length;
  const out = new Int32Array(n);
  let k = 0;
  if (base !== c.rangeSet) {
    // Base ids ascend, and so does every other set but the range: a merge with one cursor per set,
    // O(n + m) rather than a binary search per candidate.
    // A dense posting has a bitmap: a bit test per candidate, no merge at all.
    const bitmaps: Uint32Array[] = c.bits === null ? [] : [c.bits];
    const others: Int32Array[] = [];
    for (const s of c.sets) {
      if (s === base || s === c.rangeSet) continue;
      const b = postingBits(index, s);
      if (b === null) others.push(s);
      else bitmaps.push(b);
    }
    const cursors = new Int32Array(others.length);
    outer: for (let i = 0; i < n; i++) {
      const id = base[i]!;
      for (let j = 0; j < bitmaps.length; j++) if (((bitmaps[j]![id >>> 5]! >>> (id & 31)) & 1) === 0) continue outer;
      for (let j = 0; j < others.length; j++) {
        const s = others[j]!;
        let p = cursors[j]!;
        while (p < s.length && s[p]! < id) p++;
        cursors[j] = p;
        if (p === s.length) break outer; // this set has nothing left at or above id
        if (s[p] !== id) continue outer;
      }
      if (c.rangeSet !== null) {
        const v = c.range!.byId[id]!;
        if (!(v >= c.min && v <= c.max)) continue;
      }
      out[k++] = id;
    }
    return out.subarray(0, k);
  }
  for (let i = 0; i < n; i++) {
    const id = base[i]!;
    if (accepts(c, base, id)) out[k++] = id;
  }
  return out.subarray(0, k);
}

/**
 * Dense postings only (each with a bitmap): AND the bitmaps a word at a time and count the bits, a
 * pass over size / 32 words whatever the sets hold. Null when a set has no bitmap.
 */
function denseIntersection(index: CollectionIndex, sets: readonly Int32Array[], search: Uint32Array | null): { bits: Uint32Array; total: number } | null {
  const maps: Uint32Array[] = search === null ? [] : [search];
  for (const s of sets) {
    const b = postingBits(index, s);
    if (b === null) return null;
    maps.push(b);
  }
  // Into an array every such request reuses (the page is walked from it at once), the first two
  // ANDed as they are copied: a copy per request (slice) was 12.5 KB outside the heap at 100k (33 KB
  // for outfits), then ANDed in place. (The AND and the count fused in one loop was slower on Node
  // 26 for outfits: 24 -> 27 µs.)
  const words = maps[0]!.length;
  if (andBits.length < words) andBits = new Uint32Array(words);
  const bits = andBits.subarray(0, words);
  const a = maps[0]!;
  const b = maps.length > 1 ? maps[1]! : a;
  let total = 0;
  for (let w = 0; w < words; w++) bits[w] = a[w]! & b[w]!;
  for (let j = 2; j < maps.length; j++) {
    const m = maps[j]!;
    for (let w = 0; w < words; w++) bits[w]! &= m[w]!;
  }
  for (let w = 0; w < words; w++) if (bits[w] !== 0) total += popcount(bits[w]!);
  return { bits, total };
}
let andBits = new Uint32Array(0);

/** The requested page of ids in the plan's sort order, and the total. */
export function executeQuery(index: CollectionIndex, plan: QueryPlan): PageResult {
  const page = answer(index, plan);
  // The posting this query asked for is not kept past it: after a reload it would hold the old
  // snapshot's buffers until the next filter request.
  forgetLastPosting();
  return page;
}

function answer(index: CollectionIndex, plan: QueryPlan): PageResult {
  const start = (plan.page - 1) * plan.limit;
  if (plan.filters.length === 1 && plan.search === null && plan.range === null) {
    // One filter alone: a slice of its posting kept in the sort's order, no sets made (postingPage).
    const f = plan.filters[0]!;
    const page = postingPage(index, f.param, f.key, plan.sort, start, plan.limit);
    if (page !== null) return page;
  }
  const order = sortOrder(index, plan.sort);
  if (plan.search !== null && plan.filters.length === 0 && plan.range === null) {
    const page = groupsPage(index, plan, order, start);
    if (page !== null) return page;
  }
  const c = constraints(index, plan);
  if (c.bits !== null && c.sets.length === 0) return bitsPage(index, plan, order, c.bits, c.bitsTotal, start);
  if (c.rangeSet !== null && c.sets.length === 1 && c.bits === null) {
    const page = rangePage(index, c, order, start, plan.limit);
    if (page !== null) return page;
  }
  const dense = c.sets.length + (c.bits === null ? 0 : 1) > 1 ? denseIntersection(index, c.sets, c.bits) : null;
  if (dense !== null) {
    if (start >= dense.total) return { total: dense.total, ids: EMPTY };
    const end = Math.min(start + plan.limit, dense.total);
    return { total: dense.total, ids: walkBits(order, dense.bits, start, end, order.length)! };
  }
  const found = matches(index, c);
  if (found === null) {
    return { total: index.size, ids: start >= index.size ? EMPTY : order.subarray(start, Math.min(start + plan.limit, index.size)) };
  }
  const total = found.length;
  if (start >= total) return { total, ids: EMPTY };
  const end = Math.min(start + plan.limit, total);
  // One filter alone: its posting is stored in every sort order, so the page is a slice; a search
  // alone, once its answer is kept, the same (made in this order on its first page).
  const ordered =
    postingInOrder(index, found, plan.sort) ??
    (c.sets.length === 1 && c.bits === null && c.rangeSet === null ? searchInOrder(found, plan.sort, sortRank(index, plan.sort), order) : null);
  if (ordered !== null) return { total, ids: ordered.subarray(start, end) };
  // Shallow pages of large sets: walk the sort order and test each position for membership: a bit
  // test when the set is a dense posting (its bitmap) or an intersection (a bitmap made for this
  // request), else a binary search in the ascending set.
  // The walk has a budget, since the matches may cluster late in the order (a nationality sorted by
  // name); past it, or for deep pages, the selection below is cheaper.
  const budget = Math.min(order.length, ((end * index.size) / total) * 4 + 64);
  const raw = c.sets.length === 1 && found === c.sets[0] && found !== c.rangeSet; // an ascending set of the index
  const bits = postingBits(index, found) ?? (raw || budget >= total ? undefined : bitmapOf(found, index.size));
  if (bits !== undefined ? budget < total : raw && budget * Math.log2(total + 1) < total) {
    const ids = bits !== undefined ? walkBits(order, bits, start, end, budget) : walkSorted(order, found, start, end, budget);
    if (ids !== null) return { total, ids };
  }
  return { total, ids: selectPage(found, sortRank(index, plan.sort), order, start, end) };
}

/**
 * The page of a search alone over text groups (a name many records share: src/data/search-index.ts
 * TextGroups) from the groups it found, their records neither put in order by id nor kept: each
 * group's records are kept in rank order once per sort (groupRuns), so one group's page is a slice of
 * them, and several groups' a merge of their runs by rank, a heap of one head per group: O(groups +
 * end · log groups) rank reads, where recordsOf and the selection read every match (813 for a 4-unit
 * term at 100k) twice or more. Null when the collection's trigrams index records, the query is under 3
 * units, or the merge would read more than the selection (deep pages of many groups).
 */
function groupsPage(index: CollectionIndex, plan: QueryPlan, order: Int32Array, start: number): PageResult | null {
  const kept = searchGroups(index, plan.search!);
  if (kept === null) return null;
  const { starts, ids: grouped } = index.search.groups;
  const found = kept.ids;
  const k = found.length;
  const total = kept.records;
  if (start >= total) return { total, ids: EMPTY };
  const end = Math.min(start + plan.limit, total);
  const rank = sortRank(index, plan.sort);
  if (k > 1) {
    // Asked again in this order: its records in it, kept (as searchInOrder keeps a search's).
    const sorted = groupsInOrder(kept, starts, grouped, plan.sort, rank, order);
    if (sorted !== null) return { total, ids: sorted.subarray(start, end) };
    if (k + end * Math.log2(k) > 2 * total) return null;
  }
  const runs = groupRuns(index, order);
  if (k === 1) {
    const a = starts[found[0]!]!;
    return { total, ids: runs.subarray(a + start, a + end) };
  }
  if (heapRank.length < k) {
    heapRank = new Int32Array(Math.max(k, heapRank.length * 2));
    heapAt = new Int32Array(heapRank.length);
    heapEnd = new Int32Array(heapRank.length);
  }
  const hr = heapRank;
  const ha = heapAt;
  const he = heapEnd;
  for (let i = 0; i < k; i++) {
    const a = starts[found[i]!]!;
    hr[i] = rank[runs[a]!]!;
    ha[i] = a;
    he[i] = starts[found[i]! + 1]!;
  }
  let n = k;
  for (let i = (n >>> 1) - 1; i >= 0; i--) siftDown(hr, ha, he, i, n);
  const ids = pageIds(end - start);
  for (let seen = 0; seen < end; seen++) {
    // The least rank of all heads: the next record in the order.
    const at = ha[0]!;
    if (seen >= start) ids[seen - start] = runs[at]!;
    if (at + 1 < he[0]!) {
      ha[0] = at + 1;
      hr[0] = rank[runs[at + 1]!]!;
    } else {
      n--;
      hr[0] = hr[n]!;
      ha[0] = ha[n]!;
      he[0] = he[n]!;
    }
    siftDown(hr, ha, he, 0, n);
  }
  return { total, ids };
}

/** Moves heap entry `i` down to its place among `n` (least rank on top); the three arrays move together. */
function siftDown(hr: Int32Array, ha: Int32Array, he: Int32Array, i: number, n: number): void {
  const r = hr[i]!;
  const a = ha[i]!;
  const e = he[i]!;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && hr[child + 1]! < hr[child]!) child++;
    if (hr[child]! >= r) break;
    hr[i] = hr[child]!;
    ha[i] = ha[child]!;
    he[i] = he[child]!;
    i = child;
  }
  hr[i] = r;
  ha[i] = a;
  he[i] = e;
}
/** groupsPage's heap: per group, the rank of its next record, where that is in the runs, and where its run ends. */
let heapRank = new Int32Array(64);
let heapAt = new Int32Array(64);
let heapEnd = new Int32Array(64);

/**
 * The records of each text group of `index` in the rank order of `order`, laid out as the groups' ids
 * (group g at `starts[g]` to `starts[g + 1]`): made on the first search alone in that order, O(records)
 * (a pass over the order), and kept with it: 4 bytes per record per sort order searched in. Keyed by
 * the order's array, then the groups' (a reload or an edit makes new ones), both weakly.
 */
function groupRuns(index: CollectionIndex, order: Int32Array): Int32Array {
  const groups = index.search.groups;
  let byGroups = runsByOrder.get(order);
  if (byGroups === undefined) runsByOrder.set(order, (byGroups = new WeakMap()));
  let runs = byGroups.get(groups.ids);
  if (runs === undefined) {
    const { starts, ids } = groups;
    const count = starts.length - 1;
    const groupOf = scratchInt32(ids.length);
    for (let g = 0; g < count; g++) for (let e = starts[g]!; e < starts[g + 1]!; e++) groupOf[ids[e]!] = g;
    const cursor = starts.slice(0, count);
    runs = new Int32Array(ids.length);
    for (let pos = 0; pos < order.length; pos++) {
      const id = order[pos]!;
      runs[cursor[groupOf[id]!]!++] = id;
    }
    byGroups.set(groups.ids, runs);
  }
  return runs;
}
const runsByOrder = new WeakMap<Int32Array, WeakMap<Int32Array, Int32Array>>();

/**
 * The page of a range filter alone (reviews' minRating/maxRating): its count is the width of its
 * slice of the range index, no set made. In an order sorted by the range's own values (rating_low,
 * rating_high) the matches are one run: found by a binary search, the page is a slice of the order.
 * In another order, a walk testing each position's value while that is short (as for a bitmap);
 * null past its budget (the selection over the slice then). Was: every id of the slice tested and
 * copied, a bitmap of them, then the walk: 420 µs for minRating=7.5 at 100k (45,931 matches).
 */
function rangePage(index: CollectionIndex, c: Constraints, order: Int32Array, start: number, limit: number): PageResult | null {
  const total = c.rangeSet!.length;
  if (start >= total) return { total, ids: EMPTY };
  const end = Math.min(start + limit, total);
  const byId = c.range!.byId;
  const { min, max } = c;
  const run = monotone(order, byId);
  if (run !== 0) {
    // The first position whose value is in the range from its side of the order (no value: past it).
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = byId[order[mid]!]!;
      if (v !== v || (run > 0 ? v >= min : v <= max)) hi = mid;
      else lo = mid + 1;
    }
    return { total, ids: order.subarray(lo + start, lo + end) };
  }
  const budget = Math.min(order.length, ((end * index.size) / total) * 4 + 64);
  const ids = pageIds(end - start);
  for (let pos = 0, seen = 0, k = 0; pos < budget; pos++) {
    const id = order[pos]!;
    const v = byId[id]!;
    if (v >= min && v <= max && seen++ >= start && ((ids[k++] = id), k === ids.length)) return { total, ids };
  }
  return null;
}

/**
 * 1 when the values along `order` never decrease (records without one, NaN, all at its end), -1 when
 * they never increase (the same), else 0: found once per order, by looking (no sort declares which
 * field it sorts by in a form the range filter shares).
 */
function monotone(order: Int32Array, byId: Float64Array): number {
  let known = monotoneOrders.get(order);
  if (known === undefined) {
    let up = true;
    let down = true;
    let none = false;
    let prev = NaN;
    for (let pos = 0; pos < order.length && (up || down); pos++) {
      const v = byId[order[pos]!]!;
      if (v !== v) none = true;
      else if (none) up = down = false; // a value after a record without one
      else if (prev === prev) {
        if (v < prev) up = false;
        if (v > prev) down = false;
      }
      if (v === v) prev = v;
    }
    known = up ? 1 : down ? -1 : 0;
    monotoneOrders.set(order, known);
  }
  return known;
}
const monotoneOrders = new WeakMap<Int32Array, number>();

/**
 * The page of a search alone whose answer is a bitmap (a 1- or 2-unit gram in many records): its
 * count is the total; the page is a walk of the sort order testing bits while that is short, else
 * the selection below over the bitmap's ids.
 */
function bitsPage(index: CollectionIndex, plan: QueryPlan, order: Int32Array, bits: Uint32Array, total: number, start: number): PageResult {
  if (start >= total) return { total, ids: EMPTY };
  const end = Math.min(start + plan.limit, total);
  const budget = Math.min(order.length, ((end * index.size) / total) * 4 + 64);
  const ids = budget < total ? walkBits(order, bits, start, end, budget) : null;
  return { total, ids: ids ?? selectPage(idsOfBits(bits, total), sortRank(index, plan.sort), order, start, end) };
}

/** The ids whose bit is set, ascending, in an array every such page reuses. */
let setIds = new Int32Array(1024);
function idsOfBits(bits: Uint32Array, total: number): Int32Array {
  if (setIds.length < total) setIds = new Int32Array(Math.max(total, setIds.length * 2));
  let k = 0;
  for (let w = 0; w < bits.length; w++) {
    for (let word = bits[w]!; word !== 0; word &= word - 1) setIds[k++] = (w << 5) + 31 - Math.clz32(word & -word);
  }
  return setIds.subarray(0, k);
}

/** Page [start, end) of the ids whose bit is set, in `order`, walking at most `budget` positions; null when over budget. */
function walkBits(order: Int32Array, bits: Uint32Array, start: number, end: number, budget: number): Int32Array | null {
  const ids = pageIds(end - start);
  for (let pos = 0, seen = 0, k = 0; pos < budget; pos++) {
    const id = order[pos]!;
    if (((bits[id >>> 5]! >>> (id & 31)) & 1) !== 0 && seen++ >= start && ((ids[k++] = id), k === ids.length)) return ids;
  }
  return null;
}

/** The same for an ascending set without a bitmap: a binary search per position. */
function walkSorted(order: Int32Array, set: Int32Array, start: number, end: number, budget: number): Int32Array | null {
  const ids = pageIds(end - start);
  for (let pos = 0, seen = 0, k = 0; pos < budget; pos++) {
    const id = order[pos]!;
    if (contains(set, id) && seen++ >= start && ((ids[k++] = id), k === ids.length)) return ids;
  }
  return null;
}

/** Set bits in a 32-bit word. */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Page [start, end) of `found` in sort order without sorting it: mark each match's rank in a bitmap
 * over the order, then read the marks in rank order, skipping whole words by their bit count.
 * O(total + size / 32), for any page depth.
 */
function selectPage(found: Int32Array, rank: Int32Array, order: Int32Array, start: number, end: number): Int32Array {
  if (end <= FEW_RANKS) return selectFew(found, rank, order, start, end);
  const words = (order.length + 31) >>> 5;
  if (rankMarks.length < words) rankMarks = new Uint32Array(words);
  const marks = rankMarks;
  for (let i = 0; i < found.length; i++) {
    const r = rank[found[i]!]!;
    marks[r >>> 5]! |= 1 << (r & 31);
  }
  const ids = pageIds(end - start);
  let seen = 0;
  let k = 0;
  for (let w = 0; w < words && k < ids.length; w++) {
    let word = marks[w]!;
    if (word === 0) continue;
    const count = popcount(word);
    if (seen + count <= start) {
      seen += count;
      continue;
    }
    while (word !== 0 && k < ids.length) {
      const bit = 31 - Math.clz32(word & -word);
      word &= word - 1;
      if (seen++ >= start) ids[k++] = order[(w << 5) + bit]!;
    }
  }
  for (let i = 0; i < found.length; i++) marks[rank[found[i]!]! >>> 5] = 0; // all zero again for the next page
  return ids;
}

/**
 * A shallow page (its end at most FEW_RANKS) of `found` in sort order: the `end` least ranks kept in a
 * max-heap as the matches are read (most are turned down by one compare with its top), then sorted.
 * O(matches · log end), one read of `found` and of their ranks; the bitmap above also reads them twice
 * (to mark, to clear) and scans its words up to the page. In one process at 100k, a first search's
 * page 1 in the default order: a full name's 86 matches 2.30 -> 1.57 µs, a 4-unit term's 829 6.3 -> 4.3.
 */
function selectFew(found: Int32Array, rank: Int32Array, order: Int32Array, start: number, end: number): Int32Array {
  const heap = fewRanks;
  let n = 0;
  for (let i = 0; i < found.length; i++) {
    const r = rank[found[i]!]!;
    if (n < end) {
      // Sift up from the end.
      let at = n++;
      while (at > 0) {
        const up = (at - 1) >>> 1;
        if (heap[up]! >= r) break;
        heap[at] = heap[up]!;
        at = up;
      }
      heap[at] = r;
    } else if (r < heap[0]!) {
      // Replace the greatest and sift down.
      let at = 0;
      for (;;) {
        let child = 2 * at + 1;
        if (child >= n) break;
        if (child + 1 < n && heap[child + 1]! > heap[child]!) child++;
        if (heap[child]! <= r) break;
        heap[at] = heap[child]!;
        at = child;
      }
      heap[at] = r;
    }
  }
  // n === end (end <= found.length): the least ranks, sorted in place by insertion (at most FEW_RANKS).
  for (let i = 1; i < n; i++) {
    const r = heap[i]!;
    let j = i;
    while (j > 0 && heap[j - 1]! > r) {
      heap[j] = heap[j - 1]!;
      j--;
    }
    heap[j] = r;
  }
  const ids = pageIds(end - start);
  for (let i = start; i < end; i++) ids[i - start] = order[heap[i]!]!;
  return ids;
}
/** Pages ending at most this deep are selected by selectFew (page 1 at the largest limit, pages 1-3 at the default). */
const FEW_RANKS = 64;
const fewRanks = new Int32Array(FEW_RANKS);

/**
 * The marks of selectPage, a bit per record: kept all zero between requests (each page clears the
 * words it set, O(matches)) instead of a new zeroed array per page, which at 100k is 12.5 KB of
 * memory outside the heap made per request (Node 20: about 1 µs for an ArrayBuffer over 4 KB, and
 * external memory that brings the next collection closer).
 */
let rankMarks = new Uint32Array(0);

/**
 * The ids of a page made by a walk or a selection, in an array every such page reuses (a page is at
 * most MAX_LIMIT ids; 20 ids as a new Int32Array are 80 bytes outside the heap, 0.3-0.5 µs on Node
 * 20): valid until the next executeQuery, as its caller uses it (the page is joined at once).
 */
function pageIds(n: number): Int32Array {
  if (pageIdBuffer.length < n) pageIdBuffer = new Int32Array(Math.max(n, pageIdBuffer.length * 2));
  return pageIdBuffer.subarray(0, n);
}
let pageIdBuffer = new Int32Array(64);
