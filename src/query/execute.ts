// Runs a QueryPlan against a collection's indexes: smallest candidate set first, then the page in
// the precomputed sort order. No record is looked at unless a constraint needs it.
import type { CollectionIndex, RangeIndex } from '../data/indexes.ts';
import type { QueryPlan } from './plan.ts';

export interface PageResult {
  /** Matching records in all. */
  readonly total: number;
  /** Record ids of the requested page, in sort order. */
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

/** Ids matching every constraint of the plan, in no particular order; null when the plan has none. */
export function matchAll(index: CollectionIndex, plan: QueryPlan): ArrayLike<number> | null {
  const sets: Int32Array[] = [];
  for (const f of plan.filters) sets.push(index.postings.get(f.param)?.get(f.key) ?? EMPTY);
  let range: RangeIndex | null = null;
  let min = 0;
  let max = 0;
  if (plan.range && index.range) {
    range = index.range;
    min = plan.range.min;
    max = plan.range.max;
    sets.push(range.ids.subarray(bound(range.values, min, false), bound(range.values, max, true)));
  }
  if (sets.length === 0 && plan.search === null) return null;
  let base: Int32Array | null = null;
  for (const s of sets) if (base === null || s.length < base.length) base = s;
  const search = plan.search;
  const text = index.searchText;
  const out: number[] = [];
  const n = base === null ? index.size : base.length;
  outer: for (let i = 0; i < n; i++) {
    const id = base === null ? i : base[i]!;
    for (const s of sets) {
      if (s === base) continue;
      if (range !== null && s.buffer === range.ids.buffer) {
        const v = range.byId[id]!;
        if (!(v >= min && v <= max)) continue outer;
      } else if (!contains(s, id)) continue outer;
    }
    if (search !== null && !text[id]!.includes(search)) continue;
    out.push(id);
  }
  return out;
}

/** The requested page of ids in the plan's sort order, and the total. */
export function executeQuery(index: CollectionIndex, plan: QueryPlan): PageResult {
  const order = index.orders.get(plan.sort)!;
  const start = (plan.page - 1) * plan.limit;
  const matches = matchAll(index, plan);
  if (matches === null) {
    return { total: index.size, ids: start >= index.size ? EMPTY : order.subarray(start, Math.min(start + plan.limit, index.size)) };
  }
  const total = matches.length;
  if (start >= total) return { total, ids: EMPTY };
  const end = Math.min(start + plan.limit, total);
  // Few matches: sort their ranks. Many: walk the precomputed order and keep the marked ones.
  if (total * Math.log2(total + 1) < index.size) {
    const rank = index.ranks.get(plan.sort)!;
    const ranks = Int32Array.from(matches, (id) => rank[id]!).sort();
    return { total, ids: Int32Array.from(ranks.subarray(start, end), (r) => order[r]!) };
  }
  const mark = index.scratch;
  for (let i = 0; i < total; i++) mark[matches[i]!] = 1;
  const ids = new Int32Array(end - start);
  let seen = 0;
  for (let pos = 0, k = 0; pos < order.length && k < ids.length; pos++) {
    const id = order[pos]!;
    if (mark[id] === 1 && seen++ >= start) ids[k++] = id;
  }
  for (let i = 0; i < total; i++) mark[matches[i]!] = 0;
  return { total, ids };
}
