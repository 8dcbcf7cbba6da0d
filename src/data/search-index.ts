// Substring search without scanning every text (issues 5, 20): postings of every 1-, 2- and 3-unit gram
// of the folded search texts, built once at load in compressed (CSR) form: per gram size, the distinct
// gram keys in ascending order (a binary search finds a gram's slot: no Map, so the boot cache maps the
// arrays back as they are), an offset per slot, and the ids. A query of 1, 2 or 3 units
// is one posting. Each trigram entry also keeps where the gram stands in that record's text, so a
// longer query is answered exactly from its trigram postings: a record matches when every trigram of
// the query is in it at the position its offset in the query says. No text is read, but for the rare
// entry whose gram occurs twice in its text (or starts past POSITIONS).
// A 1- or 2-unit gram in at least 1/32 of the records (most of them: there are a few dozen letters)
// is kept as a bitmap, a bit per record, instead of its ids: n / 8 bytes instead of 4 per record that
// has it (issue 19). Such a query's answer is that bitmap and its count, which src/query/execute.ts
// pages through without a list of ids.
// Ids are kept as their low 16 bits (a Uint16Array: 2 bytes instead of 4) with, per slot, where each
// block of 65,536 ids starts among its entries: a posting ascends, so the high bits of an entry are
// the block it lies in (issue 19: 53 MB less at 100k).
// Grams are UTF-16 code units, exactly what String.prototype.includes compares.
// Trigrams index each distinct text once (issue 20): records with the same folded text (a name or a
// movie title many records share) are one group, and a trigram posting lists groups, not records. A
// search of 3 units or more intersects the groups' postings, then gives the records of the groups
// found. Where no two records share a text (or groups would not make the index smaller), group g is
// record g and nothing more is kept.

import { Scratch, scratchInt32, scratchUint16 } from './scratch.ts';
import type { UnitTexts } from './unit-texts.ts';

export interface GramPostings {
  /** Distinct gram keys, ascending; a key's index is its slot. */
  readonly keys: Float64Array;
  /** Slot -> its first entry; one extra entry at the end. */
  readonly offsets: Int32Array;
  /** Per entry: the low 16 bits of its record id; the entries of a slot ascend by id, slots one after the other. */
  readonly lows: Uint16Array;
  /**
   * Slot s, id block h (ids h * 65536 and up): `blocks[s * B + h]` is the first entry of s whose id is
   * in block h or a later one, B = blocksFor(records) per slot. An entry's id is (h << 16) | its low bits.
   */
  readonly blocks: Int32Array;
  /**
   * Trigrams only (empty for 1- and 2-grams): per entry, the unit position of the gram in
   * that record's text, or AMBIGUOUS when the gram occurs more than once there or starts at AMBIGUOUS
   * or later.
   */
  readonly at: Uint8Array;
  /** Slot -> the number of its bitmap in `bits` (its ids range is then empty), or -1. */
  readonly bitsAt: Int32Array;
  /** The bitmaps of the dense slots, (records + 31) >>> 5 words each, back to back (none for trigrams). */
  readonly bits: Uint32Array;
  /** Records in each bitmap. */
  readonly bitCounts: Int32Array;
}

/** Records by their folded text: the units trigrams index (see above). */
export interface TextGroups {
  /** Group g's records are `ids[starts[g], starts[g + 1])`; one extra entry at the end. Empty: group g is record g. */
  readonly starts: Int32Array;
  /** Each group's records ascending, groups numbered in the order of their first records. */
  readonly ids: Int32Array;
}

export interface SearchIndex {
  /** Records indexed (the bits of each bitmap). */
  readonly size: number;
  readonly unigrams: GramPostings;
  readonly bigrams: GramPostings;
  /** Over text groups (`groups`), not records. */
  readonly trigrams: GramPostings;
  readonly groups: TextGroups;
}

/** Groups the trigrams of `ix` index: its records when they are not grouped. */
export function groupCount(ix: Pick<SearchIndex, 'size' | 'groups'>): number {
  return ix.groups.starts.length === 0 ? ix.size : ix.groups.starts.length - 1;
}

/** A trigram position that does not say where the gram is: the text is read to confirm. */
export const AMBIGUOUS = 255;
const EMPTY = new Int32Array(0);
const NO_POSITIONS = new Uint8Array(0);

/** Blocks of 65,536 ids that `records` ids fill (at least one). */
export function blocksFor(records: number): number {
  return Math.max(1, Math.ceil(records / 65536));
}
const U16 = 65536;

export function gramKey(text: string, at: number, size: 1 | 2 | 3): number {
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

/** Units from which buildGrams counts ASCII trigrams in a direct table. */
const DIRECT_MIN = 1 << 16;

/**
 * The texts' UTF-16 units back to back (text i is `units[starts[i], starts[i + 1])`): what buildGrams
 * walks, twice per gram size, instead of each string's charCodeAt.
 */
export interface TextUnits {
  readonly units: Uint16Array;
  readonly starts: Int32Array;
}

/**
 * `texts` (strings, or units with offsets: unit-texts.ts) as TextUnits; `scratch`: where `starts`
 * comes from, when the units are only walked while building (buildSearchIndex). Units that are
 * TextUnits already are taken as they are.
 */
export function textUnits(texts: readonly string[] | UnitTexts, scratch: Scratch | null = null): TextUnits {
  if (!Array.isArray(texts)) {
    const t = texts as UnitTexts;
    if (t.units instanceof Uint16Array) return { units: t.units, starts: t.starts };
    const units = scratchUint16(t.units.length);
    units.set(t.units);
    return { units, starts: t.starts };
  }
  const list = texts as readonly string[];
  const starts = scratch === null ? new Int32Array(list.length + 1) : scratch.int32(list.length + 1);
  for (let id = 0; id < list.length; id++) starts[id + 1] = starts[id]! + list[id]!.length;
  const units = scratchUint16(starts[list.length]!);
  let p = 0;
  for (let id = 0; id < list.length; id++) {
    const t = list[id]!;
    for (let i = 0; i < t.length; i++) units[p++] = t.charCodeAt(i);
  }
  return { units, starts };
}

/** The texts `ids` of `all` (ascending record numbers), back to back: the distinct texts trigrams index. */
function textsOf(all: TextUnits, ids: Int32Array, scratch: Scratch): TextUnits {
  const starts = scratch.int32(ids.length + 1);
  for (let g = 0; g < ids.length; g++) starts[g + 1] = starts[g]! + all.starts[ids[g]! + 1]! - all.starts[ids[g]!]!;
  const units = scratchUint16(starts[ids.length]!);
  for (let g = 0; g < ids.length; g++) units.set(all.units.subarray(all.starts[ids[g]!]!, all.starts[ids[g]! + 1]!), starts[g]!);
  return { units, starts };
}

/** A gram of `size` units at `p` of `units` as gramKey makes it. */
function unitsKey(units: Uint16Array, p: number, size: 1 | 2 | 3): number {
  if (size === 1) return units[p]!;
  const k = units[p]! * U16 + units[p + 1]!;
  return size === 2 ? k : k * U16 + units[p + 2]!;
}

/**
 * Two passes over the units: the records of each gram counted (a gram once per record), then each
 * record's id (and, for trigrams, where the gram stands) written into its gram's posting, the grams
 * numbered in key order in between. A gram of ASCII units (nearly every gram of folded text) is
 * counted in a table indexed by its units, 7 bits each, its slot written there once numbered: no
 * lookup per occurrence; any other in a hash table. Both live only while building.
 */
function buildGrams(text: TextUnits, size: 1 | 2 | 3, scratch = new Scratch()): GramPostings {
  const { units, starts } = text;
  const records = starts.length - 1;
  const mask = (1 << (7 * size)) - 1;
  // Per ASCII gram d: table[2d] the last record that had it (id + 1; -(id + 1) in the second
  // pass), table[2d + 1] its count, then its slot. 1 KB for 1-grams, 128 KB for 2-grams, 16 MB for
  // 3-grams: that one only for many grams, where it costs less than it saves (its external memory
  // also sets off a full collection of the heap).
  const direct = size < 3 || units.length >= DIRECT_MIN;
  const table = direct ? scratchInt32(2 << (7 * size)) : EMPTY;
  const found = new GramSlots();
  let counts = new Int32Array(64);
  let last = new Int32Array(64);
  for (let id = 0; id < records; id++) {
    const from = starts[id]!;
    const end = starts[id + 1]!;
    // `d`: the last units 7 bits each, `high`: a bit each where that unit is not ASCII.
    let d = 0;
    let high = 0;
    for (let p = from; p < end; p++) {
      const u = units[p]!;
      d = ((d << 7) | (u & 0x7f)) & mask;
      high = ((high << 7) | (u > 0x7f ? 1 : 0)) & mask;
      if (p - from < size - 1) continue;
      if (high === 0 && direct) {
        const t = d << 1;
        if (table[t] !== id + 1) {
          table[t] = id + 1;
          table[t + 1]!++;
        }
        continue;
      }
      const slot = found.slot(unitsKey(units, p - size + 1, size));
      if (slot === counts.length) {
        const c = new Int32Array(slot * 2);
        c.set(counts);
        counts = c;
        const l = new Int32Array(slot * 2);
        l.set(last);
        last = l;
      }
      if (last[slot] !== id + 1) {
        last[slot] = id + 1;
        counts[slot]!++;
      }
    }
  }
  // Every gram: the ASCII ones by their table index, then the others by hash slot.
  let ascii = 0;
  if (direct) for (let d = 0; d <= mask; d++) if (table[2 * d + 1]! > 0) ascii++;
  const n = ascii + found.size;
  // The working arrays from the scratch (scratch.ts): malloc'd, the free of each one of 128 KB or more
  // raised glibc's mmap threshold, and the main thread's C heap stayed ~30 MB larger at ready on
  // Node 20 after it had built news's search index at 100k (balance13, session 13).
  const keyOf = scratch.float64(n);
  const countOf = scratch.int32(n);
  const origin = scratch.int32(n); // table index d, or -1 - hash slot
  let g = 0;
  if (direct) {
    for (let d = 0; d <= mask; d++) {
      const c = table[2 * d + 1]!;
      if (c === 0) continue;
      keyOf[g] = size === 1 ? d : size === 2 ? (d >>> 7) * U16 + (d & 0x7f) : ((d >>> 14) * U16 + ((d >>> 7) & 0x7f)) * U16 + (d & 0x7f);
      countOf[g] = c;
      origin[g++] = d;
    }
  }
  for (let s = 0; s < found.size; s++, g++) {
    keyOf[g] = found.keyOf[s]!;
    countOf[g] = counts[s]!;
    origin[g] = -1 - s;
  }
  // Grams in key order: gram -> its slot.
  const byKey = scratch.int32(n);
  for (let s = 0; s < n; s++) byKey[s] = s;
  byKey.sort((a, b) => keyOf[a]! - keyOf[b]!);
  const keys = new Float64Array(n);
  const hashSlot = scratch.int32(found.size);
  for (let r = 0; r < n; r++) {
    const o = origin[byKey[r]!]!;
    keys[r] = keyOf[byKey[r]!]!;
    if (o >= 0) table[2 * o + 1] = r;
    else hashSlot[-1 - o] = r;
  }
  // Dense 1- and 2-grams get a bitmap: smaller than their ids once in 1/32 of the records or more.
  const words = (records + 31) >>> 5;
  const bitsAt = new Int32Array(n).fill(-1);
  let dense = 0;
  if (size < 3) for (let r = 0; r < n; r++) if (countOf[byKey[r]!]! * 32 >= records) bitsAt[r] = dense++;
  const bits = new Uint32Array(dense * words);
  const bitCounts = new Int32Array(dense);
  const offsets = new Int32Array(n + 1);
  for (let r = 0; r < n; r++) {
    const c = countOf[byKey[r]!]!;
    if (bitsAt[r]! >= 0) bitCounts[bitsAt[r]!] = c;
    offsets[r + 1] = offsets[r]! + (bitsAt[r]! >= 0 ? 0 : c);
  }
  const B = blocksFor(records);
  const lows = new Uint16Array(offsets[n]!);
  const blocks = new Int32Array(n * B).fill(-1);
  const at = size === 3 ? new Uint8Array(lows.length) : NO_POSITIONS;
  const cursor = scratch.int32(n);
  cursor.set(offsets.subarray(0, n));
  last.fill(0);
  for (let id = 0; id < records; id++) {
    const from = starts[id]!;
    const end = starts[id + 1]!;
    let d = 0;
    let high = 0;
    for (let p = from; p < end; p++) {
      const u = units[p]!;
      d = ((d << 7) | (u & 0x7f)) & mask;
      high = ((high << 7) | (u > 0x7f ? 1 : 0)) & mask;
      if (p - from < size - 1) continue;
      let slot: number;
      if (high === 0 && direct) {
        const t = d << 1;
        slot = table[t + 1]!;
        if (table[t] === -1 - id) {
          if (size === 3) at[cursor[slot]! - 1] = AMBIGUOUS; // twice in this text: where is not one place
          continue;
        }
        table[t] = -1 - id;
      } else {
        const s = found.slot(unitsKey(units, p - size + 1, size));
        slot = hashSlot[s]!;
        if (last[s] === id + 1) {
          if (size === 3) at[cursor[slot]! - 1] = AMBIGUOUS;
          continue;
        }
        last[s] = id + 1;
      }
      const b = bitsAt[slot]!;
      if (b >= 0) {
        bits[b * words + (id >>> 5)]! |= 1 << (id & 31);
        continue;
      }
      const c = cursor[slot]!++;
      if (size === 3) {
        const i = p - from - 2;
        at[c] = i < AMBIGUOUS ? i : AMBIGUOUS;
      }
      lows[c] = id & 0xffff;
      if (blocks[slot * B + (id >>> 16)] === -1) blocks[slot * B + (id >>> 16)] = c;
    }
  }
  // A block with no entry of the slot starts where the next one does.
  for (let r = 0; r < n; r++) {
    let next = offsets[r + 1]!;
    for (let h = B - 1; h >= 0; h--) {
      if (blocks[r * B + h] === -1) blocks[r * B + h] = next;
      else next = blocks[r * B + h]!;
    }
  }
  return { keys, offsets, lows, blocks, at, bitsAt, bits, bitCounts };
}

/**
 * The distinct texts of `texts` in the order of their first records, and the groups of records by text;
 * no groups (every text its own) when no text repeats or when the trigram entries the repeats save (3
 * bytes each: low id and position) weigh less than the groups' arrays (4 bytes per record and group).
 */
export function groupTexts(texts: readonly string[]): { readonly distinct: readonly string[]; readonly groups: TextGroups } {
  const scratch = new Scratch();
  const { firsts, groups } = groupUnits(textUnits(texts, scratch), scratch);
  return { distinct: firsts === null ? texts : Array.from(firsts, (id) => texts[id]!), groups };
}

/**
 * groupTexts over units: each group's first record (null: no groups) and the groups. The texts are
 * found equal by a hash table of their units (group numbers, with each group's hash to pass others
 * by): no string per text (issue 19: the builder keeps its texts as units).
 */
function groupUnits(t: TextUnits, scratch: Scratch): { readonly firsts: Int32Array | null; readonly groups: TextGroups } {
  const { units, starts } = t;
  const n = starts.length - 1;
  // (Not from malloc's heap, nor a block each: scratch.ts.)
  const groupOf = scratch.int32(n);
  let size = 8;
  while (size < n * 2) size *= 2;
  const slots = scratch.int32(size);
  const mask = size - 1;
  const firstOf = scratch.int32(n);
  const hashOf = scratch.int32(n);
  let groups = 0;
  let saved = 0;
  for (let id = 0; id < n; id++) {
    const from = starts[id]!;
    const end = starts[id + 1]!;
    let h = 0x811c9dc5;
    for (let p = from; p < end; p++) h = Math.imul(h ^ units[p]!, 0x01000193);
    // slots: group + 1, 0 empty.
    let s = h & mask;
    let g = -1;
    for (let v = slots[s]!; v !== 0; v = slots[s]!) {
      const c = v - 1;
      if (hashOf[c] === h) {
        const f = starts[firstOf[c]!]!;
        if (starts[firstOf[c]! + 1]! - f === end - from) {
          let p = 0;
          while (from + p < end && units[f + p] === units[from + p]) p++;
          if (from + p === end) {
            g = c;
            break;
          }
        }
      }
      s = (s + 1) & mask;
    }
    if (g < 0) {
      g = groups++;
      slots[s] = g + 1;
      firstOf[g] = id;
      hashOf[g] = h;
    } else if (end - from > 2) saved += end - from - 2;
    groupOf[id] = g;
  }
  if (saved * 3 <= (n + groups + 1) * 4) return { firsts: null, groups: { starts: EMPTY, ids: EMPTY } };
  const gStarts = new Int32Array(groups + 1);
  for (let id = 0; id < n; id++) gStarts[groupOf[id]! + 1]!++;
  for (let g = 0; g < groups; g++) gStarts[g + 1]! += gStarts[g]!;
  const cursor = gStarts.slice(0, groups);
  const ids = new Int32Array(n);
  for (let id = 0; id < n; id++) ids[cursor[groupOf[id]!]!++] = id;
  return { firsts: firstOf.subarray(0, groups), groups: { starts: gStarts, ids } };
}

/** The search index of `texts`: strings, or units with offsets (unit-texts.ts: as a builder keeps them). */
export function buildSearchIndex(texts: readonly string[] | UnitTexts): SearchIndex {
  // One scratch for the working arrays of all three: let go with them once built.
  const scratch = new Scratch();
  const all = textUnits(texts, scratch);
  const { firsts, groups } = groupUnits(all, scratch);
  return {
    size: all.starts.length - 1,
    unigrams: buildGrams(all, 1, scratch),
    bigrams: buildGrams(all, 2, scratch),
    trigrams: buildGrams(firsts === null ? all : textsOf(all, firsts, scratch), 3, scratch),
    groups,
  };
}

/** One record's folded search text before and after an edit (search-text.ts, indexes.ts searchTextOf). */
export interface TextChange {
  readonly id: number;
  readonly was: string;
  readonly now: string;
}

/**
 * `ix` with the texts of a few records changed (`changes`, ascending ids, each once; `size` records
 * in all, those past `ix.size` added at the end, their texts before empty ones, or those past `size`
 * removed from the end, their texts now empty ones): the grams those
 * texts lose and gain put in or taken out of their postings, every other posting copied as it is
 * (issue 19: an edit of one title at 100k rebuilt the grams of 270k texts, 1.1 s). The slots, bitmaps,
 * blocks and trigram positions are those buildSearchIndex lays out for the new texts. Null when the
 * trigrams index groups of texts (the caller builds it from every text): grouped or not is then kept
 * as it was, which a build of the new texts could decide otherwise only on the edge of groupTexts'
 * rule (answers are the same either way).
 */
export function searchIndexWith(ix: SearchIndex, changes: readonly TextChange[], size = ix.size): SearchIndex | null {
  if (ix.groups.starts.length > 0) return null;
  const grams = (g: GramPostings, n: 1 | 2 | 3) => gramsWith(g, ix.size, size, changes, n);
  return { size, unigrams: grams(ix.unigrams, 1), bigrams: grams(ix.bigrams, 2), trigrams: grams(ix.trigrams, 3), groups: ix.groups };
}

/**
 * The search index of `texts` (every record's, after an edit) made from `ix` (before it) and the
 * changes between them, where searchIndexWith cannot: the 1- and 2-grams (over records) moved as
 * there, the trigrams (over groups of equal texts) built from the texts: as buildSearchIndex(texts).
 */
export function searchIndexOfTexts(ix: SearchIndex, texts: readonly string[], changes: readonly TextChange[]): SearchIndex {
  const { distinct, groups } = groupTexts(texts);
  const size = texts.length;
  return { size, unigrams: gramsWith(ix.unigrams, ix.size, size, changes, 1), bigrams: gramsWith(ix.bigrams, ix.size, size, changes, 2), trigrams: buildGrams(textUnits(distinct), 3), groups };
}

/** The grams of `text` of `size` units: key -> its position as buildGrams keeps it (trigrams; 0 for the others). */
export function gramsIn(text: string, size: 1 | 2 | 3): Map<number, number> {
  const out = new Map<number, number>();
  for (let i = 0; i + size <= text.length; i++) {
    const k = gramKey(text, i, size);
    if (!out.has(k)) out.set(k, size === 3 && i < AMBIGUOUS ? i : size === 3 ? AMBIGUOUS : 0);
    else if (size === 3) out.set(k, AMBIGUOUS);
  }
  return out;
}

/** An entry of a posting taken out (`at` -1), put in, or given another position. */
interface GramEdit {
  readonly key: number;
  readonly id: number;
  readonly at: number;
  readonly add: boolean;
}

/** `g` (over `was` records, `n` now) with the grams of `changes` moved: see searchIndexWith. */
export function gramsWith(g: GramPostings, was: number, n: number, changes: readonly TextChange[], size: 1 | 2 | 3): GramPostings {
  const edits: GramEdit[] = [];
  for (const { id, was, now } of changes) {
    const before = gramsIn(was, size);
    const after = gramsIn(now, size);
    for (const [key, at] of before) {
      const next = after.get(key);
      if (next === undefined) edits.push({ key, id, at: -1, add: false });
      else if (next !== at) edits.push({ key, id, at: next, add: false });
    }
    for (const [key, at] of after) if (!before.has(key)) edits.push({ key, id, at, add: true });
  }
  if (edits.length === 0 && n === was) return g;
  edits.sort((a, b) => a.key - b.key || a.id - b.id);
  const { slotOld, editFrom, editTo, counts, keys, bitsAt, offsets, bits, bitCounts, lows, at, blocks, words, B, oldWords, oldB } = slotsAfter(g, edits, was, n, size);
  const slots = keys.length;
  const ids: number[] = [];
  const ats: number[] = [];
  for (let r = 0; r < slots; r++) {
    const s = slotOld[r]!;
    const o = offsets[r]!;
    // (A bitmap's blocks all start where its no entries do.)
    if (bitsAt[r]! >= 0) blocks.fill(o, r * B, (r + 1) * B);
    if (s >= 0 && editFrom[r] === editTo[r] && (g.bitsAt[s]! >= 0) === (bitsAt[r]! >= 0)) {
      // Untouched: copied as it is, its blocks moved by where its entries now start (a block past
      // those of `was` records holds none of its ids: it starts at its end).
      if (bitsAt[r]! >= 0) {
        bits.set(g.bits.subarray(g.bitsAt[s]! * oldWords, g.bitsAt[s]! * oldWords + Math.min(oldWords, words)), bitsAt[r]! * words);
        bitCounts[bitsAt[r]!] = counts[r]!;
        continue;
      }
      const a = g.offsets[s]!;
      lows.set(g.lows.subarray(a, g.offsets[s + 1]!), o);
      if (size === 3) at.set(g.at.subarray(a, g.offsets[s + 1]!), o);
      for (let h = 0; h < B; h++) blocks[r * B + h] = h < oldB ? g.blocks[s * oldB + h]! - a + o : o + counts[r]!;
      continue;
    }
    // Its ids (and positions) as they were, with its edits merged in by id.
    ids.length = 0;
    ats.length = 0;
    let x = editFrom[r]!;
    const take = (id: number, p: number) => {
      for (; x < editTo[r]! && edits[x]!.id < id; x++) if (edits[x]!.add) ids.push(edits[x]!.id), ats.push(edits[x]!.at);
      if (x < editTo[r]! && edits[x]!.id === id) {
        const ed = edits[x++]!;
        if (ed.at !== -1) ids.push(id), ats.push(ed.at);
      } else ids.push(id), ats.push(p);
    };
    if (s >= 0 && g.bitsAt[s]! >= 0) {
      const base = g.bitsAt[s]! * oldWords;
      for (let w = 0; w < oldWords; w++) {
        for (let word = g.bits[base + w]!; word !== 0; word &= word - 1) take((w << 5) + 31 - Math.clz32(word & -word), 0);
      }
    } else if (s >= 0) {
      for (let h = 0; h < oldB; h++) {
        const end = h + 1 < oldB ? g.blocks[s * oldB + h + 1]! : g.offsets[s + 1]!;
        for (let c = g.blocks[s * oldB + h]!; c < end; c++) take((h << 16) | g.lows[c]!, size === 3 ? g.at[c]! : 0);
      }
    }
    for (; x < editTo[r]!; x++) if (edits[x]!.add) ids.push(edits[x]!.id), ats.push(edits[x]!.at);
    if (bitsAt[r]! >= 0) {
      const base = bitsAt[r]! * words;
      for (const id of ids) bits[base + (id >>> 5)]! |= 1 << (id & 31);
      bitCounts[bitsAt[r]!] = ids.length;
      continue;
    }
    // (A block with no entry of the slot starts where the next one does.)
    let h = 0;
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      for (; h <= id >>> 16; h++) blocks[r * B + h] = o + k;
      lows[o + k] = id & 0xffff;
      if (size === 3) at[o + k] = ats[k]!;
    }
    for (; h < B; h++) blocks[r * B + h] = o + ids.length;
  }
  return { keys, offsets, lows, blocks, at, bitsAt, bits, bitCounts };
}

/**
 * The slots of `g` (over `was` records) once `edits` (sorted by key) are applied, over `n` records,
 * in key order: the old slot of each (or -1 for a new gram), the range of its edits, its count, and
 * the new postings' arrays laid out for those counts (a slot dense enough a bitmap, as a build makes
 * it), still to be filled. A removal (`at` -1) takes one off its slot's count, a new position none; a
 * gram no text has any more is not a slot, and only additions can name a new gram.
 */
function slotsAfter(g: GramPostings, edits: readonly GramEdit[], was: number, n: number, size: 1 | 2 | 3) {
  const oldCount = (s: number): number => (g.bitsAt[s]! >= 0 ? g.bitCounts[g.bitsAt[s]!]! : g.offsets[s + 1]! - g.offsets[s]!);
  const slotOld: number[] = [];
  const slotKey: number[] = [];
  const editFrom: number[] = [];
  const editTo: number[] = [];
  const counts: number[] = [];
  const oldKeys = g.keys;
  let e = 0;
  for (let s = 0; s <= oldKeys.length; s++) {
    const bound = s < oldKeys.length ? oldKeys[s]! : Infinity;
    while (e < edits.length && edits[e]!.key < bound) {
      const from = e;
      const key = edits[e]!.key;
      let count = 0;
      for (; e < edits.length && edits[e]!.key === key; e++) count += edits[e]!.add ? 1 : 0;
      if (count > 0) slotOld.push(-1), slotKey.push(key), editFrom.push(from), editTo.push(e), counts.push(count);
    }
    if (s === oldKeys.length) break;
    const from = e;
    let count = oldCount(s);
    for (; e < edits.length && edits[e]!.key === bound; e++) count += edits[e]!.add ? 1 : edits[e]!.at === -1 ? -1 : 0;
    if (count > 0) slotOld.push(s), slotKey.push(bound), editFrom.push(from), editTo.push(e), counts.push(count);
  }
  const slots = slotKey.length;
  const words = (n + 31) >>> 5;
  const B = blocksFor(n);
  const bitsAt = new Int32Array(slots).fill(-1);
  const offsets = new Int32Array(slots + 1);
  let dense = 0;
  for (let r = 0; r < slots; r++) {
    if (size < 3 && counts[r]! * 32 >= n) bitsAt[r] = dense++;
    offsets[r + 1] = offsets[r]! + (bitsAt[r]! >= 0 ? 0 : counts[r]!);
  }
  const lows = new Uint16Array(offsets[slots]!);
  return {
    slotOld, editFrom, editTo, counts, keys: Float64Array.from(slotKey), bitsAt, offsets, lows, words, B,
    bits: new Uint32Array(dense * words), bitCounts: new Int32Array(dense),
    at: size === 3 ? new Uint8Array(lows.length) : NO_POSITIONS, blocks: new Int32Array(slots * B),
    oldWords: (was + 31) >>> 5, oldB: blocksFor(was),
  };
}

/**
 * Checks groups read back from the boot cache: none, or starts ascending from 0 to `size`, each
 * group's ids ascending and not empty, every record in one group, groups in the order of their first.
 */
export function groupsConsistent(groups: TextGroups, size: number): boolean {
  const { starts, ids } = groups;
  if (starts.length === 0) return ids.length === 0;
  const n = starts.length - 1;
  if (starts[0] !== 0 || starts[n] !== size || ids.length !== size) return false;
  const seen = new Uint8Array(size);
  let firstBefore = -1;
  for (let g = 0; g < n; g++) {
    const a = starts[g]!;
    const b = starts[g + 1]!;
    if (b <= a || ids[a]! <= firstBefore) return false;
    firstBefore = ids[a]!;
    for (let e = a; e < b; e++) {
      const id = ids[e]!;
      if (id < 0 || id >= size || seen[id] !== 0 || (e > a && id <= ids[e - 1]!)) return false;
      seen[id] = 1;
    }
  }
  return true;
}

/**
 * Checks grams read back from the boot cache against each other: offsets ascend from 0 to the
 * entries, each slot's blocks ascend within its entries from its first, positions (trigrams) one per
 * entry, every bitmap named by one slot and sized for `size` records.
 */
export function gramsConsistent(g: GramPostings, size: number, positions: boolean): boolean {
  const n = g.keys.length;
  const B = blocksFor(size);
  if (g.offsets.length !== n + 1 || g.bitsAt.length !== n || g.offsets[0] !== 0 || g.offsets[n] !== g.lows.length) return false;
  if (positions ? g.at.length !== g.lows.length : g.at.length !== 0) return false;
  if (g.blocks.length !== n * B) return false;
  for (let s = 0; s < n; s++) {
    if (g.blocks[s * B] !== g.offsets[s]) return false;
    for (let h = 1; h < B; h++) if (g.blocks[s * B + h]! < g.blocks[s * B + h - 1]!) return false;
    if (g.blocks[s * B + B - 1]! > g.offsets[s + 1]!) return false;
  }
  const dense = g.bitCounts.length;
  if (g.bits.length !== dense * ((size + 31) >>> 5)) return false;
  let next = 0;
  for (let s = 0; s < n; s++) {
    if (g.offsets[s + 1]! < g.offsets[s]!) return false;
    const b = g.bitsAt[s]!;
    if (b === -1) continue;
    if (b !== next++ || g.offsets[s + 1] !== g.offsets[s] || positions) return false;
  }
  return next === dense;
}

/** The slot of `key`, or -1. */
export function slotOf(g: GramPostings, key: number): number {
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

// Per query trigram: its slot's range of entries (the start moves on as a cursor), where its blocks
// start in `blocks`, and its offset in the query. Reused by every query: a search runs synchronously to the end. The API takes at most
// MAX_SEARCH_LENGTH (200) units, 67 trigrams; a longer query has its matches confirmed by their text.
const MAX_GRAMS = 128;
const from = new Int32Array(MAX_GRAMS);
const to = new Int32Array(MAX_GRAMS);
const offsetIn = new Int32Array(MAX_GRAMS);
const blockAt = new Int32Array(MAX_GRAMS);
// The matches of a query (an intersection, or one posting's ids decoded), reused by every query
// (STYLE: no allocation per request; a fresh array the size of a common gram's posting was external
// memory that set off a scavenge every few requests): grown to the largest posting asked for, so it
// holds a few hundred KB at 100k.
let matched = new Int32Array(1024);

/**
 * The bitmap (a bit per record id) and count of the records whose folded text contains the folded 1-
 * or 2-unit `query`, when its gram is kept as a bitmap; else null (then searchMatches has its ids).
 */
export function searchBits(ix: SearchIndex, query: string): { readonly bits: Uint32Array; readonly total: number } | null {
  const len = query.length;
  if (len === 0 || len > 2) return null;
  const g = len === 1 ? ix.unigrams : ix.bigrams;
  const slot = slotOf(g, gramKey(query, 0, len as 1 | 2));
  const b = slot === -1 ? -1 : g.bitsAt[slot]!;
  if (b === -1) return null;
  const words = (ix.size + 31) >>> 5;
  return { bits: g.bits.subarray(b * words, (b + 1) * words), total: g.bitCounts[b]! };
}

function swap(a: Int32Array, i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
}

/** Queries up to this many units have every trigram sized to find the rarest lead (a binary search each). */
const LEAD_SCAN = 48;

/** Puts trigram `slot` at query unit `i` into the per-query arrays, kept by posting size: the new count. */
function addGram(g: GramPostings, slot: number, i: number, count: number, B: number): number {
  const a = g.offsets[slot]!;
  const b = g.offsets[slot + 1]!;
  let j = count;
  while (j > 0 && to[j - 1]! - from[j - 1]! > b - a) {
    from[j] = from[j - 1]!;
    to[j] = to[j - 1]!;
    offsetIn[j] = offsetIn[j - 1]!;
    blockAt[j] = blockAt[j - 1]!;
    j--;
  }
  from[j] = a;
  to[j] = b;
  offsetIn[j] = i;
  blockAt[j] = slot * B;
  return count + 1;
}

/** The ids of entries [from, to) of `slot`, ascending, into the array every query reuses. */
function idsOf(g: GramPostings, slot: number, B: number): Int32Array {
  const from = g.offsets[slot]!;
  const to = g.offsets[slot + 1]!;
  if (matched.length < to - from) matched = new Int32Array(Math.max(to - from, matched.length * 2));
  const lows = g.lows;
  let k = 0;
  for (let h = 0; h < B; h++) {
    const end = h + 1 < B ? g.blocks[slot * B + h + 1]! : to;
    for (let e = g.blocks[slot * B + h]!; e < end; e++) matched[k++] = (h << 16) | lows[e]!;
  }
  return matched.subarray(0, k);
}

/** The ids of the set bits of `bits`, ascending, into the array every query reuses. */
function idsOfBits(bits: Uint32Array, total: number): Int32Array {
  if (matched.length < total) matched = new Int32Array(Math.max(total, matched.length * 2));
  let k = 0;
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      matched[k++] = (w << 5) + 31 - Math.clz32(word & -word);
      word &= word - 1;
    }
  }
  return matched.subarray(0, k);
}

/**
 * Whether record `id`'s folded text holds `query` at unit `start` (where a trigram that occurs once in
 * that text puts it), or anywhere when `start` is -1 (no trigram of the query says where).
 */
export type Confirm<C> = (context: C, id: number, query: string, start: number) => boolean;

/**
 * The ids of the records whose folded text contains the folded, non-empty `query`, ascending: exact.
 * Valid until the next call (a view of a posting, or of an array every query reuses): the caller
 * reads it before it searches again, and never keeps it.
 * A candidate is in every posting of the query's trigrams; a trigram that occurs once in its text
 * fixes where the query must start there, and when every trigram stands where that start says, the
 * record matches without its text being read. `confirm(context, ...)` reads a text only when some
 * trigram occurs twice in it (or past AMBIGUOUS): at the one start a sure trigram gives (a compare
 * of the query's length), or, when none does, by a scan of the text.
 */
export function searchMatches<C>(ix: SearchIndex, query: string, confirm: Confirm<C>, context: C): Int32Array {
  const len = query.length;
  if (len < 3) {
    const g = len === 1 ? ix.unigrams : ix.bigrams;
    const slot = slotOf(g, gramKey(query, 0, len as 1 | 2));
    if (slot === -1) return EMPTY;
    const b = g.bitsAt[slot]!;
    if (b === -1) return idsOf(g, slot, blocksFor(ix.size));
    const words = (ix.size + 31) >>> 5;
    return idsOfBits(g.bits.subarray(b * words, (b + 1) * words), g.bitCounts[b]!);
  }
  return recordsOf(ix, searchGroups(ix, query, confirm, context));
}

/**
 * The text groups (TextGroups; records when the trigrams index records) whose folded text contains
 * the folded `query` of 3 units or more, ascending: searchMatches before its records are put in
 * order (recordsOf). A search alone pages through the groups' records without that (issue 20:
 * src/query/execute.ts). Valid until the next call, as searchMatches' answer.
 */
export function searchGroups<C>(ix: SearchIndex, query: string, confirm: Confirm<C>, context: C): Int32Array {
  const len = query.length;
  const g = ix.trigrams;
  const B = blocksFor(groupCount(ix));
  const grouped = ix.groups.starts.length > 0;
  // Trigrams every 3 units and the last one cover every unit of the query once or twice: when they all
  // stand where their offsets say, the query is there. Shortest posting first (insertion sort). A
  // trigram at another unit (queries of up to LEAD_SCAN units) that is rarer than all of those is
  // added to lead: fewer candidates (a full name at 100k: 567 instead of 729 on average).
  const long = len > MAX_GRAMS * 3;
  const cover = long ? MAX_GRAMS : Math.ceil(len / 3);
  let count = 0;
  let single = -1;
  for (let n = 0; n < cover; n++) {
    const i = n === cover - 1 ? len - 3 : n * 3;
    const slot = slotOf(g, gramKey(query, i, 3));
    if (slot === -1) return EMPTY; // a gram no text has: nothing matches
    single = slot;
    count = addGram(g, slot, i, count, B);
  }
  if (!long && len <= LEAD_SCAN && count > 1) {
    let least = to[0]! - from[0]!;
    let rare = -1;
    let rareSlot = -1;
    for (let i = 1; i + 3 < len; i++) {
      if (i % 3 === 0) continue; // the cover's
      const slot = slotOf(g, gramKey(query, i, 3));
      if (slot === -1) return EMPTY;
      if (g.offsets[slot + 1]! - g.offsets[slot]! < least) {
        least = g.offsets[slot + 1]! - g.offsets[slot]!;
        rare = i;
        rareSlot = slot;
      }
    }
    if (rare !== -1) count = addGram(g, rareSlot, rare, count, B);
  }
  if (count === 1) return idsOf(g, single, B); // 3 units: exact
  const lows = g.lows;
  const blocks = g.blocks;
  const at = g.at;
  if (matched.length < to[0]! - from[0]!) matched = new Int32Array(Math.max(to[0]! - from[0]!, matched.length * 2));
  const out = matched;
  let k = 0;
  const lead = offsetIn[0]!;
  done: for (let h = 0; h < B; h++) {
    const last = h + 1 < B ? blocks[blockAt[0]! + h + 1]! : to[0]!;
    for (let e = blocks[blockAt[0]! + h]!; e < last; e++) {
      const low = lows[e]!;
      const id = (h << 16) | low;
      const first = at[e]!;
      // Where the query starts in this text, as a trigram that occurs there once says; -1: not known yet.
      let start = first === AMBIGUOUS ? -1 : first - lead;
      if (start < 0 && first !== AMBIGUOUS) continue; // the query would start before the text
      let unsure = long || first === AMBIGUOUS;
      let j = 1;
      for (; j < count; j++) {
        // The next entry >= id in this posting: within block h (the entries whose id shares its high
        // bits), gallop on the low bits from the cursor, then binary search.
        const end = to[j]!;
        const blockEnd = h + 1 < B ? blocks[blockAt[j]! + h + 1]! : end;
        let lo = from[j]!;
        if (lo < blocks[blockAt[j]! + h]!) lo = blocks[blockAt[j]! + h]!;
        if (lo < blockEnd && lows[lo]! < low) {
          let step = 1;
          while (lo + step < blockEnd && lows[lo + step]! < low) {
            lo += step;
            step <<= 1;
          }
          let hi = Math.min(lo + step, blockEnd);
          lo++;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (lows[mid]! < low) lo = mid + 1;
            else hi = mid;
          }
        }
        from[j] = lo;
        if (lo >= blockEnd) {
          if (lo >= end) break done; // this gram is in no later record
          break; // nor in a later one of this block
        }
        if (lows[lo] !== low) break;
        const p = at[lo]!;
        if (p === AMBIGUOUS) unsure = true;
        else if (start === -1) {
          // The first sure trigram: it fixes the start, which must lie inside the text.
          start = p - offsetIn[j]!;
          if (start < 0) break;
        } else if (p !== start + offsetIn[j]!) break;
      }
      if (j < count) {
        // Rejected by posting j: it is asked first from now on. The postings of one word of the query
        // hold the same records (a surname's trigrams), so an order by size alone asked them all before
        // the one that rejects (the first name's): 4 probes per candidate for "aanya bhattacharya".
        if (j > 1) {
          swap(from, 1, j);
          swap(to, 1, j);
          swap(offsetIn, 1, j);
          swap(blockAt, 1, j);
        }
        continue;
      }
      // A group's records share its text: its first one is read.
      if (!unsure || confirm(context, grouped ? ix.groups.ids[ix.groups.starts[id]!]! : id, query, start)) out[k++] = id;
    }
  }
  return out.subarray(0, k);
}

// The records of the groups a search found, reused by every query like `matched`; and a bit per record
// to put the records of several groups in order, with a bit per word of those marks that says which
// words hold one: all zero between queries (each clears what it set).
let records = new Int32Array(1024);
let marks = new Uint32Array(0);
let marked = new Uint32Array(0);

/**
 * The records of `found` (ascending group numbers, as searchGroups gives them), ascending: `found` itself when
 * groups are records; one group's ids as they are kept; else marked in a bitmap and read back in
 * order through the words marked (O(records + words / 32): the 813 records of a 4-unit slice at 100k
 * read 3,125 words of marks one by one before).
 */
export function recordsOf(ix: SearchIndex, found: Int32Array): Int32Array {
  const { starts, ids } = ix.groups;
  if (starts.length === 0 || found.length === 0) return found;
  if (found.length === 1) return ids.subarray(starts[found[0]!]!, starts[found[0]! + 1]!);
  const words = (ix.size + 31) >>> 5;
  if (marks.length < words) {
    marks = new Uint32Array(words);
    marked = new Uint32Array((words + 31) >>> 5);
  }
  let total = 0;
  for (let i = 0; i < found.length; i++) {
    const a = starts[found[i]!]!;
    const b = starts[found[i]! + 1]!;
    total += b - a;
    for (let e = a; e < b; e++) {
      const id = ids[e]!;
      marks[id >>> 5]! |= 1 << (id & 31);
      marked[id >>> 10]! |= 1 << ((id >>> 5) & 31);
    }
  }
  if (records.length < total) records = new Int32Array(Math.max(total, records.length * 2));
  const out = records;
  let k = 0;
  for (let m = 0; k < total; m++) {
    let summary = marked[m]!;
    if (summary === 0) continue;
    marked[m] = 0;
    while (summary !== 0) {
      const w = (m << 5) + 31 - Math.clz32(summary & -summary);
      summary &= summary - 1;
      let word = marks[w]!;
      marks[w] = 0;
      while (word !== 0) {
        out[k++] = (w << 5) + 31 - Math.clz32(word & -word);
        word &= word - 1;
      }
    }
  }
  return out.subarray(0, k);
}

/** A record's text: of one removed (its number before) or added (its number now) when records move (searchIndexRenumbered). */
export interface TextAt {
  readonly id: number;
  readonly text: string;
}

/**
 * `ix` for records numbered anew (issue 19: records inserted or removed in the middle of a file,
 * patch-shift.ts): record i before is record `newOf[i]` now (ascending where kept; -1: removed, its
 * text in `removed`), records `added` (their numbers now, ascending) are new, `size` records in all.
 * Every posting's ids mapped, the grams of the added and removed texts put in and taken out: the
 * slots, bitmaps, blocks and trigram positions buildSearchIndex lays out for the new texts. Null
 * where the trigrams index groups of texts (the caller builds from every text); grouped or not is
 * kept as it was (as searchIndexWith keeps it).
 */
export function searchIndexRenumbered(ix: SearchIndex, newOf: Int32Array, size: number, removed: readonly TextAt[], added: readonly TextAt[]): SearchIndex | null {
  if (ix.groups.starts.length > 0) return null;
  return { size, ...recordGramsRenumbered(ix, newOf, size, removed, added, true), groups: ix.groups };
}

/**
 * The 1- and 2-grams (over records) of `ix` renumbered as searchIndexRenumbered renumbers them (where
 * the trigrams index groups: search-regroup.ts), and the trigrams too when they are over records (`trigrams`).
 */
export function recordGramsRenumbered(ix: SearchIndex, newOf: Int32Array, size: number, removed: readonly TextAt[], added: readonly TextAt[]): Pick<SearchIndex, 'unigrams' | 'bigrams'>;
export function recordGramsRenumbered(ix: SearchIndex, newOf: Int32Array, size: number, removed: readonly TextAt[], added: readonly TextAt[], trigrams: true): Pick<SearchIndex, 'unigrams' | 'bigrams' | 'trigrams'>;
export function recordGramsRenumbered(ix: SearchIndex, newOf: Int32Array, size: number, removed: readonly TextAt[], added: readonly TextAt[], trigrams = false): Partial<SearchIndex> {
  // The first old record whose number changes: postings of none after it are copied as they are.
  let same = 0;
  while (same < newOf.length && newOf[same] === same) same++;
  const grams = (g: GramPostings, n: 1 | 2 | 3) => gramsRenumbered(g, ix.size, size, newOf, same, removed, added, n);
  return { unigrams: grams(ix.unigrams, 1), bigrams: grams(ix.bigrams, 2), ...(trigrams ? { trigrams: grams(ix.trigrams, 3) } : {}) };
}

/** `g` (over `was` records) renumbered by `newOf` (the identity below `same`), with `removed` and `added`'s grams: see searchIndexRenumbered. */
function gramsRenumbered(g: GramPostings, was: number, n: number, newOf: Int32Array, same: number, removed: readonly TextAt[], added: readonly TextAt[], size: 1 | 2 | 3): GramPostings {
  const edits: GramEdit[] = [];
  for (const { id, text } of removed) for (const key of gramsIn(text, size).keys()) edits.push({ key, id, at: -1, add: false });
  for (const { id, text } of added) for (const [key, at] of gramsIn(text, size)) edits.push({ key, id, at, add: true });
  // (Removals counted only; additions merged by their new numbers.)
  edits.sort((a, b) => a.key - b.key || Number(a.add) - Number(b.add) || a.id - b.id);
  const { slotOld, editFrom, editTo, counts, keys, bitsAt, offsets, bits, bitCounts, lows, at, blocks, words, B, oldWords, oldB } = slotsAfter(g, edits, was, n, size);
  const slots = keys.length;
  // The runs of kept records: old first, new first, count (for bitmaps).
  const runs: number[] = [];
  for (let i = 0; i < was; ) {
    if (newOf[i]! < 0) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < was && newOf[j] === newOf[i]! + (j - i)) j++;
    runs.push(i, newOf[i]!, j - i);
    i = j;
  }
  for (let r = 0; r < slots; r++) {
    const s = slotOld[r]!;
    const o = offsets[r]!;
    const xe = editTo[r]!;
    // Additions of this slot (after its removals in the edits' order), merged by their new numbers.
    let x = editFrom[r]!;
    while (x < xe && !edits[x]!.add) x++;
    if (bitsAt[r]! >= 0) {
      blocks.fill(o, r * B, (r + 1) * B);
      const base = bitsAt[r]! * words;
      bitCounts[bitsAt[r]!] = counts[r]!;
      if (s >= 0 && g.bitsAt[s]! >= 0) {
        // A bitmap from a bitmap: the bits of each run of kept records moved as they are.
        const from = g.bitsAt[s]! * oldWords;
        for (let k = 0; k < runs.length; k += 3) copyBits(g.bits, from, runs[k]!, bits, base, runs[k + 1]!, runs[k + 2]!);
      } else if (s >= 0) {
        for (let h = 0; h < oldB; h++) {
          const end = h + 1 < oldB ? g.blocks[s * oldB + h + 1]! : g.offsets[s + 1]!;
          for (let c = g.blocks[s * oldB + h]!; c < end; c++) {
            const id = newOf[(h << 16) | g.lows[c]!]!;
            if (id >= 0) bits[base + (id >>> 5)]! |= 1 << (id & 31);
          }
        }
      }
      for (; x < xe; x++) bits[base + (edits[x]!.id >>> 5)]! |= 1 << (edits[x]!.id & 31);
      continue;
    }
    // Ids: written in order, old ones renumbered and the additions merged in; a block with no entry
    // of the slot starts where the next one does.
    let k = 0;
    let hb = 0;
    const put = (id: number, p: number): void => {
      for (; hb <= id >>> 16; hb++) blocks[r * B + hb] = o + k;
      lows[o + k] = id & 0xffff;
      if (size === 3) at[o + k] = p;
      k++;
    };
    if (s >= 0 && g.bitsAt[s]! >= 0) {
      const base = g.bitsAt[s]! * oldWords;
      for (let w = 0; w < oldWords; w++) {
        for (let word = g.bits[base + w]!; word !== 0; word &= word - 1) {
          const id = newOf[(w << 5) + 31 - Math.clz32(word & -word)]!;
          if (id < 0) continue;
          for (; x < xe && edits[x]!.id < id; x++) put(edits[x]!.id, edits[x]!.at);
          put(id, 0);
        }
      }
    } else if (s >= 0) {
      const a = g.offsets[s]!;
      const b = g.offsets[s + 1]!;
      // Entries of ids below `same` copied as they are (so are their blocks'starts); the rest renumbered.
      const hs = same >>> 16;
      let split = a;
      if (hs < oldB) {
        split = g.blocks[s * oldB + hs]!;
        const end = hs + 1 < oldB ? g.blocks[s * oldB + hs + 1]! : b;
        const low = same & 0xffff;
        while (split < end && g.lows[split]! < low) split++;
      } else split = b;
      if (split > a) {
        lows.set(g.lows.subarray(a, split), o);
        if (size === 3) at.set(g.at.subarray(a, split), o);
        k = split - a;
        for (; hb <= Math.min(hs, oldB - 1, B - 1); hb++) blocks[r * B + hb] = g.blocks[s * oldB + hb]! - a + o;
      }
      for (let h = hs; h < oldB; h++) {
        const end = h + 1 < oldB ? g.blocks[s * oldB + h + 1]! : b;
        for (let c = Math.max(split, g.blocks[s * oldB + h]!); c < end; c++) {
          const id = newOf[(h << 16) | g.lows[c]!]!;
          if (id < 0) continue;
          for (; x < xe && edits[x]!.id < id; x++) put(edits[x]!.id, edits[x]!.at);
          put(id, size === 3 ? g.at[c]! : 0);
        }
      }
    }
    for (; x < xe; x++) put(edits[x]!.id, edits[x]!.at);
    for (; hb < B; hb++) blocks[r * B + hb] = o + k;
  }
  return { keys, offsets, lows, blocks, at, bitsAt, bits, bitCounts };
}

/** Bits `from` to `from + count - 1` of the bitmap at word `src` of `a` set at bits `to`... of the bitmap at word `dst` of `b` (whose bits there are 0). */
function copyBits(a: Uint32Array, src: number, from: number, b: Uint32Array, dst: number, to: number, count: number): void {
  for (let k = 0; k < count; ) {
    const f = from + k;
    const t = to + k;
    const n = Math.min(count - k, 32 - (f & 31), 32 - (t & 31));
    const v = (a[src + (f >>> 5)]! >>> (f & 31)) & (n === 32 ? -1 : (1 << n) - 1);
    b[dst + (t >>> 5)]! |= v << (t & 31);
    k += n;
  }
}
