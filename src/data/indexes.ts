// Load-time work so that requests only join precomputed pieces (STYLE habit 2): slug map, one order
// per sort value, folded value -> ids postings per filter, folded search text, serialized JSON.
import type { LinkedRecord, ResourceDefinition } from '../resources/types.ts';
import { fold } from './fold.ts';
import { FragmentBuilder, type Fragments } from './fragments.ts';
import { buildSearchIndex, type SearchIndex } from './search-index.ts';
import { compileShapes } from './shape.ts';

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

export interface CollectionIndex {
  readonly def: ResourceDefinition;
  readonly size: number;
  readonly slugs: ReadonlyMap<string, number>;
  /** Each record's list-shape JSON. */
  readonly list: Fragments;
  /** Each record's whole 200 detail response body. */
  readonly detail: Fragments;
  /** Sort name -> record ids in that order. */
  readonly orders: ReadonlyMap<string, Int32Array>;
  /** Sort name -> position of each record id in that order. */
  readonly ranks: ReadonlyMap<string, Int32Array>;
  /** Filter param -> key (folded value, slug, enum value, 'true'/'false') -> ascending ids. */
  readonly postings: ReadonlyMap<string, ReadonlyMap<string, Int32Array>>;
  /** A bitmap (bit per record id) of each dense posting, so intersecting with it is a bit test. */
  readonly bits: ReadonlyMap<Int32Array, Uint32Array>;
  /** Each posting's ids in each sort order (posting -> sort name -> ids): a one-filter page is a slice. */
  readonly inOrder: ReadonlyMap<Int32Array, ReadonlyMap<string, Int32Array>>;
  readonly range: RangeIndex | null;
  /** Folded search text by id. */
  readonly searchText: readonly string[];
  /** 1-, 2- and 3-gram postings over `searchText`. */
  readonly search: SearchIndex;
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

function buildPostings(def: ResourceDefinition, records: readonly LinkedRecord[]): Map<string, Map<string, Int32Array>> {
  const postings = new Map<string, Map<string, Int32Array>>();
  for (const filter of def.filters) {
    if (filter.kind === 'range') continue;
    const lists = new Map<string, number[]>();
    records.forEach((r, id) => {
      const raw = filter.get(r);
      const values = raw === null || raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
      const keys = new Set(values.map((v) => (filter.kind === 'text' ? fold(String(v).trim()) : String(v))));
      for (const key of keys) {
        let list = lists.get(key);
        if (!list) lists.set(key, (list = []));
        list.push(id);
      }
    });
    postings.set(filter.param, new Map([...lists].map(([k, ids]) => [k, Int32Array.from(ids)])));
  }
  return postings;
}

/**
 * Every posting of one filter in every sort order, in one linear pass per sort: walk the order and
 * append each id to the lists that hold it. The lists share one flat array per sort.
 */
function postingsInOrder(byKey: ReadonlyMap<string, Int32Array>, orders: ReadonlyMap<string, Int32Array>, size: number): Map<Int32Array, Map<string, Int32Array>> {
  const lists = [...byKey.values()];
  const offsets = new Int32Array(lists.length + 1);
  lists.forEach((ids, k) => (offsets[k + 1] = offsets[k]! + ids.length));
  // Which lists each record is in, as CSR: record id -> list numbers.
  const perRecord = new Int32Array(size + 1);
  for (const ids of lists) for (let i = 0; i < ids.length; i++) perRecord[ids[i]! + 1]!++;
  for (let id = 0; id < size; id++) perRecord[id + 1]! += perRecord[id]!;
  const member = new Int32Array(perRecord[size]!);
  const fill = perRecord.slice(0, size);
  lists.forEach((ids, k) => {
    for (let i = 0; i < ids.length; i++) member[fill[ids[i]!]!++] = k;
  });
  const out = new Map<Int32Array, Map<string, Int32Array>>(lists.map((ids) => [ids, new Map()]));
  for (const [sort, order] of orders) {
    const flat = new Int32Array(offsets[lists.length]!);
    const cursor = offsets.slice(0, lists.length);
    for (let pos = 0; pos < order.length; pos++) {
      const id = order[pos]!;
      for (let m = perRecord[id]!; m < perRecord[id + 1]!; m++) flat[cursor[member[m]!]!++] = id;
    }
    lists.forEach((ids, k) => out.get(ids)!.set(sort, flat.subarray(offsets[k]!, offsets[k + 1]!)));
  }
  return out;
}

/** Bitmaps of the postings that hold at least 1/64 of the records: their bitmap is at most 2x the posting. */
/** A bit per record id, set for the ids given. */
export function bitmapOf(ids: Int32Array, size: number): Uint32Array {
  const bits = new Uint32Array((size + 31) >>> 5);
  for (let i = 0; i < ids.length; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31);
  return bits;
}

function densePostingBits(postings: ReadonlyMap<string, ReadonlyMap<string, Int32Array>>, size: number): Map<Int32Array, Uint32Array> {
  const bits = new Map<Int32Array, Uint32Array>();
  for (const byKey of postings.values()) {
    for (const ids of byKey.values()) {
      if (ids.length * 64 >= size) bits.set(ids, bitmapOf(ids, size));
    }
  }
  return bits;
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
  const orders = new Map<string, Int32Array>();
  const ranks = new Map<string, Int32Array>();
  for (const sort of def.sorts) {
    const order = buildOrder(def, sort.name, records, idRank);
    const rank = new Int32Array(order.length);
    order.forEach((id, pos) => (rank[id] = pos));
    orders.set(sort.name, order);
    ranks.set(sort.name, rank);
  }
  const { list, detail } = serialize(def, records);
  const searchText = records.map((r) => fold(def.searchText(r) ?? ''));
  const postings = buildPostings(def, records);
  return {
    def,
    size: records.length,
    slugs: new Map(records.map((r, id) => [r.slug, id])),
    list,
    detail,
    orders,
    ranks,
    postings,
    bits: densePostingBits(postings, records.length),
    inOrder: new Map([...postings.values()].flatMap((byKey) => [...postingsInOrder(byKey, orders, records.length)])),
    range: buildRange(def, records),
    searchText,
    search: buildSearchIndex(searchText),
  };
}
