// A sort order over number keys without a comparator call per pair (issue 19): Int32Array.sort with
// a JS comparator took about 1 s of a first start at 100k for the numeric sorts of every collection.
// The keys are sorted natively (Float64Array.sort), each record's key is ranked in them by a binary
// search, and records are put in order of rank by a counting sort that takes them in `_id` order,
// so ties stay in `_id` order: the order of the comparator in indexes.ts buildOrder, exactly.
// The `_id` ranks those ties go by the same way (textOrder): by a number made of each `_id`'s first
// units, then each run of one number by the comparator, a few strings compared instead of n log n
// (the comparator sort of 270k `_id`s took 0.3-0.5 s of the build thread at 100k).
import { Scratch } from './scratch.ts';
import { unitTextsOf, type UnitTexts } from './unit-texts.ts';

/**
 * Record ids ordered by `keys` ascending (`sign` 1) or descending (-1), a key of NaN last in either
 * direction, ties (-0 and 0 alike) by `idRank` (each record's place in `_id` order, a permutation).
 * Its working arrays come from `scratch`.
 */
export function numberOrder(keys: Float64Array, sign: 1 | -1, idRank: Int32Array, scratch = new Scratch()): Int32Array {
  const [asc, desc] = numberOrders(keys, idRank, scratch, sign === 1, sign === -1);
  return (asc ?? desc)!;
}

/**
 * numberOrder of `keys` in both directions (each when asked: `asc`, `desc`), from one sort of the
 * keys: two sorts with one key (latest and oldest) sorted it twice.
 */
export function numberOrders(keys: Float64Array, idRank: Int32Array, scratch = new Scratch(), asc = true, desc = true): [Int32Array | null, Int32Array | null] {
  const n = keys.length;
  // NaN last. -0 sorts before 0 here, but a binary search compares them equal, as the comparator does.
  const sorted = scratch.float64(n);
  sorted.set(keys);
  sorted.sort();
  let m = n;
  while (m > 0 && sorted[m - 1] !== sorted[m - 1]) m--;
  // rank: ascending, the first place of the key among the sorted keys (one binary search); descending,
  // m - 1 minus that place (ranks left unused do no harm to the counting sort). Equal keys share a
  // rank; NaN's rank is m, after every key.
  const rankUp = asc ? scratch.int32(n) : null;
  const rankDown = desc ? scratch.int32(n) : null;
  const countsUp = asc ? scratch.int32(m + 2) : null;
  const countsDown = desc ? scratch.int32(m + 2) : null;
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    let lo = m;
    if (k === k) {
      lo = 0;
      let hi = m;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (sorted[mid]! < k) lo = mid + 1;
        else hi = mid;
      }
    }
    if (rankUp !== null) {
      rankUp[i] = lo;
      countsUp![lo + 1]!++;
    }
    if (rankDown !== null) {
      const r = lo === m ? m : m - 1 - lo;
      rankDown[i] = r;
      countsDown![r + 1]!++;
    }
  }
  const byId = scratch.int32(n);
  for (let i = 0; i < n; i++) byId[idRank[i]!] = i;
  const place = (rank: Int32Array | null, counts: Int32Array | null): Int32Array | null => {
    if (rank === null || counts === null) return null;
    for (let r = 0; r <= m; r++) counts[r + 1]! += counts[r]!;
    const order = new Int32Array(n);
    for (let p = 0; p < n; p++) {
      const i = byId[p]!;
      order[counts[rank[i]!]!++] = i;
    }
    return order;
  };
  return [place(rankUp, countsUp), place(rankDown, countsDown)];
}

/** Units of a text's start that textOrder's number holds, 7 bits each (7 * 7 = 49 bits: exact in a double). */
const PREFIX_UNITS = 7;

/**
 * A number of PREFIX_UNITS units of `s` from `from`, most significant first: a unit below 126 as
 * itself + 1, one of 126 or more as 127 and every place after it as 0 (units that far up are not
 * told apart here, so what follows them must not count), 0 past the end (below every unit: a text
 * comes before the longer ones it starts). Of texts whose units before `from` are the same, it never
 * orders two the other way round from `<`; texts that share it are told apart otherwise.
 */
export function prefixKey(s: string, from = 0): number {
  const end = from + PREFIX_UNITS;
  let k = 0;
  let i = from;
  for (; i < end && i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 126) {
      k = k * 128 + 127;
      i++;
      break;
    }
    k = k * 128 + c + 1;
  }
  for (; i < end; i++) k *= 128;
  return k;
}

/** Whether `s`'s first PREFIX_UNITS units (or all, when fewer) are below 126: prefixKey(s) holds them as they are. */
function plainPrefix(s: string): boolean {
  for (let i = 0; i < PREFIX_UNITS && i < s.length; i++) if (s.charCodeAt(i) >= 126) return false;
  return true;
}

/**
 * Record ids ordered by text keys `keys` ascending (`sign` 1, UTF-16 unit order as `<` compares) or
 * descending (-1), a null key last in either direction, ties by `idRank`: indexes.ts buildOrder's
 * comparator order, exactly. By prefixKey through numberOrder (no comparator call), then each run of
 * one prefix number by the comparator, which compares the next units' prefixKey first (two keys of
 * one plain prefix number start with the same units) and the texts only when those are the same.
 */
export function textOrder(keys: readonly (string | null)[], sign: 1 | -1, idRank: Int32Array, scratch = new Scratch()): Int32Array {
  const n = keys.length;
  const prefix = scratch.float64(n);
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    prefix[i] = k === null ? NaN : prefixKey(k);
  }
  const order = numberOrder(prefix, sign, idRank, scratch);
  const next = scratch.float64(n);
  const byText = (a: number, b: number): number => {
    const x = next[a]!;
    const y = next[b]!;
    if (x !== y) return x < y ? -sign : sign;
    const ka = keys[a]!;
    const kb = keys[b]!;
    return ka === kb ? idRank[a]! - idRank[b]! : ka < kb ? -sign : sign;
  };
  // (Null keys, NaN, are last and already by idRank.)
  for (let a = 0; a < n; ) {
    const p = prefix[order[a]!]!;
    let b = a + 1;
    if (p === p) while (b < n && prefix[order[b]!] === p) b++;
    if (b - a > 1) {
      for (let j = a; j < b; j++) {
        const k = keys[order[j]!]!;
        next[order[j]!] = plainPrefix(k) ? prefixKey(k, PREFIX_UNITS) : 0;
      }
      order.subarray(a, b).sort(byText);
    }
    a = b;
  }
  return order;
}

/** A prefixKey of text `from`..`end` of `units` from its unit `at` (prefixKey's number, over units). */
function unitsPrefixKey(units: Uint8Array | Uint16Array, from: number, end: number, at: number): number {
  const last = from + at + PREFIX_UNITS;
  let k = 0;
  let i = from + at;
  for (; i < last && i < end; i++) {
    const c = units[i]!;
    if (c >= 126) {
      k = k * 128 + 127;
      i++;
      break;
    }
    k = k * 128 + c + 1;
  }
  for (; i < last; i++) k *= 128;
  return k;
}

/**
 * Each record's place in the order of its `_id` (unique: validation refuses a duplicate): `ids` as
 * strings, or as their units with offsets (unit-texts.ts: the builder keeps them so, not a string
 * each). UTF-16 unit order, as `<` compares strings; as textOrder, by prefix numbers first.
 */
export function idRanks(ids: readonly string[] | UnitTexts, scratch = new Scratch()): Int32Array {
  const { units, starts } = Array.isArray(ids) ? unitTextsOf(ids as readonly string[], scratch) : (ids as UnitTexts);
  const n = starts.length - 1;
  const index = scratch.int32(n);
  for (let i = 0; i < n; i++) index[i] = i;
  const prefix = scratch.float64(n);
  for (let i = 0; i < n; i++) prefix[i] = unitsPrefixKey(units, starts[i]!, starts[i + 1]!, 0);
  const order = numberOrder(prefix, 1, index, scratch);
  const next = scratch.float64(n);
  // (Unique ids: never equal, so no tie to break.)
  const byUnits = (a: number, b: number): number => {
    const x = next[a]!;
    const y = next[b]!;
    if (x !== y) return x < y ? -1 : 1;
    let i = starts[a]!;
    let j = starts[b]!;
    const ea = starts[a + 1]!;
    const eb = starts[b + 1]!;
    for (; i < ea && j < eb; i++, j++) if (units[i] !== units[j]) return units[i]! < units[j]! ? -1 : 1;
    return ea - i - (eb - j) || a - b;
  };
  for (let a = 0; a < n; ) {
    const p = prefix[order[a]!]!;
    let b = a + 1;
    while (b < n && prefix[order[b]!] === p) b++;
    if (b - a > 1) {
      for (let j = a; j < b; j++) {
        const r = order[j]!;
        const from = starts[r]!;
        const end = starts[r + 1]!;
        let plain = true;
        for (let i = from; i < from + PREFIX_UNITS && i < end; i++) if (units[i]! >= 126) plain = false;
        next[r] = plain ? unitsPrefixKey(units, from, end, PREFIX_UNITS) : 0;
      }
      order.subarray(a, b).sort(byUnits);
    }
    a = b;
  }
  const rank = scratch.int32(n);
  for (let p = 0; p < n; p++) rank[order[p]!] = p;
  return rank;
}
