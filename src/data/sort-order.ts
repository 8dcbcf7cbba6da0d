// A sort order over number keys without a comparator call per pair (issue 19): Int32Array.sort with
// a JS comparator took about 1 s of a first start at 100k for the numeric sorts of every collection.
// The keys are sorted natively (Float64Array.sort), each record's key is ranked in them by a binary
// search, and records are put in order of rank by a counting sort that takes them in `_id` order,
// so ties stay in `_id` order: the order of the comparator in indexes.ts buildOrder, exactly.
import { Scratch } from './scratch.ts';

/**
 * Record ids ordered by `keys` ascending (`sign` 1) or descending (-1), a key of NaN last in either
 * direction, ties (-0 and 0 alike) by `idRank` (each record's place in `_id` order, a permutation).
 * Its working arrays come from `scratch`.
 */
export function numberOrder(keys: Float64Array, sign: 1 | -1, idRank: Int32Array, scratch = new Scratch()): Int32Array {
  const n = keys.length;
  // NaN last. -0 sorts before 0 here, but a binary search compares them equal, as the comparator does.
  const sorted = scratch.float64(n);
  sorted.set(keys);
  sorted.sort();
  let m = n;
  while (m > 0 && sorted[m - 1] !== sorted[m - 1]) m--;
  // rank: ascending, the first place of the key among the sorted keys; descending, the number of
  // keys greater than it. Equal keys share a rank; NaN's rank is m, after every key.
  const rank = scratch.int32(n);
  const counts = scratch.int32(m + 2);
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    let r = m;
    if (k === k) {
      let lo = 0;
      let hi = m;
      if (sign === 1) {
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (sorted[mid]! < k) lo = mid + 1;
          else hi = mid;
        }
        r = lo;
      } else {
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (sorted[mid]! <= k) lo = mid + 1;
          else hi = mid;
        }
        r = m - lo;
      }
    }
    rank[i] = r;
    counts[r + 1]!++;
  }
  for (let r = 0; r <= m; r++) counts[r + 1]! += counts[r]!;
  const byId = scratch.int32(n);
  for (let i = 0; i < n; i++) byId[idRank[i]!] = i;
  const order = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    const i = byId[p]!;
    order[counts[rank[i]!]!++] = i;
  }
  return order;
}
