// Substring search without scanning every text (issues 5, 20): postings of every 1-, 2- and 3-unit gram
// of the folded search texts, built once at load in compressed (CSR) form: per gram size, the distinct
// gram keys in ascending order (a binary search finds a gram's slot: no Map, so the boot cache maps the
// arrays back as they are), an offset per slot, and one Int32Array of ids. A query of 1, 2 or 3 units
// is one posting. Each trigram entry also keeps where the gram stands in that record's text, so a
// longer query is answered exactly from its trigram postings: a record matches when every trigram of
// the query is in it at the position its offset in the query says. No text is read, but for the rare
// entry whose gram occurs twice in its text (or starts past POSITIONS).
// Grams are UTF-16 code units, exactly what String.prototype.includes compares.

export interface GramPostings {
  /** Distinct gram keys, ascending; a key's index is its slot. */
  readonly keys: Float64Array;
  /** Slot -> first position in `ids`; one extra entry at the end. */
  readonly offsets: Int32Array;
  /** Ascending record ids per slot, slots one after the other. */
  readonly ids: Int32Array;
  /**
   * Trigrams only (empty for 1- and 2-grams): per entry of `ids`, the unit position of the gram in
   * that record's text, or AMBIGUOUS when the gram occurs more than once there or starts at AMBIGUOUS
   * or later.
   */
  readonly at: Uint8Array;
}

export interface SearchIndex {
  readonly unigrams: GramPostings;
  readonly bigrams: GramPostings;
  readonly trigrams: GramPostings;
}

/** A trigram position that does not say where the gram is: the text is read to confirm. */
export const AMBIGUOUS = 255;
const EMPTY = new Int32Array(0);
const NO_POSITIONS = new Uint8Array(0);
const U16 = 65536;

function gramKey(text: string, at: number, size: 1 | 2 | 3): number {
  if (size === 1) return text.charCodeAt(at);
  const k = text.charCodeAt(at) * U16 + text.charCodeAt(at + 1);
  return size === 2 ? k : k * U16 + text.charCodeAt(at + 2); // < 2^48: exact in a double
}

/**
 * Gram key -> first-seen slot while building: open addressing over a Float64Array of keys (a key is
 * up to 48 bits: a Map would box each one as a heap number, the largest cost of the build).
 */
class GramSlots {
  private keys = new Float64Array(1 << 12).fill(-1);
  private slots = new Int32Array(1 << 12);
  private mask = (1 << 12) - 1;
  /** Key of each slot, by slot. */
  keyOf = new Float64Array(1024);
  size = 0;

  private static hash(key: number): number {
    const h = Math.imul((key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x9e3779b1), 0x85ebca6b);
    return h ^ (h >>> 15);
  }

  /** The slot of `key`, made the next one when new. */
  slot(key: number): number {
    let h = GramSlots.hash(key) & this.mask;
    for (let k = this.keys[h]!; k !== -1; k = this.keys[h]!) {
      if (k === key) return this.slots[h]!;
      h = (h + 1) & this.mask;
    }
    const slot = this.size++;
    this.keys[h] = key;
    this.slots[h] = slot;
    if (slot === this.keyOf.length) {
      const k = new Float64Array(slot * 2);
      k.set(this.keyOf);
      this.keyOf = k;
    }
    this.keyOf[slot] = key;
    if (this.size * 2 > this.keys.length) this.grow();
    return slot;
  }

  private grow(): void {
    const keys = this.keys;
    const slots = this.slots;
    this.keys = new Float64Array(keys.length * 2).fill(-1);
    this.slots = new Int32Array(keys.length * 2);
    this.mask = keys.length * 2 - 1;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key === -1) continue;
      let h = GramSlots.hash(key) & this.mask;
      while (this.keys[h] !== -1) h = (h + 1) & this.mask;
      this.keys[h] = key;
      this.slots[h] = slots[i]!;
    }
  }
}

/**
 * Two passes: slot of every gram occurrence (and counts of distinct records per slot), then fill,
 * with the slots renumbered in key order in between. The hash table lives only while building.
 */
function buildGrams(texts: readonly string[], size: 1 | 2 | 3): GramPostings {
  const found = new GramSlots();
  let total = 0;
  for (const t of texts) if (t.length >= size) total += t.length - size + 1;
  const seq = new Int32Array(total); // first-seen slot of each occurrence, record after record
  let counts = new Int32Array(1024);
  let last = new Int32Array(1024);
  let pos = 0;
  for (let id = 0; id < texts.length; id++) {
    const t = texts[id]!;
    for (let i = 0; i + size <= t.length; i++) {
      const n = found.size;
      const slot = found.slot(gramKey(t, i, size));
      if (slot === n) {
        if (slot === counts.length) {
          const c = new Int32Array(slot * 2);
          c.set(counts);
          counts = c;
          const l = new Int32Array(slot * 2);
          l.set(last);
          last = l;
        }
        last[slot] = -1;
      }
      seq[pos++] = slot;
      if (last[slot] !== id) {
        last[slot] = id;
        counts[slot]!++;
      }
    }
  }
  const n = found.size;
  const keyOf = found.keyOf;
  // Slots in key order: first-seen slot -> sorted slot.
  const byKey = new Int32Array(n);
  for (let s = 0; s < n; s++) byKey[s] = s;
  byKey.sort((a, b) => keyOf[a]! - keyOf[b]!);
  const sorted = new Int32Array(n);
  const keys = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    sorted[byKey[r]!] = r;
    keys[r] = keyOf[byKey[r]!]!;
  }
  const offsets = new Int32Array(n + 1);
  for (let r = 0; r < n; r++) offsets[r + 1] = offsets[r]! + counts[byKey[r]!]!;
  const ids = new Int32Array(offsets[n]!);
  const at = size === 3 ? new Uint8Array(ids.length) : NO_POSITIONS;
  const cursor = offsets.slice(0, n);
  last.fill(-1, 0, n);
  pos = 0;
  for (let id = 0; id < texts.length; id++) {
    const len = texts[id]!.length;
    for (let i = 0; i + size <= len; i++) {
      const slot = sorted[seq[pos++]!]!;
      if (last[slot] !== id) {
        last[slot] = id;
        if (size === 3) at[cursor[slot]!] = i < AMBIGUOUS ? i : AMBIGUOUS;
        ids[cursor[slot]!++] = id;
      } else if (size === 3) at[cursor[slot]! - 1] = AMBIGUOUS; // twice in this text: where is not one place
    }
  }
  return { keys, offsets, ids, at };
}

export function buildSearchIndex(texts: readonly string[]): SearchIndex {
  return { unigrams: buildGrams(texts, 1), bigrams: buildGrams(texts, 2), trigrams: buildGrams(texts, 3) };
}

/** The slot of `key`, or -1. */
function slotOf(g: GramPostings, key: number): number {
  const keys = g.keys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k === key) return mid;
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

// Per query trigram: its slot's range in `ids` (the start moves on as a cursor) and its offset in the
// query. Reused by every query: a search runs synchronously to the end. The API takes at most
// MAX_SEARCH_LENGTH (200) units, 67 trigrams; a longer query has its matches confirmed by their text.
const MAX_GRAMS = 128;
const from = new Int32Array(MAX_GRAMS);
const to = new Int32Array(MAX_GRAMS);
const offsetIn = new Int32Array(MAX_GRAMS);

/** Whether record `id`'s folded text includes `query`: asked only where trigram positions cannot tell. */
export type Confirm<C> = (context: C, id: number, query: string) => boolean;

/**
 * The ids of the records whose folded text contains the folded, non-empty `query`, ascending: exact.
 * `confirm(context, ...)` reads a text only for entries whose trigram position is AMBIGUOUS.
 */
export function searchMatches<C>(ix: SearchIndex, query: string, confirm: Confirm<C>, context: C): Int32Array {
  const len = query.length;
  if (len < 3) {
    const g = len === 1 ? ix.unigrams : ix.bigrams;
    const slot = slotOf(g, gramKey(query, 0, len as 1 | 2));
    return slot === -1 ? EMPTY : g.ids.subarray(g.offsets[slot]!, g.offsets[slot + 1]!);
  }
  const g = ix.trigrams;
  // Trigrams every 3 units and the last one cover every unit of the query once or twice: when they all
  // stand where their offsets say, the query is there. Shortest posting first (insertion sort).
  const long = len > MAX_GRAMS * 3;
  const count = long ? MAX_GRAMS : Math.ceil(len / 3);
  for (let n = 0; n < count; n++) {
    const i = n === count - 1 ? len - 3 : n * 3;
    const slot = slotOf(g, gramKey(query, i, 3));
    if (slot === -1) return EMPTY; // a gram no text has: nothing matches
    const a = g.offsets[slot]!;
    const b = g.offsets[slot + 1]!;
    let j = n;
    while (j > 0 && to[j - 1]! - from[j - 1]! > b - a) {
      from[j] = from[j - 1]!;
      to[j] = to[j - 1]!;
      offsetIn[j] = offsetIn[j - 1]!;
      j--;
    }
    from[j] = a;
    to[j] = b;
    offsetIn[j] = i;
  }
  if (count === 1) return g.ids.subarray(from[0]!, to[0]!); // 3 units: exact
  const ids = g.ids;
  const at = g.at;
  const out = new Int32Array(to[0]! - from[0]!);
  let k = 0;
  const lead = offsetIn[0]!;
  outer: for (let e = from[0]!; e < to[0]!; e++) {
    const id = ids[e]!;
    const first = at[e]!;
    // A trigram that occurs once in the text fixes where the query would start there.
    let unsure = long || first === AMBIGUOUS;
    const start = first - lead;
    for (let j = 1; j < count; j++) {
      // The next entry >= id in this posting: gallop from the cursor, then binary search.
      let lo = from[j]!;
      const end = to[j]!;
      if (lo < end && ids[lo]! < id) {
        let step = 1;
        while (lo + step < end && ids[lo + step]! < id) {
          lo += step;
          step <<= 1;
        }
        let hi = Math.min(lo + step, end);
        lo++;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (ids[mid]! < id) lo = mid + 1;
          else hi = mid;
        }
      }
      from[j] = lo;
      if (lo === end) break outer; // this gram is in no later record
      if (ids[lo] !== id) continue outer;
      const p = at[lo]!;
      if (p === AMBIGUOUS) unsure = true;
      else if (!unsure && p !== start + offsetIn[j]!) continue outer;
    }
    if (!unsure || confirm(context, id, query)) out[k++] = id;
  }
  return out.subarray(0, k);
}
