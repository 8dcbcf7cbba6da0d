// Load-time work so that requests only join precomputed pieces (STYLE habit 2): a slug hash table, one
// order per sort value, folded value -> ids postings per filter, folded search text, serialized JSON,
// all in typed arrays; and the functions through which the server reads them.
import type { LinkedRecord, ResourceDefinition } from '../resources/types.ts';
import { fold } from './fold.ts';
import { fragment, FragmentBuilder, fragmentLength, writeFragment, type Fragments } from './fragments.ts';
import { buildSearchIndex, type SearchIndex } from './search-index.ts';
import { compileShapes } from './shape.ts';
import { count, includes, lookup, stringAt, stringTable, type StringTable } from './string-table.ts';

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
 * ascending ids `ids[offsets[k], offsets[k + 1])`; the same lists in each sort order lie at the same
 * offsets in `sorted`; a posting holding at least 1/64 of the records also has a bitmap, words
 * `bits[bitsAt[k] * words, ...)`. No Map entry and no object per key: a key per celebrity is three
 * numbers, and the boot cache maps the arrays back as they are.
 */
export interface PostingTable {
  readonly param: string;
  readonly keys: StringTable;
  readonly offsets: Int32Array;
  readonly ids: Int32Array;
  /** Per sort of the definition (in its order): the lists in that order, at the offsets of `ids`. */
  readonly sorted: readonly Int32Array[];
  /** Posting -> its bitmap's number in `bits`, or -1. */
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
  /** Slug of record i is string i; its hash table finds the id of a slug. */
  readonly slugs: StringTable;
  /** Each record's list-shape JSON. */
  readonly list: Fragments;
  /** Each record's whole 200 detail response body. */
  readonly detail: Fragments;
  /** Per sort of the definition (in its order): record ids in that order. */
  readonly orders: readonly Int32Array[];
  /** Per sort: the position of each record id in that order. */
  readonly ranks: readonly Int32Array[];
  /** One table per equality filter, in the definition's order. */
  readonly postings: readonly PostingTable[];
  readonly range: RangeIndex | null;
  /** Folded search text of record i is string i (no hash table). */
  readonly searchText: StringTable;
  /** 1-, 2- and 3-gram postings over the search texts. */
  readonly search: SearchIndex;
}

const EMPTY = new Int32Array(0);

/** The record id of `slug`, or -1. */
export function slugId(ix: CollectionIndex, slug: string): number {
  return lookup(ix.slugs, slug);
}

/** The slug of record `id` (decoded; not for the request path). */
export function slugOf(ix: CollectionIndex, id: number): string {
  return stringAt(ix.slugs, id);
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
  const k = t === null ? -1 : lookup(t.keys, key);
  return k === -1 ? EMPTY : t!.ids.subarray(t!.offsets[k]!, t!.offsets[k + 1]!);
}

/** The filter keys of `param`, in table order (decoded; for tests and tools). */
export function postingKeys(ix: CollectionIndex, param: string): string[] {
  const t = table(ix, param);
  return t === null ? [] : Array.from({ length: count(t.keys) }, (_, k) => stringAt(t.keys, k));
}

/**
 * The table and posting number of `ids` when it is a whole posting that postingIds returned: found
 * by where it lies in the table's ids (its offset), not by object identity, so the views made per
 * request and those read back from the boot cache are recognized alike.
 */
function postingOf(ix: CollectionIndex, ids: Int32Array): { t: PostingTable; k: number } | null {
  if (ids.length === 0) return null;
  for (const t of ix.postings) {
    const all = t.ids;
    if (ids.buffer !== all.buffer || ids.byteOffset < all.byteOffset || ids.byteOffset >= all.byteOffset + all.byteLength) continue;
    const start = (ids.byteOffset - all.byteOffset) >>> 2;
    const offsets = t.offsets;
    let lo = 0;
    let hi = offsets.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = offsets[mid]!;
      if (v === start) return offsets[mid + 1]! - start === ids.length ? { t, k: mid } : null;
      if (v < start) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }
  return null;
}

/** The bitmap of a dense posting (a bit per record id), or null for any other set. */
export function postingBits(ix: CollectionIndex, ids: Int32Array): Uint32Array | null {
  const p = postingOf(ix, ids);
  if (p === null) return null;
  const n = p.t.bitsAt[p.k]!;
  if (n < 0) return null;
  const words = (ix.size + 31) >>> 5;
  return p.t.bits.subarray(n * words, (n + 1) * words);
}

/** A posting's ids in the order of `sort`, or null when `ids` is not a posting. */
export function postingInOrder(ix: CollectionIndex, ids: Int32Array, sort: string): Int32Array | null {
  const p = postingOf(ix, ids);
  if (p === null) return null;
  const sorted = p.t.sorted[sortNumber(ix, sort)];
  return sorted === undefined ? null : sorted.subarray(p.t.offsets[p.k]!, p.t.offsets[p.k + 1]!);
}

/** True when the folded search text of record `id` contains the folded `text`. */
export function searchTextIncludes(ix: CollectionIndex, id: number, text: string): boolean {
  return includes(ix.searchText, id, text);
}

/** Bytes of record `id`'s list item as served on day `today`. */
export function listLength(ix: CollectionIndex, id: number, today: number): number {
  return fragmentLength(ix.list, id, today);
}

/** Copies record `id`'s list item as served on `today` into `out` at `pos`; returns the position after it. */
export function writeList(ix: CollectionIndex, id: number, today: number, out: Buffer, pos: number): number {
  return writeFragment(ix.list, id, today, out, pos);
}

/** Record `id`'s list item alone. */
export function listItem(ix: CollectionIndex, id: number, today: number): Buffer {
  return fragment(ix.list, id, today);
}

/** Record `id`'s whole 200 detail body as served on `today`. */
export function detailBody(ix: CollectionIndex, id: number, today: number): Buffer {
  return fragment(ix.detail, id, today);
}

/** The list JSON and whole detail bodies of every record, each shape with a gap where its late field goes. */
function serialize(def: ResourceDefinition, records: readonly LinkedRecord[]): { list: Fragments; detail: Fragments } {
  const shapes = compileShapes(def);
  const late = def.late ?? null;
  const list = new FragmentBuilder(records.length, late && def.listFields.includes(late.field) ? late : null);
  const detail = new FragmentBuilder(records.length, late && def.detailFields.includes(late.field) ? late : null);
  const open = `{"success":true,"version":"v1","resource":"${def.name}","data":`;
  for (const r of records) {
    const json = shapes(r);
    const key = late ? late.key(r) : null;
    list.add(json.list[0], json.list[1], key);
    if (json.detail[1] === null) detail.add(open + json.detail[0] + '}');
    else detail.add(open + json.detail[0], json.detail[1] + '}', key);
  }
  return { list: list.finish(), detail: detail.finish() };
}

/** Ascending rank of each record's `_id`, so ties break on `_id` with an integer compare. */
function idRanks(records: readonly LinkedRecord[]): Int32Array {
  const byId = Int32Array.from(records.keys()).sort((a, b) => (records[a]!._id < records[b]!._id ? -1 : 1));
  const rank = new Int32Array(records.length);
  byId.forEach((id, pos) => (rank[id] = pos));
  return rank;
}

function buildOrder(def: ResourceDefinition, sortName: string, records: readonly LinkedRecord[], idRank: Int32Array): Int32Array {
  const sort = def.sorts.find((s) => s.name === sortName)!;
  const sign = sort.dir === 'asc' ? 1 : -1;
  const keys = records.map((r) => {
    const k = sort.key(r);
    return k === null || k === undefined ? null : sort.type === 'text' ? fold(String(k)) : Number(k);
  });
  return Int32Array.from(records.keys()).sort((a, b) => {
    const ka = keys[a]!, kb = keys[b]!;
    if (ka !== kb) {
      if (ka === null) return 1; // nulls last in either direction
      if (kb === null) return -1;
      return ka < kb ? -sign : sign;
    }
    return idRank[a]! - idRank[b]!;
  });
}

/** A bit per record id, set for the ids given. */
export function bitmapOf(ids: Int32Array, size: number): Uint32Array {
  const bits = new Uint32Array((size + 31) >>> 5);
  for (let i = 0; i < ids.length; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31);
  return bits;
}

/** The keys of one filter's value of each record, as the postings index them (folded text, or as given). */
function filterKeys(filter: ResourceDefinition['filters'][number], r: LinkedRecord): Set<string> {
  if (filter.kind === 'range') return new Set();
  const raw = filter.get(r);
  const values = raw === null || raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return new Set(values.map((v) => (filter.kind === 'text' ? fold(String(v).trim()) : String(v))));
}

/**
 * One filter's postings: keys in order of first appearance, ascending ids per key (CSR), the same
 * lists in every sort order (one linear pass per sort: walk the order and append each id to the
 * lists that hold it), and bitmaps of the postings that hold at least 1/64 of the records (their
 * bitmap is then at most 2x the posting).
 */
function buildPostingTable(param: string, filter: ResourceDefinition['filters'][number], records: readonly LinkedRecord[], orders: readonly Int32Array[]): PostingTable {
  const size = records.length;
  const keyNumber = new Map<string, number>();
  // Which lists each record is in, as CSR: record id -> key numbers.
  const perRecord = new Int32Array(size + 1);
  const memberList: number[] = [];
  const counts: number[] = [];
  records.forEach((r, id) => {
    for (const key of filterKeys(filter, r)) {
      let k = keyNumber.get(key);
      if (k === undefined) {
        keyNumber.set(key, (k = counts.length));
        counts.push(0);
      }
      counts[k]!++;
      memberList.push(k);
    }
    perRecord[id + 1] = memberList.length;
  });
  const member = Int32Array.from(memberList);
  const keys = counts.length;
  const offsets = new Int32Array(keys + 1);
  for (let k = 0; k < keys; k++) offsets[k + 1] = offsets[k]! + counts[k]!;
  const fill = (order: Int32Array): Int32Array => {
    const flat = new Int32Array(offsets[keys]!);
    const cursor = offsets.slice(0, keys);
    for (let pos = 0; pos < order.length; pos++) {
      const id = order[pos]!;
      for (let m = perRecord[id]!; m < perRecord[id + 1]!; m++) flat[cursor[member[m]!]!++] = id;
    }
    return flat;
  };
  const ids = fill(Int32Array.from(records.keys()));
  const bitsAt = new Int32Array(keys).fill(-1);
  const words = (size + 31) >>> 5;
  let dense = 0;
  for (let k = 0; k < keys; k++) if ((offsets[k + 1]! - offsets[k]!) * 64 >= size) bitsAt[k] = dense++;
  const bits = new Uint32Array(dense * words);
  for (let k = 0; k < keys; k++) {
    if (bitsAt[k]! < 0) continue;
    bits.set(bitmapOf(ids.subarray(offsets[k]!, offsets[k + 1]!), size), bitsAt[k]! * words);
  }
  return { param, keys: stringTable([...keyNumber.keys()]), offsets, ids, sorted: orders.map(fill), bitsAt, bits };
}

function buildRange(def: ResourceDefinition, records: readonly LinkedRecord[]): RangeIndex | null {
  const filter = def.filters.find((f) => f.kind === 'range');
  if (!filter) return null;
  const vals = records.map((r) => filter.get(r));
  const ids = Int32Array.from(records.keys())
    .filter((id) => typeof vals[id] === 'number')
    .sort((a, b) => vals[a]! - vals[b]! || a - b);
  const byId = Float64Array.from(vals, (v) => (typeof v === 'number' ? v : NaN));
  return { param: filter.minParam, ids, values: Float64Array.from(ids, (id) => vals[id]!), byId };
}

export function buildIndex(def: ResourceDefinition, records: readonly LinkedRecord[]): CollectionIndex {
  const idRank = idRanks(records);
  const orders: Int32Array[] = [];
  const ranks: Int32Array[] = [];
  for (const sort of def.sorts) {
    const order = buildOrder(def, sort.name, records, idRank);
    const rank = new Int32Array(order.length);
    order.forEach((id, pos) => (rank[id] = pos));
    orders.push(order);
    ranks.push(rank);
  }
  const { list, detail } = serialize(def, records);
  const texts = records.map((r) => fold(def.searchText(r) ?? ''));
  const postings: PostingTable[] = [];
  for (const filter of def.filters) if (filter.kind !== 'range') postings.push(buildPostingTable(filter.param, filter, records, orders));
  return {
    def,
    size: records.length,
    slugs: stringTable(records.map((r) => r.slug)),
    list,
    detail,
    orders,
    ranks,
    postings,
    range: buildRange(def, records),
    searchText: stringTable(texts, false),
    search: buildSearchIndex(texts),
  };
}
