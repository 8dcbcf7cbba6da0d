// Substring search without scanning every text (issue 5): postings of every 1-, 2- and 3-unit gram of
// the folded search texts, built once at load in compressed (CSR) form: one Int32Array of ids per gram
// size, and an offset per distinct gram. A query of 1, 2 or 3 units is one posting; longer queries
// intersect the two smallest trigram postings and confirm with `includes`.
// Grams are UTF-16 code units, exactly what String.prototype.includes compares.

export interface GramPostings {
  /** Gram key -> slot. */
  readonly slots: ReadonlyMap<number, number>;
  /** Slot -> first position in `ids`; one extra entry at the end. */
  readonly offsets: Int32Array;
  /** Ascending record ids per slot, slots one after the other. */
  readonly ids: Int32Array;
}

export interface SearchIndex {
  readonly unigrams: GramPostings;
  readonly bigrams: GramPostings;
  readonly trigrams: GramPostings;
}

/** Candidates for a folded query: `exact` when every candidate is known to match. */
export interface Candidates {
  readonly ids: Int32Array;
  readonly exact: boolean;
}

const EMPTY = new Int32Array(0);
const NONE: Candidates = { ids: EMPTY, exact: true };
const U16 = 65536;

function gramKey(text: string, at: number, size: 1 | 2 | 3): number {
  if (size === 1) return text.charCodeAt(at);
  const k = text.charCodeAt(at) * U16 + text.charCodeAt(at + 1);
  return size === 2 ? k : k * U16 + text.charCodeAt(at + 2); // < 2^48: exact in a double
}

/** Two passes: slot of every gram occurrence (and counts of distinct records per slot), then fill. */
function buildGrams(texts: readonly string[], size: 1 | 2 | 3): GramPostings {
  const slots = new Map<number, number>();
  let total = 0;
  for (const t of texts) if (t.length >= size) total += t.length - size + 1;
  const seq = new Int32Array(total); // slot of each occurrence, record after record
  let counts = new Int32Array(1024);
  let last = new Int32Array(1024);
  let n = 0;
  let pos = 0;
  for (let id = 0; id < texts.length; id++) {
    const t = texts[id]!;
    for (let i = 0; i + size <= t.length; i++) {
      const key = gramKey(t, i, size);
      let slot = slots.get(key);
      if (slot === undefined) {
        slot = n++;
        slots.set(key, slot);
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
  const offsets = new Int32Array(n + 1);
  for (let s = 0; s < n; s++) offsets[s + 1] = offsets[s]! + counts[s]!;
  const ids = new Int32Array(offsets[n]!);
  const cursor = offsets.slice(0, n);
  last.fill(-1, 0, n);
  pos = 0;
  for (let id = 0; id < texts.length; id++) {
    const len = texts[id]!.length;
    for (let i = 0; i + size <= len; i++) {
      const slot = seq[pos++]!;
      if (last[slot] !== id) {
        last[slot] = id;
        ids[cursor[slot]!++] = id;
      }
    }
  }
  return { slots, offsets, ids };
}

export function buildSearchIndex(texts: readonly string[]): SearchIndex {
  return { unigrams: buildGrams(texts, 1), bigrams: buildGrams(texts, 2), trigrams: buildGrams(texts, 3) };
}

function posting(g: GramPostings, key: number): Int32Array | null {
  const slot = g.slots.get(key);
  return slot === undefined ? null : g.ids.subarray(g.offsets[slot]!, g.offsets[slot + 1]!);
}

/** Ids in both ascending lists. */
function intersect(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(Math.min(a.length, b.length));
  let i = 0, j = 0, k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!, y = b[j]!;
    if (x === y) {
      out[k++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out.subarray(0, k);
}

/** Candidate ids for a folded, non-empty query. */
export function searchCandidates(ix: SearchIndex, query: string): Candidates {
  const len = query.length;
  if (len < 3) {
    const p = posting(len === 1 ? ix.unigrams : ix.bigrams, gramKey(query, 0, len as 1 | 2));
    return p === null ? NONE : { ids: p, exact: true };
  }
  let first: Int32Array | null = null;
  let second: Int32Array | null = null;
  for (let i = 0; i + 3 <= len; i++) {
    const p = posting(ix.trigrams, gramKey(query, i, 3));
    if (p === null) return NONE; // a gram no text has: nothing matches
    if (first === null || p.length < first.length) {
      second = first;
      first = p;
    } else if (second === null || p.length < second.length) second = p;
  }
  if (len === 3) return { ids: first!, exact: true };
  return { ids: second === null || second === first ? first! : intersect(first!, second), exact: false };
}
