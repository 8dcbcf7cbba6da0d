// A search index whose trigrams index groups of equal texts (search-index.ts: celebrity names, news
// titles), after an edit of a few texts, made from the index before it instead of from every text
// (issue 19: a celebrity's name edit at 100k built the trigrams of every distinct name again, 0.15-0.25 s
// of a 2.1 s restart). Only the groups the changed texts leave and join change: a group left empty
// goes (its trigram entries with it), a text no group had is a new group (its trigrams put in), a group
// whose first record changed moves; every other group keeps its records and its entries, renumbered
// in the order of the groups' first records, as buildSearchIndex numbers them. The 1- and 2-grams,
// over records, move as searchIndexWith moves them. Records inserted or removed in the middle (every
// later one numbered anew) are the same moves with each group's records renumbered.
import { AMBIGUOUS, blocksFor, gramKey, gramsIn, gramsWith, groupCount, recordGramsRenumbered, slotOf, type GramPostings, type SearchIndex, type TextAt, type TextChange } from './search-index.ts';

/**
 * What buildSearchIndex(texts) gives for the texts of `ix` with `changes` made (ascending ids, each
 * once; `size` records in all: those past `ix.size` added at the end, their texts before empty ones,
 * those past `size` removed, their texts now empty ones), where `ix`'s trigrams index groups; null
 * when they do not, or when the new texts would not be grouped (groupTexts' rule: the caller then
 * builds from every text). `textOf`: a record's text in `ix` (before the edit).
 */
export function regroupedIndexWith(ix: SearchIndex, changes: readonly TextChange[], size: number, textOf: (id: number) => string): SearchIndex | null {
  if (ix.groups.starts.length === 0) return null;
  const leaving = changes.filter((c) => c.id < ix.size).map((c) => c.id);
  const arriving = changes.filter((c) => c.id < size).map((c) => ({ id: c.id, text: c.now }));
  const regrouped = regroup(ix, leaving, arriving, null, size, textOf);
  return regrouped && { size, unigrams: gramsWith(ix.unigrams, ix.size, size, changes, 1), bigrams: gramsWith(ix.bigrams, ix.size, size, changes, 2), ...regrouped };
}

/**
 * What buildSearchIndex gives for the texts of `ix` with records numbered anew (records inserted or
 * removed in the middle of a file, patch-shift.ts; the arguments of search-index.ts
 * searchIndexRenumbered), where `ix`'s trigrams index groups: each group's records renumbered, those
 * removed out of their groups and those added into the group of their text (or a new one); null as
 * for regroupedIndexWith. `textOf`: a record's text in `ix` (before).
 */
export function regroupedIndexRenumbered(ix: SearchIndex, newOf: Int32Array, size: number, removed: readonly TextAt[], added: readonly TextAt[], textOf: (id: number) => string): SearchIndex | null {
  if (ix.groups.starts.length === 0) return null;
  const regrouped = regroup(ix, removed.map((r) => r.id), added, newOf, size, textOf);
  return regrouped && { size, ...recordGramsRenumbered(ix, newOf, size, removed, added), ...regrouped };
}

/**
 * The trigrams and groups buildSearchIndex makes of the texts of `ix` with records `leaving` (numbers
 * before) out of their groups and records `arriving` (numbers now, with their texts) in the group of
 * their text, or a new one; every record's number now is `newOf`'s (null: the same), `size` records
 * in all. Only the groups records leave and join change: a group left empty goes (its trigram entries
 * with it), a text no group had is a new group (its trigrams put in), a group whose first record
 * changed moves; every other group keeps its records and its entries, renumbered in the order of the
 * groups' first records. Null when the new texts would not be grouped (groupTexts' rule).
 */
function regroup(ix: SearchIndex, leaving: readonly number[], arriving: readonly TextAt[], newOf: Int32Array | null, size: number, textOf: (id: number) => string): Pick<SearchIndex, 'trigrams' | 'groups'> | null {
  const { starts, ids } = ix.groups;
  const n = ix.size;
  const G = groupCount(ix);
  const groupOf = new Int32Array(n);
  for (let g = 0; g < G; g++) for (let k = starts[g]!; k < starts[g + 1]!; k++) groupOf[ids[k]!] = g;
  const tri = ix.trigrams;
  const oldB = blocksFor(G);
  /** The old group of text `text`, or -1 (its first trigram's entries at position 0 tried; a text under 3 units: every group). */
  const groupOfText = (text: string): number => {
    if (text.length < 3) {
      for (let g = 0; g < G; g++) if (textOf(ids[starts[g]!]!) === text) return g;
      return -1;
    }
    const s = slotOf(tri, gramKey(text, 0, 3));
    if (s < 0) return -1;
    for (let h = 0; h < oldB; h++) {
      const end = h + 1 < oldB ? tri.blocks[s * oldB + h + 1]! : tri.offsets[s + 1]!;
      for (let c = tri.blocks[s * oldB + h]!; c < end; c++) {
        if (tri.at[c] !== 0 && tri.at[c] !== AMBIGUOUS) continue;
        const g = (h << 16) | tri.lows[c]!;
        if (textOf(ids[starts[g]!]!) === text) return g;
      }
    }
    return -1;
  };
  /** A record's number now. */
  const now = newOf === null ? (id: number) => id : (id: number) => newOf[id]!;
  // The records each affected group loses and gains; the records of each text no group had.
  const out = new Map<number, number[]>();
  const joining = new Map<number, number[]>();
  const fresh = new Map<string, number[]>();
  const add = <K>(m: Map<K, number[]>, k: K, id: number) => {
    const l = m.get(k);
    if (l === undefined) m.set(k, [id]);
    else l.push(id);
  };
  for (const id of leaving) add(out, groupOf[id]!, id);
  for (const { id, text } of arriving) {
    const g = fresh.has(text) ? -1 : groupOfText(text);
    if (g >= 0) add(joining, g, id);
    else add(fresh, text, id);
  }
  // Each affected group's records now (ascending), and the new groups'.
  const members = new Map<number, Int32Array>();
  for (const g of new Set([...out.keys(), ...joining.keys()])) {
    const gone = new Set(out.get(g) ?? []);
    const kept = [...ids.subarray(starts[g]!, starts[g + 1]!)].filter((id) => !gone.has(id)).map(now);
    members.set(g, Int32Array.from([...kept, ...(joining.get(g) ?? [])]).sort());
  }
  const added = [...fresh].map(([text, list]) => ({ text, records: Int32Array.from(list).sort() }));
  // groupTexts' rule over the new texts: the units the repeats save against the groups' arrays.
  const saves = (count: number, length: number) => (count > 0 && length > 2 ? (count - 1) * (length - 2) : 0);
  let saved = 0;
  let distinct = G + added.length;
  for (let g = 0; g < G; g++) {
    const count = members.get(g)?.length ?? starts[g + 1]! - starts[g]!;
    if (count > 1) saved += saves(count, textOf(ids[starts[g]!]!).length);
  }
  for (const m of members.values()) if (m.length === 0) distinct--;
  for (const a of added) saved += saves(a.records.length, a.text.length);
  if (saved * 3 <= (size + distinct + 1) * 4) return null;
  // The groups in the order of their first records: those not affected keep theirs (and their order:
  // a renumbering keeps the order of the records it keeps); the affected ones left with records and
  // the new ones merged in.
  const moved = [...members].filter(([, m]) => m.length > 0).map(([g, m]) => ({ g, first: m[0]!, records: m, text: '' }));
  for (const a of added) moved.push({ g: -1, first: a.records[0]!, records: a.records, text: a.text });
  moved.sort((a, b) => a.first - b.first);
  const number = new Int32Array(G).fill(-1);
  const groupStarts = new Int32Array(distinct + 1);
  const groupIds = new Int32Array(size);
  /** The new groups' numbers and texts (trigrams put in). */
  const news: { readonly g: number; readonly text: string }[] = [];
  let next = 0;
  let at = 0;
  let m = 0;
  const place = (records: Int32Array) => {
    groupIds.set(records, at);
    at += records.length;
    groupStarts[++next] = at;
  };
  for (let g = 0; g <= G; g++) {
    if (g < G && members.has(g)) continue;
    const first = g < G ? now(ids[starts[g]!]!) : Infinity;
    for (; m < moved.length && moved[m]!.first < first; m++) {
      const x = moved[m]!;
      if (x.g >= 0) number[x.g] = next;
      else news.push({ g: next, text: x.text });
      place(x.records);
    }
    if (g === G) break;
    number[g] = next;
    if (newOf === null) place(ids.subarray(starts[g]!, starts[g + 1]!));
    else {
      for (let k = starts[g]!; k < starts[g + 1]!; k++) groupIds[at++] = newOf[ids[k]!]!;
      groupStarts[++next] = at;
    }
  }
  if (next !== distinct || at !== size) throw new Error('search-regroup: groups miscounted');
  // Trigram entries: those of groups gone taken out, those of new groups put in, the rest renumbered.
  const gone = new Map<number, number>();
  for (const [g, list] of members) if (list.length === 0) for (const key of gramsIn(textOf(ids[starts[g]!]!), 3).keys()) gone.set(key, (gone.get(key) ?? 0) + 1);
  const puts: { readonly key: number; readonly g: number; readonly at: number }[] = [];
  for (const x of news) for (const [key, p] of gramsIn(x.text, 3)) puts.push({ key, g: x.g, at: p });
  puts.sort((a, b) => a.key - b.key || a.g - b.g);
  return { trigrams: renumbered(tri, G, distinct, number, gone, puts), groups: { starts: groupStarts, ids: groupIds } };
}

/**
 * Trigram postings `g` over `was` groups, as buildGrams lays them out over `now` groups: each entry's
 * group given its new number (`number`; -1: gone, its entries counted per key in `gone`), `puts` (by
 * key, then group) put in; a slot left with no entry is none, and a posting whose groups changed order
 * (a group whose first record changed moves) sorted again.
 */
function renumbered(g: GramPostings, was: number, now: number, number: Int32Array, gone: ReadonlyMap<number, number>, puts: readonly { readonly key: number; readonly g: number; readonly at: number }[]): GramPostings {
  const oldB = blocksFor(was);
  const B = blocksFor(now);
  const keys = g.keys;
  // The new slots in key order: an old slot (>= 0) or none, the range of its puts, its count.
  const slotOld: number[] = [];
  const slotKey: number[] = [];
  const putFrom: number[] = [];
  const putTo: number[] = [];
  const offsets: number[] = [0];
  let p = 0;
  for (let s = 0; s <= keys.length; s++) {
    const bound = s < keys.length ? keys[s]! : Infinity;
    while (p < puts.length && puts[p]!.key < bound) {
      const from = p;
      const key = puts[p]!.key;
      while (p < puts.length && puts[p]!.key === key) p++;
      slotOld.push(-1), slotKey.push(key), putFrom.push(from), putTo.push(p), offsets.push(offsets[offsets.length - 1]! + p - from);
    }
    if (s === keys.length) break;
    const from = p;
    while (p < puts.length && puts[p]!.key === bound) p++;
    const count = g.offsets[s + 1]! - g.offsets[s]! - (gone.get(bound) ?? 0) + p - from;
    if (count > 0) slotOld.push(s), slotKey.push(bound), putFrom.push(from), putTo.push(p), offsets.push(offsets[offsets.length - 1]! + count);
  }
  const slots = slotKey.length;
  const total = offsets[slots]!;
  const lows = new Uint16Array(total);
  const at = new Uint8Array(total);
  const blocks = new Int32Array(slots * B);
  let ids = new Int32Array(64);
  let ats = new Uint8Array(64);
  for (let r = 0; r < slots; r++) {
    const s = slotOld[r]!;
    const o = offsets[r]!;
    const count = offsets[r + 1]! - o;
    if (ids.length < count) (ids = new Int32Array(count * 2)), (ats = new Uint8Array(count * 2));
    let k = 0;
    let sorted = true;
    if (s >= 0) {
      for (let h = 0; h < oldB; h++) {
        const end = h + 1 < oldB ? g.blocks[s * oldB + h + 1]! : g.offsets[s + 1]!;
        for (let c = g.blocks[s * oldB + h]!; c < end; c++) {
          const id = number[(h << 16) | g.lows[c]!]!;
          if (id < 0) continue;
          if (k > 0 && id < ids[k - 1]!) sorted = false;
          ids[k] = id;
          ats[k++] = g.at[c]!;
        }
      }
    }
    for (let x = putFrom[r]!; x < putTo[r]!; x++) {
      if (k > 0 && puts[x]!.g < ids[k - 1]!) sorted = false;
      ids[k] = puts[x]!.g;
      ats[k++] = puts[x]!.at;
    }
    if (k !== count) throw new Error('search-regroup: entries miscounted');
    if (!sorted) {
      const pairs = Float64Array.from({ length: k }, (_, i) => ids[i]! * 256 + ats[i]!).sort();
      for (let i = 0; i < k; i++) (ids[i] = Math.floor(pairs[i]! / 256)), (ats[i] = pairs[i]! % 256);
    }
    // (A block with no entry of the slot starts where the next one does.)
    let h = 0;
    for (let i = 0; i < k; i++) {
      const id = ids[i]!;
      for (; h <= id >>> 16; h++) blocks[r * B + h] = o + i;
      lows[o + i] = id & 0xffff;
      at[o + i] = ats[i]!;
    }
    for (; h < B; h++) blocks[r * B + h] = o + k;
  }
  return { keys: Float64Array.from(slotKey), offsets: Int32Array.from(offsets), lows, blocks, at, bitsAt: new Int32Array(slots).fill(-1), bits: new Uint32Array(0), bitCounts: new Int32Array(0) };
}
