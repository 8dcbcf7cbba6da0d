// Load-time work so that requests only join precomputed pieces (STYLE habit 2): a slug hash table, one
// order per sort value, folded value -> ids postings per filter, folded search text, serialized JSON,
// all in typed arrays; and the functions through which the server reads them.
import type { CollectionName, LinkedRecord, ResourceDefinition } from '../resources/types.ts';
import { fold } from './fold.ts';
import { detailBytes, detailPlan, embedFields, embedSource, listEmbedPlan, pieceBounds, type DetailPlan, type Details, type Embed } from './detail-layout.ts';
import { decidedByGrams, derivedText, isDerived, searchField, type SearchFrom } from './search-text.ts';
import { fragment, FragmentBuilder, fragmentLength, GrowingF64, GrowingI32, joinFragments, writeFragment, type Fragments } from './fragments.ts';
import { buildSearchIndex, type SearchIndex } from './search-index.ts';
import { idRanks, numberOrder, numberOrders } from './sort-order.ts';
import { Scratch } from './scratch.ts';
import { textOf, UnitTextsBuilder } from './unit-texts.ts';
import { StringKeys } from './string-keys.ts';
import { IndexDigest, type RecordGroups, type SourceDigester } from './record-groups.ts';
import { writeAscii, writeByte, writeNull } from './json-bytes.ts';
import { compileFieldsWriter, compileShapes, propsWriter } from './shape.ts';
import { count, includes, includesAt, lookup, lookupSlug, slugAt, slugTable, slugTableAt, stringAt, stringTable, stringTableOfUnits, type SlugTable, type StringTable } from './string-table.ts';

export interface RangeIndex {
  /** The `minParam` of the range filter it serves. */
  readonly param: string;
  /** Record ids with a value, ascending by value (ties by id). */
  readonly ids: Int32Array;
  /** The values of `ids`, in the same order, for binary search. */
  readonly values: Float64Array;
  /** The value of each record by id (NaN when it has none), for checking candidates. */
  readonly byId: Float64Array;
}

/**
 * The postings of one equality filter in compressed (CSR) form: key k (a string of `keys`) holds the
 * ascending ids `ids[offsets[k], offsets[k + 1])`; a posting of more than SMALL_POSTING ids is also
 * kept in each sort order (`sorted`, see `sortedKeys`), a shorter one is put in order by the sort's
 * ranks when asked; a posting holding at least 1/64 of the records also has a bitmap, words
 * `bits[bitsAt[k] * words, ...)`. No Map entry and no object per key: a key per celebrity is three
 * numbers, and the boot cache maps the arrays back as they are.
 */
export interface PostingTable {
  readonly param: string;
  /** The keys, posting k is key k; null when posting k is that of the record `embeds[embed]` reads with id k. */
  readonly keys: StringTable | null;
  /** The embed (its number in the collection's `embeds`) whose record ids number the postings, or -1. */
  readonly embed: number;
  readonly offsets: Int32Array;
  readonly ids: Int32Array;
  /** The postings (ascending numbers) of more than SMALL_POSTING ids: those kept in every sort order. */
  readonly sortedKeys: Int32Array;
  /** Where posting `sortedKeys[j]` lies in each array of `sorted`: `[sortedOffsets[j], sortedOffsets[j + 1])`. */
  readonly sortedOffsets: Int32Array;
  /** Per sort of the definition (in its order): the postings of `sortedKeys` in that order, back to back. */
  readonly sorted: readonly Int32Array[];
  /** Posting -> its bitmap's number in `bits`, or -1; empty when no posting has one. */
  readonly bitsAt: Int32Array;
  /** The bitmaps of the dense postings, (size + 31) >>> 5 words each, back to back. */
  readonly bits: Uint32Array;
}

/**
 * Everything a collection answers from, as a few large typed arrays. The server reads it only
 * through the functions below (slugId, postingIds, sortOrder, listLength, detailBody...), so the
 * layout can change without touching src/http or src/query.
 */
export interface CollectionIndex {
  readonly def: ResourceDefinition;
  readonly size: number;
  /** Where record i's slug lies in its list item, and a hash table that finds the id of a slug. */
  readonly slugs: SlugTable;
  /** Each record's list-shape JSON. */
  readonly list: Fragments;
  /** Each record's detail: the detail-only JSON, the rest read from `list` (src/data/detail-layout.ts). */
  readonly detail: Details;
  /** The records of other collections that records embed, by id, their text read from those collections' list items (detail-layout.ts). */
  readonly embeds: readonly Embed[];
  /** Per sort of the definition (in its order): record ids in that order. */
  readonly orders: readonly Int32Array[];
  /** Per sort: the position of each record id in that order. */
  readonly ranks: readonly Int32Array[];
  /**
   * Per sort: each record's key (NaN: none) for a sort whose key no answer shows (SortDef `kept`:
   * patch.ts and patch-shift.ts place records by it), else null (the key reads back from the JSON).
   */
  readonly sortKeys: readonly (Float64Array | null)[];
  /** One table per equality filter, in the definition's order. */
  readonly postings: readonly PostingTable[];
  readonly range: RangeIndex | null;
  /** Folded search text of record i is string i (no hash table); empty where `searchFrom` says it is derived. */
  readonly searchText: StringTable;
  /** Where the texts the table leaves out are read from (search-text.ts), or null. */
  readonly searchFrom: SearchFrom | null;
  /** 1-, 2- and 3-gram postings over the search texts. */
  readonly search: SearchIndex;
  /** Digests of its records by groups, for rebuilding only what an edit changed (record-groups.ts, patch.ts); absent: unknown. */
  readonly groups?: RecordGroups | null;
}

const EMPTY = new Int32Array(0);
/** `"slug":"`: a list item's slug key and its value's opening quote. */
const SLUG_KEY_BYTES = 8;
const EMPTY_ARRAY = Uint8Array.of(0x5b, 0x5d);

/** The record id of `slug`, or -1. */
export function slugId(ix: CollectionIndex, slug: string): number {
  return lookupSlug(ix.slugs, ix.list.bytes, ix.list.starts, slug);
}

/** The slug of record `id` (decoded; not for the request path). */
export function slugOf(ix: CollectionIndex, id: number): string {
  return slugAt(ix.slugs, ix.list.bytes, ix.list.starts, id);
}

function sortNumber(ix: CollectionIndex, sort: string): number {
  const sorts = ix.def.sorts;
  for (let i = 0; i < sorts.length; i++) if (sorts[i]!.name === sort) return i;
  return -1;
}

/** Record ids in the order of sort `sort` (a sort name of the definition). */
export function sortOrder(ix: CollectionIndex, sort: string): Int32Array {
  return ix.orders[sortNumber(ix, sort)]!;
}

/** The position of each record id in the order of `sort`. */
export function sortRank(ix: CollectionIndex, sort: string): Int32Array {
  return ix.ranks[sortNumber(ix, sort)]!;
}

function table(ix: CollectionIndex, param: string): PostingTable | null {
  for (const t of ix.postings) if (t.param === param) return t;
  return null;
}

/** Ascending ids of the records whose filter `param` has `key` (empty when none). */
export function postingIds(ix: CollectionIndex, param: string, key: string): Int32Array {
  const t = table(ix, param);
  if (t === null) return EMPTY;
  const k = t.keys !== null ? lookup(t.keys, key) : slugId(embedTarget(ix, t), key);
  // (k past the postings: a collection without records, whose table has none.)
  if (k === -1 || k >= t.offsets.length - 1) return EMPTY;
  const ids = t.ids.subarray(t.offsets[k]!, t.offsets[k + 1]!);
  lastPosting.ids = ids;
  lastPosting.t = t;
  lastPosting.k = k;
  return ids;
}

/**
 * The last posting postingIds gave, with its table and number: postingOf knows it by identity (the
 * request that asked for it asks where it lies next), without reading the views' buffers and offsets.
 */
const lastPosting: { ids: Int32Array | null; t: PostingTable | null; k: number } = { ids: null, t: null, k: -1 };

/** Lets go of the last posting (executeQuery, once its query is answered). */
export function forgetLastPosting(): void {
  lastPosting.ids = null;
  lastPosting.t = null;
  lastPosting.k = -1;
}

/** The collection whose record ids number the postings of `t`. */
function embedTarget(ix: CollectionIndex, t: PostingTable): CollectionIndex {
  const target = ix.embeds[t.embed]?.index;
  if (!target) throw new Error(`${ix.def.name} filter ${t.param}: its embed is not linked`);
  return target;
}

/** The filter keys of `param` that select records, in table order (decoded; for tests and tools). */
export function postingKeys(ix: CollectionIndex, param: string): string[] {
  const t = table(ix, param);
  if (t === null) return [];
  if (t.keys !== null) return Array.from({ length: count(t.keys) }, (_, k) => stringAt(t.keys!, k));
  const target = embedTarget(ix, t);
  const out: string[] = [];
  for (let k = 0; k + 1 < t.offsets.length; k++) if (t.offsets[k + 1]! > t.offsets[k]!) out.push(slugOf(target, k));
  return out;
}

/** The last index in 0..`last` of ascending `a` whose value is at most `value` (0 when none is). */
export function lastAtOrBelow(a: ArrayLike<number>, value: number, last: number): number {
  let lo = 0;
  let hi = last;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (a[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The table and posting number of `ids` when it is a whole posting that postingIds returned: found
 * by where it lies in the table's ids (its offset), not by object identity, so the views made per
 * request and those read back from the boot cache are recognized alike.
 */
function postingOf(ix: CollectionIndex, ids: Int32Array): { t: PostingTable; k: number } | null {
  if (ids.length === 0) return null;
  if (ids === lastPosting.ids && ix.postings.includes(lastPosting.t!)) return lastPosting as { t: PostingTable; k: number };
  for (const t of ix.postings) {
    const all = t.ids;
    if (ids.buffer !== all.buffer || ids.byteOffset < all.byteOffset || ids.byteOffset >= all.byteOffset + all.byteLength) continue;
    const start = (ids.byteOffset - all.byteOffset) >>> 2;
    const offsets = t.offsets;
    // The last posting that starts at or before `start`: empty postings (a celebrity without news)
    // share their offset with the next one.
    const lo = lastAtOrBelow(offsets, start, offsets.length - 2);
    return offsets[lo] === start && offsets[lo + 1]! - start === ids.length ? { t, k: lo } : null;
  }
  return null;
}

/** The bitmap of a dense posting (a bit per record id), or null for any other set. */
export function postingBits(ix: CollectionIndex, ids: Int32Array): Uint32Array | null {
  const p = postingOf(ix, ids);
  if (p === null) return null;
  const n = p.t.bitsAt.length === 0 ? -1 : p.t.bitsAt[p.k]!;
  if (n < 0) return null;
  const words = (ix.size + 31) >>> 5;
  return p.t.bits.subarray(n * words, (n + 1) * words);
}

/**
 * Postings of at most this many ids are not kept in each sort order: put in order when asked (a
 * copy sorted by the sort's ranks, a few random reads), they saved 6.5 MB at 100k (a celebrity's
 * outfits and news: 455k ids in 7 orders), where the ids in order cost 4 bytes per id and order.
 */
export const SMALL_POSTING = 16;

/** A posting's ids in the order of `sort`, or null when `ids` is not a posting. */
export function postingInOrder(ix: CollectionIndex, ids: Int32Array, sort: string): Int32Array | null {
  const p = postingOf(ix, ids);
  if (p === null) return null;
  const s = sortNumber(ix, sort);
  const sorted = p.t.sorted[s];
  if (sorted === undefined) return null;
  const keys = p.t.sortedKeys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k === p.k) return sorted.subarray(p.t.sortedOffsets[mid]!, p.t.sortedOffsets[mid + 1]!);
    if (k < p.k) lo = mid + 1;
    else hi = mid - 1;
  }
  // A posting of one id is in every order (a celebrity with a single outfit or article).
  return ids.length < 2 ? ids : inRankOrder(ids, ix.ranks[s]!);
}

/**
 * One filter alone (a first filter page's query): records [start, start + limit) of the posting of
 * `key` for filter `param` in the order of `sort`, and the posting's size, read straight from the
 * posting kept in that order: one view, where postingIds, postingInOrder and the page's slice made
 * three, with the query's sets and constraints. Null when that posting is not kept in the order (a
 * small posting: postingInOrder puts it in order).
 */
export function postingPage(ix: CollectionIndex, param: string, key: string, sort: string, start: number, limit: number): { total: number; ids: Int32Array } | null {
  const t = table(ix, param);
  if (t === null) return { total: 0, ids: EMPTY };
  const k = t.keys !== null ? lookup(t.keys, key) : slugId(embedTarget(ix, t), key);
  // (k past the postings: a collection without records, whose table has none.)
  if (k === -1 || k >= t.offsets.length - 1) return { total: 0, ids: EMPTY };
  const from = t.offsets[k]!;
  const total = t.offsets[k + 1]! - from;
  if (start >= total) return { total, ids: EMPTY };
  const end = Math.min(start + limit, total);
  const sorted = t.sorted[sortNumber(ix, sort)];
  if (sorted === undefined) return null;
  // A posting of one id is in every order (a celebrity with a single outfit or article).
  if (total === 1) return { total, ids: t.ids.subarray(from + start, from + end) };
  const keys = t.sortedKeys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = keys[mid]!;
    if (m === k) {
      const at = t.sortedOffsets[mid]!;
      return { total, ids: sorted.subarray(at + start, at + end) };
    }
    if (m < k) lo = mid + 1;
    else hi = mid - 1;
  }
  return null;
}

/** A copy of `ids` in ascending order of their ranks (an insertion sort: `ids` is a small posting). */
function inRankOrder(ids: Int32Array, rank: Int32Array): Int32Array {
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    const r = rank[id]!;
    let j = i;
    while (j > 0 && rank[out[j - 1]!]! > r) {
      out[j] = out[j - 1]!;
      j--;
    }
    out[j] = id;
  }
  return out;
}

/**
 * True when the folded search text of record `id` contains the folded `text`: at unit `start`, or
 * anywhere when `start` is -1 (search-index.ts: a trigram that occurs once in the text says where).
 */
export function searchTextIncludes(ix: CollectionIndex, id: number, text: string, start: number): boolean {
  const from = ix.searchFrom;
  if (from !== null && from !== undefined && isDerived(from, id)) {
    // Only a query longer than the trigrams it is checked by comes here (search-text.ts).
    const t = derivedText(ix.def, from, fragment(ix.list, id, 20000101));
    return start === -1 ? t.includes(text) : start >= 0 && start + text.length <= t.length && t.startsWith(text, start);
  }
  return start === -1 ? includes(ix.searchText, id, text) : includesAt(ix.searchText, id, text, start);
}

/** The folded search text of record `id`, decoded (tests and tools). */
export function searchTextOf(ix: CollectionIndex, id: number): string {
  const from = ix.searchFrom;
  return from === null || !isDerived(from, id) ? stringAt(ix.searchText, id) : derivedText(ix.def, from, fragment(ix.list, id, 20000101));
}

/** Bytes of record `id`'s list item as served on day `today`. */
export function listLength(ix: CollectionIndex, id: number, today: number): number {
  return fragmentLength(ix.list, id, today);
}

/** Copies record `id`'s list item as served on `today` into `out` at `pos`; returns the position after it. */
export function writeList(ix: CollectionIndex, id: number, today: number, out: Buffer, pos: number): number {
  return writeFragment(ix.list, id, today, out, pos);
}

const LIST_TAIL = Buffer.from(']}');

/**
 * A whole list body: `head[0, headLength)`, the list items of `ids` as served on `today` joined by
 * commas, and `]}`, in one buffer of the exact size (each item's late value computed once).
 */
export function listBody(ix: CollectionIndex, ids: ArrayLike<number>, today: number, head: Buffer, headLength: number): Buffer {
  return joinFragments(ix.list, ids, today, head, headLength, LIST_TAIL);
}

/** Record `id`'s list item alone. */
export function listItem(ix: CollectionIndex, id: number, today: number): Buffer {
  return fragment(ix.list, id, today);
}

/** Record `id`'s whole 200 detail body as served on `today`. */
export function detailBody(ix: CollectionIndex, id: number, today: number): Buffer {
  return detailBytes(ix.list, ix.detail, ix.embeds, id, today);
}

/**
 * The collections with each one's embeds pointed at the index of the collection they embed from, in
 * this snapshot: those read from the boot cache hold only the ids, and one kept from the live
 * snapshot may point at an index rebuilt since (celebrities after an edit of movies: the same
 * records of the same celebrities.json, so the same ids and the same text). An index is never
 * changed in place (the live snapshot may still be serving it): one that points elsewhere is a copy.
 * An id past the records of the collection it reads is a bug: it throws.
 */
export function linkEmbeds<T extends Partial<Record<CollectionName, CollectionIndex>>>(collections: T): T {
  const out: Partial<Record<CollectionName, CollectionIndex>> = { ...collections };
  // Each pass points embeds at the indexes as the last one left them: an index copied in a pass is
  // met again by those that embed it (celebrities read movies, outfits read celebrities).
  for (let changed = true; changed; ) {
    changed = false;
    for (const ix of Object.values(out) as CollectionIndex[]) {
      if (ix.embeds.every((e) => e.index === out[e.target]) && listLinked(ix.def, ix.list, ix.embeds) === ix.list) continue;
      const embeds = ix.embeds.map((e) => {
        const target = out[e.target];
        if (target === undefined) throw new Error(`${ix.def.name} embeds ${e.target}, which the snapshot lacks`);
        for (let i = 0; i < e.ids.length; i++) if (e.ids[i]! >= target.size) throw new Error(`${ix.def.name} embeds ${e.target} record ${e.ids[i]}, past its ${target.size}`);
        return { ...e, index: target };
      });
      // Postings numbered by the embedded records' ids: one for each record of that collection.
      for (const t of ix.postings) {
        if (t.embed >= 0 && t.offsets.length > 1 && t.offsets.length - 1 !== embeds[t.embed]!.index.size) throw new Error(`${ix.def.name} filter ${t.param} has ${t.offsets.length - 1} postings for ${embeds[t.embed]!.index.size} ${embeds[t.embed]!.target}`);
      }
      out[ix.def.name] = { ...ix, embeds, list: listLinked(ix.def, ix.list, embeds) };
      changed = true;
    }
  }
  return out as T;
}

/**
 * `list` (a list arena of `def` with an embedded record kept as its id: fragments.ts ListEmbed) with
 * that embed's ids and source those of `embeds` (the index's): itself when they are, else a copy.
 * An index patched or renumbered may hold a list arena whose embed still has the ids it was made
 * with: linkEmbeds puts it right, as every snapshot is linked before it is served.
 */
export function listLinked(def: ResourceDefinition, list: Fragments, embeds: readonly Embed[]): Fragments {
  const le = list.embed;
  if (le == null) return list;
  const e = embeds[le.slot]!;
  const s = le.source;
  const want = e.index === null ? null : embedSource(e.index, listEmbedPlan(def)!.piece);
  const same = want === null || s === null ? want === s : s.bytes === want.bytes && s.starts === want.starts && s.cuts === want.cuts && s.from === want.from && s.to === want.to;
  if (le.ids === e.ids && same) return list;
  return { ...list, embed: { ...le, ids: e.ids, source: want } };
}

/** `ix` with its list arena's embed as its embeds are (listLinked): an index whose arenas or embeds were made again (patch.ts). */
export function withListLinked(ix: CollectionIndex): CollectionIndex {
  const list = listLinked(ix.def, ix.list, ix.embeds);
  return list === ix.list ? ix : { ...ix, list };
}

/** `ix` with its embeds reading the indexes `get` gives (null: none), its list arena's embed too. */
export function withTargets(ix: CollectionIndex, get: (name: CollectionName) => CollectionIndex | null | undefined): CollectionIndex {
  const embeds = ix.embeds.map((e) => ({ ...e, index: get(e.target) ?? null }));
  return { ...ix, embeds, list: listLinked(ix.def, ix.list, embeds) };
}

/** A bit per record id, set for the ids given. */
export function bitmapOf(ids: Int32Array, size: number): Uint32Array {
  const bits = new Uint32Array((size + 31) >>> 5);
  for (let i = 0; i < ids.length; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31);
  return bits;
}

/** Record ids ordered by `keys` (NaN or null: no value, last in either direction), ties by `_id`. */
function buildOrder(keys: Float64Array | readonly (string | null)[], dir: 'asc' | 'desc', idRank: Int32Array, scratch: Scratch): Int32Array {
  const sign = dir === 'asc' ? 1 : -1;
  if (keys instanceof Float64Array) return numberOrder(keys, sign, idRank, scratch);
  // (sort-order.ts textOrder gives this order too, but no sooner for texts that share long starts,
  // as the generated names and titles do.)
  const none = (k: number | string | null) => k === null || k !== k;
  return Int32Array.from({ length: keys.length }, (_, i) => i).sort((a, b) => {
    const ka = keys[a]!, kb = keys[b]!;
    if (ka !== kb) {
      const na = none(ka), nb = none(kb);
      if (na || nb) return na && nb ? idRank[a]! - idRank[b]! : na ? 1 : -1;
      return ka < kb ? -sign : sign;
    }
    return idRank[a]! - idRank[b]!;
  });
}

type EqualityFilter = Exclude<ResourceDefinition['filters'][number], { kind: 'range' }>;

/**
 * One filter's keys while records are added: key numbers in order of first appearance, and which
 * keys each record holds (CSR: record id -> key numbers). For a slug filter of an embedded record
 * (`embed` >= 0, the number of that embed), the key number is the embedded record's id (`addId`).
 */
/** `values` as an Int32Array: a view of `scratch`'s when given, else an array of its own. */
function int32Of(values: GrowingI32, scratch: Scratch | null): Int32Array {
  return values.copyTo(scratch === null ? new Int32Array(values.length) : scratch.int32(values.length));
}

export class PostingCollector {
  /** Key numbers by key (not a Map: string-keys.ts). */
  private readonly number = new StringKeys();
  private readonly counts: number[] = [];
  /**
   * The key numbers of every record, back to back, and where each record's start (CSR), in typed
   * chunks: as JS arrays, 8 bytes a number grown by copies, they lived through the whole build and
   * were promoted to the old generation with every copy (issue 19).
   */
  private readonly members: GrowingI32;
  private readonly perRecord: GrowingI32;
  /** The key numbers of the record being added (a key counts once per record). */
  private readonly current: number[] = [];

  constructor(
    readonly filter: EqualityFilter,
    readonly embed = -1,
    scratch: Scratch | null = null,
  ) {
    this.members = new GrowingI32(0, scratch);
    this.perRecord = new GrowingI32(0, scratch);
    this.perRecord.push(0);
  }

  /** Adds the next record, whose key is the record with id `id` (-1: none) of the embed's collection. */
  addId(id: number): void {
    if (id >= 0) {
      while (this.counts.length <= id) this.counts.push(0);
      this.counts[id]!++;
      this.members.push(id);
    }
    this.perRecord.push(this.members.length);
  }

  add(r: LinkedRecord): void {
    const raw = this.filter.get(r);
    // A single value is added as it is, without an array made for it.
    if (Array.isArray(raw)) for (let i = 0; i < raw.length; i++) this.addValue(raw[i]);
    else if (raw !== null && raw !== undefined) this.addValue(raw);
    this.endRecord();
  }

  /**
   * Adds the next record with the keys `keys`, as the table holds them (folded), in the record's
   * order: patch.ts makes a table again from the keys of another and of the records an edit changed.
   */
  addKeys(keys: readonly string[]): void {
    for (let i = 0; i < keys.length; i++) this.addKey(keys[i]!);
    this.endRecord();
  }

  private endRecord(): void {
    this.perRecord.push(this.members.length);
    this.current.length = 0;
  }

  /** Adds key `v` to the record being added. */
  private addValue(v: unknown): void {
    this.addKey(this.filter.kind === 'text' ? fold(String(v).trim()) : String(v));
  }

  /** Adds `key` (as the table holds it) to the record being added. */
  private addKey(key: string): void {
    const k = this.number.add(key);
    if (k === this.counts.length) this.counts.push(0);
    // The same key twice in one record counts once.
    const current = this.current;
    for (let m = 0; m < current.length; m++) if (current[m] === k) return;
    current.push(k);
    this.counts[k]!++;
    this.members.push(k);
  }

  /**
   * The table: ascending ids per key, the lists of more than SMALL_POSTING ids in every sort order
   * (one linear pass per sort: walk the order and append each id to the lists that hold it), and
   * bitmaps of the postings that hold at least 1/64 of the records (their bitmap is then at most 2x
   * the posting).
   */
  finish(size: number, orders: readonly Int32Array[], targetSize = 0, scratch: Scratch | null = null): PostingTable {
    // Numbered by an embedded record's id: a posting for each record of its collection (empty for some).
    while (this.embed >= 0 && this.counts.length < targetSize) this.counts.push(0);
    const keys = this.counts.length;
    // Working arrays of 4 bytes per record: from the build's scratch blocks when it has them (the
    // free of an array of its own, 1.08 MB for the 270k outfits at 100k, raised glibc's mmap
    // threshold past every later array of that size: scratch.ts).
    const perRecord = int32Of(this.perRecord, scratch);
    const member = int32Of(this.members, scratch);
    this.perRecord.release();
    this.members.release();
    const offsets = new Int32Array(keys + 1);
    for (let k = 0; k < keys; k++) offsets[k + 1] = offsets[k]! + this.counts[k]!;
    // Where each posting starts in a list of `total` ids; -1: not in that list.
    const fill = (order: Int32Array | null, starts: Int32Array, total: number): Int32Array => {
      const flat = new Int32Array(total);
      const cursor = starts.slice();
      for (let pos = 0; pos < size; pos++) {
        const id = order === null ? pos : order[pos]!;
        for (let m = perRecord[id]!; m < perRecord[id + 1]!; m++) {
          const c = cursor[member[m]!]!;
          if (c < 0) continue;
          flat[c] = id;
          cursor[member[m]!] = c + 1;
        }
      }
      return flat;
    };
    const ids = fill(null, offsets.subarray(0, keys), offsets[keys]!);
    let large = 0;
    for (let k = 0; k < keys; k++) if (offsets[k + 1]! - offsets[k]! > SMALL_POSTING) large++;
    const sortedKeys = new Int32Array(large);
    const sortedOffsets = new Int32Array(large + 1);
    const sortedStarts = new Int32Array(keys).fill(-1);
    for (let k = 0, j = 0; k < keys; k++) {
      const n = offsets[k + 1]! - offsets[k]!;
      if (n <= SMALL_POSTING) continue;
      sortedKeys[j] = k;
      sortedStarts[k] = sortedOffsets[j]!;
      sortedOffsets[j + 1] = sortedOffsets[j]! + n;
      j++;
    }
    const words = (size + 31) >>> 5;
    let dense = 0;
    for (let k = 0; k < keys; k++) if ((offsets[k + 1]! - offsets[k]!) * 64 >= size) dense++;
    // A table of small postings only (a celebrity's) keeps no number per posting.
    const bitsAt = new Int32Array(dense === 0 ? 0 : keys).fill(-1);
    dense = 0;
    if (bitsAt.length > 0) for (let k = 0; k < keys; k++) if ((offsets[k + 1]! - offsets[k]!) * 64 >= size) bitsAt[k] = dense++;
    const bits = new Uint32Array(dense * words);
    for (let k = 0; k < bitsAt.length; k++) {
      if (bitsAt[k]! < 0) continue;
      bits.set(bitmapOf(ids.subarray(offsets[k]!, offsets[k + 1]!), size), bitsAt[k]! * words);
    }
    const sorted = orders.map((order) => fill(order, sortedStarts, sortedOffsets[large]!));
    const keyTable = this.embed >= 0 ? null : stringTable(this.number.keys());
    return { param: this.filter.param, keys: keyTable, embed: this.embed, offsets, ids, sortedKeys, sortedOffsets, sorted, bitsAt, bits };
  }
}

/**
 * Builds a collection's index one record at a time: `add` keeps only what the index needs (the list
 * and detail-only JSON, sort keys, filter keys, search text, slug, range value), never the record, so
 * a loader can let each record go once added; `finish` sorts and builds the postings and search grams.
 * Record ids are the order of `add` calls.
 */
export interface IndexBuilder {
  add(r: LinkedRecord): void;
  finish(): CollectionIndex;
}

/**
 * The search index of a builder's records built elsewhere (build-split.ts: the main thread, idle
 * while the build thread finishes its last collection): asked between the steps of `finish`, before
 * its search index is built; true when it took the texts (every record's folded search text, to be
 * read at once: they change after), and `finish` then gives SEARCH_ELSEWHERE for the caller to replace.
 */
export type SearchElsewhere = (texts: TextSlices) => boolean;

/** The texts a SearchElsewhere is given: decoded slice by slice (the builder keeps them as units). */
export interface TextSlices {
  readonly length: number;
  slice(from: number, to: number): string[];
}

/** Values per chunk of a Chunked: 64 KB of a chunk's slots, under V8's large-object size (128 KB). */
const CHUNK_VALUES = 8192;

/**
 * A JS array pushed one value at a time in chunks, joined once by `finish` (one array of the exact
 * length), not grown by copies: pushed onto one array, the builder's per-record arrays (ids, search
 * texts, text sort keys) were copied about 20 times each on the way to 270k values at 100k, each copy
 * past 128 KB a large object promoted once it lived through a scavenge, then dead. (The ids and search
 * texts are units since: unit-texts.ts; the text sort keys are these.)
 */
export class Chunked<T> {
  private full: T[][] = [];
  private a: T[] = [];
  length = 0;
  push(v: T): void {
    if (this.a.length === CHUNK_VALUES) {
      this.full.push(this.a);
      this.a = [];
    }
    this.a.push(v);
    this.length++;
  }
  /** The values in one array; the chunks are let go (nothing may be pushed after). */
  finish(): T[] {
    const all = this.full.length === 0 ? this.a : this.full[0]!.concat(...this.full.slice(1), this.a);
    this.full = [];
    this.a = [];
    this.length = 0;
    return all;
  }
}

/** The search index of an index whose search was built elsewhere (SearchElsewhere), until the caller puts it in. */
export const SEARCH_ELSEWHERE: SearchIndex = Object.freeze({
  size: 0,
  unigrams: null!,
  bigrams: null!,
  trigrams: null!,
  groups: null!,
});

/** The indexes of other collections, by name, as a load has them (undefined: not indexed yet). */
export type Targets = (name: CollectionName) => CollectionIndex | undefined;

/**
 * `hint`: about how many records and bytes of source JSON to expect, so arrays start near their size.
 * `targets`: the indexes of the collections this one embeds from, when the load has them: the
 * embedded objects are then kept as their ids (Embed), else as text.
 */
export function indexBuilder(
  def: ResourceDefinition,
  hint: { readonly records: number; readonly bytes: number; readonly sources?: SourceDigester } = { records: 0, bytes: 0 },
  targets?: Targets,
  searchElsewhere?: SearchElsewhere,
): IndexBuilder {
  /** What the indexes take of each record, by groups (record-groups.ts): its _id and filter values, and its sort keys. */
  const digest = new IndexDigest();
  const sortDigest = new IndexDigest();
  /** Without a plan: both shapes whole (made on first use). */
  let shapes: ReturnType<typeof compileShapes> | null = null;
  const late = def.late ?? null;
  const plan = detailPlan(def, targets !== undefined);
  const embedded = plan !== null && targets !== undefined ? embedFields(def) : [];
  // Where the growing arrays' chunks and finish's working arrays come from: let go at the end of finish.
  const scratch = new Scratch();
  const embedIds = embedded.map(() => new GrowingI32(hint.records, scratch));
  /** The embedded collections' indexes, looked up at the first record (they are indexed before this one starts). */
  let embedTargets: CollectionIndex[] | null = null;
  const targetsOf = (): CollectionIndex[] =>
    embedded.map(({ target }) => {
      const t = targets!(target);
      if (t === undefined) throw new Error(`${def.name} embeds ${target}, which is not indexed before it`);
      return t;
    });
  const listLate = late && def.listFields.some((f) => f === late.field) ? late : null;
  // The list item's embedded record kept as its id, a gap where its text goes (fragments.ts ListEmbed).
  const listEmbed = plan !== null && targets !== undefined && listLate === null ? listEmbedPlan(def) : null;
  const list = new FragmentBuilder(hint.records, listLate, hint.bytes, scratch, listLate !== null || listEmbed !== null);
  const own = new FragmentBuilder(hint.records, plan === null && late && def.detailFields.some((f) => f === late.field) ? late : null, hint.bytes, scratch);
  const cutsPerRecord = plan?.listCuts.length ?? 0;
  const ownCutsPerRecord = plan === null ? 0 : plan.ownRuns - 1;
  // Pushed in order: record after record, each its `cutsPerRecord` (`ownCutsPerRecord`) cuts.
  const cuts = new GrowingI32(hint.records * cutsPerRecord, scratch);
  const ownCuts = new GrowingI32(hint.records * ownCutsPerRecord, scratch);
  const open = `{"success":true,"version":"v1","resource":"${def.name}","data":`;
  /** The records' `_id`s, as units (unit-texts.ts), for the ranks sort ties go by; their number is the records'. */
  const ids = new UnitTextsBuilder(scratch);
  /** Without a plan, the slugs, found in the list items at finish (slugTable); with one, where each starts in its list item, as written. */
  const slugs: string[] = [];
  const slugsAt = new GrowingI32(plan === null ? 0 : hint.records, scratch);
  /** The records' folded search texts, as units (unit-texts.ts): a string each lived from add to finish. */
  const texts = new UnitTextsBuilder(scratch);
  // The list field the search text is (search-text.ts), and whether each record's text is derived:
  // its value (folded), and its trigrams say where they stand (decidedByGrams).
  const sf = searchField(def);
  const searchFieldName = sf >= 0 ? (def.listFields[sf] as string) : null;
  const derivedBits = new GrowingI32(searchFieldName === null ? 0 : hint.records, scratch);
  const sortKeys = def.sorts.map((s) => (s.type === 'number' ? new GrowingF64(hint.records, scratch) : new Chunked<string | null>()));
  const rangeFilter = def.filters.find((f) => f.kind === 'range') ?? null;
  const rangeValues = new GrowingF64(rangeFilter ? hint.records : 0, scratch);
  const sorts = def.sorts;
  /** Per sort, an earlier sort with the same key function, or -1; and this record's keys. */
  const sharedKey = sorts.map((s, i) => sorts.findIndex((t, j) => j < i && t.key === s.key));
  const keyValues: unknown[] = sorts.map(() => null);
  // A slug filter of an embedded record: numbered by that record's id when this build has the embed.
  const collectors = def.filters.flatMap((f) => {
    if (f.kind === 'range') return [];
    const e = f.kind === 'slug' && f.embed !== undefined ? embedded.findIndex((x) => x.field === f.embed && !x.refs) : -1;
    return [new PostingCollector(f, e, scratch)];
  });

  // With a plan, the list item is serialized in runs cut at the plan's list cuts (and around the late
  // field), so the cut offsets are known as it is joined; the detail-only runs are serialized on their
  // own, and the fields a detail shares with its list item are never serialized twice.
  const lateAt = listLate ? def.listFields.findIndex((f) => f === listLate.field) : -1;
  const bounds = plan === null ? [] : [0, ...plan.listCuts, plan.listFields];
  // Each run written straight into the arena (json-bytes.ts): the comma before a run's first field is
  // its own, so a cut falls on it; the late field's key is written with the fields before it.
  // The writer of the fields that hold the slug notes where the slug's text starts as it writes it, so
  // the slug table needs neither the slugs kept to the end (a string each, promoted to the old
  // generation) nor a search of every list item for them (string-table.ts slugTableAt).
  const slugField = def.listFields.indexOf('slug');
  /** Where the slug of the record being added starts in the list arena (-1: not written yet). */
  let slugPos = -1;
  const fieldsWriter = (from: number, to: number, comma: boolean) => {
    if (slugField < from || slugField >= to) return compileFieldsWriter(def, def.listFields.slice(from, to), comma);
    const before = compileFieldsWriter(def, def.listFields.slice(from, slugField), comma);
    const withComma = comma || slugField > from;
    const after = compileFieldsWriter(def, def.listFields.slice(slugField, to), withComma);
    // `,"slug":"`: the key, then the string's opening quote (a slug is written as it is: [a-z0-9-]).
    const keyBytes = (withComma ? 1 : 0) + SLUG_KEY_BYTES;
    return (r: LinkedRecord, out: typeof list): void => {
      before(r, out);
      slugPos = out.at + keyBytes;
      after(r, out);
    };
  };
  const listRuns = bounds.slice(1).map((to, k) => {
    const from = bounds[k]!;
    // (A cut on either side of it: detailPlan.)
    if (listEmbed !== null && from === listEmbed.field) return { head: null, lateKey: null, tail: null };
    if (lateAt < from || lateAt >= to) return { head: fieldsWriter(from, to, k > 0), lateKey: null, tail: null };
    const key = Uint8Array.from(Buffer.from(`${k > 0 || lateAt > from ? ',' : ''}"${listLate!.field}":`, 'latin1'));
    return { head: fieldsWriter(from, lateAt, k > 0), lateKey: key, tail: fieldsWriter(lateAt + 1, to, true) };
  });
  // A refs run's holes: per record, how many (CSR), and per hole where it lies in the record's text.
  const refsStarts = embedded.map((e) => (e.refs ? new GrowingI32(hint.records + 1, scratch) : null));
  for (const g of refsStarts) g?.push(0);
  const refsAt = embedded.map((e) => (e.refs ? new GrowingI32(hint.records, scratch) : null));
  /**
   * A refs run's array, each item's leading fields left out where they are, byte for byte, the text
   * of its record's list item there (a hole: that record's id and where it goes); else written.
   */
  const refsWriter = (run: Extract<DetailPlan['runs'][number], { kind: 'refs' }>) => {
    const name = embedded[run.slot]!.field;
    const schema = def.derived.properties[name];
    if (schema?.type !== 'array' || schema.items.type !== 'object') throw new Error(`${def.name}.${name}: not an array of objects`);
    const props = Object.entries(schema.items.properties);
    const lead = run.piece[1] - run.piece[0];
    const leadWriter = propsWriter(props.slice(0, lead), false);
    const restWriter = propsWriter(props.slice(lead), true);
    const ids = embedIds[run.slot]!;
    const at = refsAt[run.slot]!;
    return (r: LinkedRecord, ownStart: number): void => {
      const t = (embedTargets ??= targetsOf())[run.slot]!;
      const v = r[name];
      if (!Array.isArray(v)) return writeAscii(own, EMPTY_ARRAY);
      writeByte(own, 0x5b); // [
      for (let i = 0; i < v.length; i++) {
        if (i > 0) writeByte(own, 0x2c); // ,
        const item = v[i] as Record<string, unknown> | null;
        if (item === null || typeof item !== 'object') {
          writeNull(own);
          continue;
        }
        writeByte(own, 0x7b); // {
        const slug = item.slug;
        const tid = typeof slug === 'string' ? slugId(t, slug) : -1;
        const buf = own.buf;
        const from = own.pos;
        const hole = own.at;
        leadWriter(own, item);
        if (tid >= 0 && own.buf === buf) {
          const [a, b] = pieceBounds(t, run.piece, tid);
          if (b - a === own.pos - from && t.list.bytes.compare(own.buf, from, own.pos, a, b) === 0) {
            own.pos = from;
            ids.push(tid);
            at.push(hole - ownStart);
          }
        }
        restWriter(own, item);
        writeByte(own, 0x7d); // }
      }
      writeByte(own, 0x5d); // ]
    };
  };
  // An own run's first key is the same for every record: the plan keeps it (its `key`), the arena not.
  const ownRuns: ((r: LinkedRecord, ownStart: number) => void)[] =
    plan === null
      ? []
      : plan.runs.flatMap((run) => {
          if (run.kind === 'refs') return [refsWriter(run)];
          if (run.kind !== 'own') return [];
          const write = compileFieldsWriter(def, def.detailFields.slice(run.from, run.to), run.from > 0, false);
          return [(r: LinkedRecord) => write(r, own)];
        });

  const add = (r: LinkedRecord): void => {
    const id = ids.length;
    const key = late ? late.key(r) : null;
    digest.begin();
    sortDigest.begin();
    if (plan === null) {
      const json = (shapes ??= compileShapes(def))(r);
      list.add(json.list[0], json.list[1], key);
      if (json.detail[1] === null) own.add(open + json.detail[0] + '}');
      else own.add(open + json.detail[0], json.detail[1] + '}', key);
    } else {
      const start = list.at;
      list.begin();
      writeByte(list, 0x7b); // {
      for (let k = 0; k < listRuns.length; k++) {
        const run = listRuns[k]!;
        if (k > 0) cuts.push(list.at - start);
        if (run.head === null) {
          list.gap(null);
          continue;
        }
        run.head(r, list);
        if (run.lateKey !== null) {
          writeAscii(list, run.lateKey);
          list.gap(key);
          run.tail!(r, list);
        }
      }
      writeByte(list, 0x7d); // }
      if (slugPos < 0 || typeof r.slug !== 'string') throw new Error(`list item ${id} does not show its slug ${JSON.stringify(r.slug)}`);
      slugsAt.push(slugPos - start);
      slugPos = -1;
      // The detail-only runs, back to back; its late value (if any) lies in a list run, so is not here.
      const ownStart = own.at;
      own.begin();
      for (let k = 0; k < ownRuns.length; k++) {
        if (k > 0) ownCuts.push(own.at - ownStart);
        ownRuns[k]!(r, ownStart);
      }
    }
    if (embedded.length > 0) {
      const ts = (embedTargets ??= targetsOf());
      for (let k = 0; k < embedded.length; k++) {
        if (embedded[k]!.refs) {
          refsStarts[k]!.push(embedIds[k]!.length);
          continue;
        }
        const v = r[embedded[k]!.field] as { slug?: unknown } | null | undefined;
        const slug = v !== null && typeof v === 'object' ? v.slug : undefined;
        const tid = typeof slug === 'string' ? slugId(ts[k]!, slug) : -1;
        // A linked record embeds a record that exists (references are checked before linking).
        if (typeof slug === 'string' && tid < 0) throw new Error(`${def.name} record ${id} embeds ${embedded[k]!.target} ${JSON.stringify(slug)}, not in its index`);
        embedIds[k]!.push(tid);
      }
    }
    ids.add(r._id as string);
    if (plan === null) slugs.push(r.slug);
    // (The slug, search text, its `derived` bit, embedded ids and range value are compared as the
    // index holds them (patch.ts): the digests cover what it does not keep per record.)
    digest.str(r._id as string);
    // The search text is usually a field that a text sort also reads (the title): folded once.
    const raw = def.searchText(r) ?? '';
    const text = fold(raw);
    texts.add(text);
    if (searchFieldName !== null) {
      const v = r[searchFieldName];
      derivedBits.push((v === raw || text === fold(typeof v === 'string' ? v : '')) && decidedByGrams(text) ? 1 : 0);
    }
    // A loop, not forEach: a closure per record was a measurable part of `add`.
    for (let i = 0; i < sorts.length; i++) {
      const s = sorts[i]!;
      // Sorts with one key function (latest and oldest) compute it once (a Date.parse each).
      const k = (keyValues[i] = sharedKey[i]! >= 0 ? keyValues[sharedKey[i]!] : s.key(r));
      if (s.type === 'number') {
        const v = k === null || k === undefined ? NaN : Number(k);
        (sortKeys[i] as GrowingF64).push(v);
        if (sharedKey[i]! < 0) sortDigest.num(v);
      } else {
        const same = k === raw && k !== null && k !== undefined;
        const v = k === null || k === undefined ? null : same ? text : fold(String(k));
        (sortKeys[i] as Chunked<string | null>).push(v);
        // The search text itself (a title sort): compared as the index holds it (patch.ts).
        if (sharedKey[i]! < 0) same ? sortDigest.int(-3) : sortDigest.str(v);
      }
    }
    if (rangeFilter) {
      const v = rangeFilter.get(r);
      rangeValues.push(typeof v === 'number' ? v : NaN);
    }
    for (let i = 0; i < collectors.length; i++) {
      const c = collectors[i]!;
      if (c.embed < 0) {
        c.add(r);
        digest.value(c.filter.get(r));
        continue;
      }
      const tid = embedIds[c.embed]!.last;
      // The filter's key is the embedded record's slug, by the definition (`embed`): checked here
      // against the slug the embed's id was found by (above), so it is that record's.
      const key = c.filter.get(r);
      const v = r[embedded[c.embed]!.field] as { slug?: unknown } | null | undefined;
      const slug = v !== null && typeof v === 'object' ? v.slug : undefined;
      if ((key === null || key === undefined) !== (tid < 0) || (tid >= 0 && slug !== key)) {
        throw new Error(`${def.name} record ${id}: filter ${c.filter.param} is not the slug of the ${embedded[c.embed]!.target} record it embeds`);
      }
      c.addId(tid);
    }
    digest.end();
    sortDigest.end();
  };

  const finish = (): CollectionIndex => {
    const size = ids.length;
    if (cuts.length !== size * cutsPerRecord || ownCuts.length !== size * ownCutsPerRecord) throw new Error(`${def.name}: list or detail cuts out of step with the records`);
    // Asked before each step up to the search index's, so the texts go as soon as there is a taker.
    let elsewhere = false;
    const all = texts.finish(scratch);
    const slices: TextSlices = { length: size, slice: (from, to) => Array.from({ length: Math.max(0, Math.min(to, size) - from) }, (_, i) => textOf(all, from + i)) };
    const handOff = () => (elsewhere ||= searchElsewhere?.(slices) === true);
    handOff();
    const idRank = idRanks(ids.finish(scratch), scratch);
    const orders: Int32Array[] = [];
    const ranks: Int32Array[] = [];
    const keptKeys: (Float64Array | null)[] = [];
    // A number sort with the same key as a later one the other way (latest and oldest): both orders
    // from one sort of the keys (sort-order.ts numberOrders), the later one's kept here.
    const pairedOrders: (Int32Array | null)[] = sorts.map(() => null);
    const pairOf = (i: number) => sorts.findIndex((t, j) => sharedKey[j] === i && t.type === 'number' && sorts[i]!.type === 'number' && t.dir !== sorts[i]!.dir);
    def.sorts.forEach((s, i) => {
      handOff();
      const k = sortKeys[i]!;
      const keys = k instanceof GrowingF64 ? k.copyTo(scratch.float64(k.length)) : k.finish();
      if (k instanceof GrowingF64) k.release();
      keptKeys.push(s.kept === true && keys instanceof Float64Array ? keys.slice() : null);
      const pair = pairOf(i);
      let order = pairedOrders[i] ?? null;
      if (order === null && pair >= 0 && keys instanceof Float64Array) {
        const [up, down] = numberOrders(keys, idRank, scratch);
        order = (s.dir === 'asc' ? up : down)!;
        pairedOrders[pair] = (s.dir === 'asc' ? down : up)!;
      } else if (order === null) order = buildOrder(keys, s.dir, idRank, scratch);
      const rank = new Int32Array(size);
      for (let pos = 0; pos < size; pos++) rank[order[pos]!] = pos;
      orders.push(order);
      ranks.push(rank);
    });
    let range: RangeIndex | null = null;
    if (rangeFilter && rangeFilter.kind === 'range') {
      const byId = rangeValues.finish();
      let n = 0;
      for (let i = 0; i < size; i++) if (byId[i] === byId[i]) n++;
      const withValue = new Int32Array(n);
      for (let i = 0, at = 0; i < size; i++) if (byId[i] === byId[i]) withValue[at++] = i;
      withValue.sort((a, b) => byId[a]! - byId[b]! || a - b);
      range = { param: rangeFilter.minParam, ids: withValue, values: Float64Array.from(withValue, (i) => byId[i]!), byId };
    }
    handOff();
    const postings = collectors.map((c) => c.finish(size, orders, c.embed >= 0 && size > 0 ? (embedTargets ??= targetsOf())[c.embed]!.size : 0, scratch));
    handOff();
    const listFragments = list.finish();
    const detail: Details = { plan, own: own.finish(), cuts: cuts.finishRecordOffsets(), ownCuts: ownCuts.finishRecordOffsets() };
    handOff();
    const slugIndex = plan === null ? slugTable(listFragments.bytes, listFragments.starts, slugs) : slugTableAt(listFragments.bytes, listFragments.starts, slugsAt.finishRecordOffsets());
    slugs.length = 0;
    // (Of the texts as they were added: some are left out of searchText below.)
    const search = elsewhere ? SEARCH_ELSEWHERE : buildSearchIndex(all);
    // A text no search reads but a long query's, and a list field's value, is decoded from the
    // list item by that query instead of being kept twice (search-text.ts).
    let searchFrom: SearchFrom | null = null;
    if (searchFieldName !== null) {
      const derived = new Uint32Array((size + 31) >>> 5);
      const bits = derivedBits.copyTo(scratch.int32(size));
      derivedBits.release();
      for (let id = 0; id < size; id++) if (bits[id] !== 0) derived[id >>> 5]! |= 1 << (id & 31);
      searchFrom = { field: sf, derived };
    }
    const searchText = stringTableOfUnits(all.units, all.starts, searchFrom === null ? null : searchFrom.derived);
    const ts = embedded.length > 0 && size > 0 ? (embedTargets ??= targetsOf()) : null;
    const embeds: Embed[] = embedded.map(({ field, target, refs }, k) => ({
      field,
      target,
      ids: embedIds[k]!.finish(),
      index: ts?.[k] ?? null,
      starts: refs ? refsStarts[k]!.finishU32() : null,
      at: refs ? refsAt[k]!.finishRecordOffsets() : null,
    }));
    // Every growing array is finished (each let go of its chunks) and the orders are built.
    scratch.release();
    const e = listEmbed === null ? null : embeds[listEmbed.slot]!;
    return {
      def,
      size,
      slugs: slugIndex,
      list:
        e === null
          ? listFragments
          : { ...listFragments, embed: { head: listEmbed!.head, slot: listEmbed!.slot, ids: e.ids, source: e.index === null ? null : embedSource(e.index, listEmbed!.piece) } },
      detail,
      embeds,
      orders,
      ranks,
      sortKeys: keptKeys,
      postings,
      range,
      searchText,
      searchFrom,
      search,
      groups: { sources: hint.sources?.finish(size) ?? null, keys: digest.finish(), sorts: sortDigest.finish() },
    };
  };
  return { add, finish };
}

export function buildIndex(def: ResourceDefinition, records: readonly LinkedRecord[], targets?: Targets): CollectionIndex {
  const builder = indexBuilder(def, { records: records.length, bytes: 0 }, targets);
  for (const r of records) builder.add(r);
  return builder.finish();
}
