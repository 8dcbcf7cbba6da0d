// Records inserted or removed in the middle of a data file (issue 19: one outfit inserted at 100k
// built 270k outfits, 23 s, 5.3x the file's baseline). Every later record's number moves, so the
// groups of RECORD_GROUP records the file is digested by (record-groups.ts) differ from the point of
// the edit on, and patch.ts, which takes record i of the file as record i before it, sees them all
// changed. Here the file's records, as read, are matched against the groups of the index before the
// edit wherever they stand (ShiftMatcher): a run of records whose bytes have the digest of an old group
// is that group, moved by a shift (new number - old number); the first record where that stops is
// found again by its slug (or at the next old group under the same shift). The records in no such run
// are parsed, validated and linked as a full load would take them; the others are the old records,
// numbered anew. Then every part of the index is laid out again from the old one and those records
// (shiftedIndex): arenas and per-record offsets copied by runs, orders with the old records in their
// old relative places and the new ones put where their keys go, filter tables, range and search index
// made again from every record's key and text (as a full build makes them, so numbered as it numbers
// them), slug slots remade. test/data/patch.test.ts compares every answer with a full build's.
import { createHash, type Hash } from 'node:crypto';
import type { CollectionName, LinkContext, LinkedRecord, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import type { Details, Embed } from './detail-layout.ts';
import { offsetsOf, type Fragments, type RecordOffsets } from './fragments.ts';
import { fold } from './fold.ts';
import { indexBuilder, PostingCollector, searchTextOf, slugId, slugOf, type CollectionIndex, type PostingTable, type RangeIndex, type Targets } from './indexes.ts';
import { memberKey, memberString } from './json-bytes.ts';
import { knownCollection } from './known.ts';
import type { KnownCollections } from './load.ts';
import { groupCount, RECORD_GROUP } from './record-groups.ts';
import { buildSearchIndex, searchIndexRenumbered, type TextAt } from './search-index.ts';
import type { SearchFrom } from './search-text.ts';
import { slugTableAt, stringAt, type StringTable } from './string-table.ts';
import { checkObject, type Findings } from './validate.ts';

/**
 * Whether words `2g, 2g + 1` of a group's index or sort digests (record-groups.ts RecordGroups keys,
 * sorts) are unknown: a group of records numbered anew after a shift holds other records than any
 * group before (its records' values were not read), so a later edit of it compares each record's.
 */
export const unknownDigest = (words: Uint32Array, g: number): boolean => words[2 * g] === 0 && words[2 * g + 1] === 0;

/** A record kept from before an edit: its number now, its number before, and how many follow it in both. */
export interface Run {
  readonly at: number;
  readonly from: number;
  readonly count: number;
}

/** What ShiftMatcher found: the runs of old records (ascending in both numberings), and the other records' numbers and texts. */
export interface Matched {
  readonly runs: readonly Run[];
  readonly ids: readonly number[];
  readonly texts: readonly string[];
}

type Piece = { bytes: Uint8Array; start: number; end: number };

/**
 * Matches the records of a data file, fed as the reader cuts them (records.ts `onSlices`, in order),
 * against the groups of `old` (the index of the file before an edit): see the top of the file. A
 * group under shift 0 takes the digest the caller's own SourceDigester gives the same records
 * (`fixed`, called before the records of that group are fed here: no second hash of the bytes).
 */
export class ShiftMatcher {
  private readonly n: number;
  private readonly sources: Uint32Array;
  private readonly slugKey = memberKey('slug');
  /** Records fed. */
  private count = 0;
  /** The shift of the group being matched (new number - old number), or null: looking for one. */
  private shift: number | null = 0;
  /** The last shift a group matched under (tried first at each old group's start). */
  private lastShift = 0;
  /** Old records before this one are matched or passed. */
  private oldNext = 0;
  /** The group being matched: its old number, the new number of its first record and the number its last ends at. */
  private group = 0;
  private groupAt = 0;
  private groupEnd = 0;
  private hash: Hash | null = null;
  private pending: Piece[] = [];
  /** The digests the caller's fixed groups got, by group. */
  private readonly fixedDigests = new Map<number, Uint32Array>();
  private readonly runs: Run[] = [];
  private readonly ids: number[] = [];
  private readonly texts: string[] = [];
  /** More records outside runs than `limit`: not worth a patch. */
  tooMany = false;

  constructor(
    old: CollectionIndex,
    private readonly limit: number,
  ) {
    this.n = old.size;
    this.sources = old.groups!.sources!;
  }

  /** The digest of fixed group `g` (records g * RECORD_GROUP and on of the file as read now). */
  fixed(g: number, digest: Uint32Array): void {
    this.fixedDigests.set(g, digest);
  }

  /** The records `buf[starts[k], ends[k])`, in file order (the chunk's bytes: call `keep` before the reader reuses them). */
  slices(buf: Uint8Array, starts: readonly number[], ends: readonly number[]): void {
    for (let k = 0; k < starts.length; k++) this.record(buf, starts[k]!, ends[k]!);
  }

  /** At the end of a chunk `buf`: the group being matched keeps its records' bytes (the reader reads the next chunk into `buf`). */
  keep(buf: Uint8Array): void {
    const mine = this.pending.filter((p) => p.bytes === buf);
    if (mine.length === 0) return;
    const from = mine[0]!.start;
    const copy = Buffer.from(buf.subarray(from, mine[mine.length - 1]!.end));
    this.pending = this.pending.map((p) => (p.bytes === buf ? { bytes: copy, start: p.start - from, end: p.end - from } : p));
  }

  private record(buf: Uint8Array, start: number, end: number): void {
    const i = this.count++;
    if (this.shift === null) {
      const o = this.startOf(i, buf, start, end);
      if (o < 0) return this.unmatched(Buffer.from(buf.buffer, buf.byteOffset + start, end - start), i);
      this.shift = i - o;
    }
    if (this.pending.length === 0) {
      this.group = (i - this.shift) / RECORD_GROUP;
      this.groupAt = i;
      this.groupEnd = i + Math.min(RECORD_GROUP, this.n - this.group * RECORD_GROUP);
      // (Under shift 0 a whole group is the caller's fixed group; a last one cut short is hashed here.)
      this.hash = this.shift === 0 && this.groupEnd - i === RECORD_GROUP ? null : createHash('sha256');
    }
    this.pending.push({ bytes: buf, start, end });
    this.hash?.update(buf.subarray(start, end));
    if (i + 1 === this.groupEnd) {
      const fixed = this.fixedDigests.get(this.group) ?? null;
      this.fixedDigests.clear();
      this.close(this.hash === null ? fixed : digestWords(this.hash));
    }
  }

  /**
   * The old number of record `i` when it may start a run: the old record of its slug where that
   * starts a group; for a slug no old record had (a record inserted, or its slug edited), the start
   * of the next old group under the last shift a group matched under; else -1.
   */
  private startOf(i: number, buf: Uint8Array, start: number, end: number): number {
    const bytes = Buffer.from(buf.buffer, buf.byteOffset + start, end - start);
    let slug = memberString(bytes, this.slugKey);
    if (slug === null) {
      try {
        const r = JSON.parse(bytes.toString('utf8')) as { slug?: unknown };
        slug = typeof r?.slug === 'string' ? r.slug : null;
      } catch {
        slug = null;
      }
    }
    const o = slug === null ? -1 : this.slugIdOf(slug);
    if (o >= 0) return o >= this.oldNext && o % RECORD_GROUP === 0 ? o : -1;
    const next = i - this.lastShift;
    return next >= this.oldNext && next < this.n && next % RECORD_GROUP === 0 ? next : -1;
  }

  /** Set by the caller: the old index's record of a slug (slugId). */
  slugIdOf: (slug: string) => number = () => -1;

  /** The group being matched ends: a run when its digest is the old group's, else its records are not matched. */
  private close(digest: Uint32Array | null): void {
    const g = this.group;
    const same = digest !== null && digest.every((w, k) => w === this.sources[4 * g + k]);
    const count = this.groupEnd - this.groupAt;
    if (same) {
      const last = this.runs[this.runs.length - 1];
      if (last !== undefined && last.at + last.count === this.groupAt && last.from + last.count === g * RECORD_GROUP) this.runs[this.runs.length - 1] = { ...last, count: last.count + count };
      else this.runs.push({ at: this.groupAt, from: g * RECORD_GROUP, count });
      this.lastShift = this.shift!;
    } else {
      for (let k = 0; k < this.pending.length; k++) {
        const p = this.pending[k]!;
        this.unmatched(Buffer.from(p.bytes.buffer, p.bytes.byteOffset + p.start, p.end - p.start), this.groupAt + k);
      }
    }
    this.oldNext = g * RECORD_GROUP + count;
    this.pending = [];
    this.hash = null;
    this.shift = null;
  }

  private unmatched(bytes: Buffer, id: number): void {
    if (this.tooMany) return;
    this.ids.push(id);
    this.texts.push(bytes.toString('utf8'));
    if (this.ids.length > this.limit) this.tooMany = true;
  }

  /**
   * After the last record (and the caller's last fixed group): the runs and the other records, or
   * null when every run keeps its records' numbers (patch.ts handles that edit itself).
   */
  finish(): Matched | null {
    // A group the file ends in before its end: not matched.
    const left = this.pending;
    this.pending = [];
    for (let k = 0; k < left.length; k++) this.unmatched(Buffer.from(left[k]!.bytes.buffer, left[k]!.bytes.byteOffset + left[k]!.start, left[k]!.end - left[k]!.start), this.groupAt + k);
    if (this.runs.every((r) => r.at === r.from)) return null;
    return { runs: this.runs, ids: this.ids, texts: this.texts };
  }
}

function digestWords(hash: Hash): Uint32Array {
  const d = hash.digest();
  const out = new Uint32Array(4);
  for (let w = 0; w < 4; w++) out[w] = d.readUInt32LE(w * 4);
  return out;
}

export type ShiftResult = { readonly index: CollectionIndex; readonly records: number } | { readonly index: null; readonly why: string };

/**
 * The index of `def` for the file as it is now, `size` records, made from `old` (its index before the
 * edit) and what ShiftMatcher found (`matched`), or why not (built whole). `sources`: the file's group
 * digests as read now; `targets`, `known`: as patch.ts patchCollection takes them.
 */
export function shiftedIndex(def: ResourceDefinition, old: CollectionIndex, matched: Matched, size: number, sources: Uint32Array, targets: Targets, known: KnownCollections): ShiftResult {
  const no = (why: string): ShiftResult => ({ index: null, why });
  const n = old.size;
  if (def.late !== undefined || old.list.gaps !== null || old.detail.own.gaps !== null) return no('a late field');
  if ((def.referrers?.length ?? 0) > 0 || old.embeds.some((e) => e.starts !== null)) return no('records others read back moved');
  // Each record's source: an old record (oldOf) or one read now (madeOf: its number among those).
  const oldOf = new Int32Array(size).fill(-1);
  const newOf = new Int32Array(n).fill(-1);
  for (const r of matched.runs) {
    for (let k = 0; k < r.count; k++) {
      oldOf[r.at + k] = r.from + k;
      newOf[r.from + k] = r.at + k;
    }
  }
  let ids = Int32Array.from(matched.ids);
  const madeOf = new Int32Array(size).fill(-1);
  for (let k = 0; k < ids.length; k++) {
    if (ids[k]! >= size || oldOf[ids[k]!] !== -1 || (k > 0 && ids[k]! <= ids[k - 1]!)) return no('records counted twice');
    madeOf[ids[k]!] = k;
  }
  for (let i = 0; i < size; i++) if (oldOf[i] === -1 && madeOf[i] === -1) return no('a record not read');

  // The records read, as a full load takes them: parsed, validated, references checked, linked.
  const ctx: LinkContext = { get: (c: CollectionName, slug: string) => known[c]?.get(slug), referrers: () => [] };
  let linked: LinkedRecord[] = [];
  for (const text of matched.texts) {
    let r: unknown;
    try {
      r = JSON.parse(text);
    } catch {
      return no('invalid JSON');
    }
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return no('a record that is not an object');
    const found: Findings = { problems: [], refs: [] };
    checkObject(def.source, r as Record<string, unknown>, '', found);
    if (found.problems.length > 0) return no('invalid records');
    for (const site of found.refs) {
      const target = known[site.collection as CollectionName];
      if (target === undefined || !target.has(site.slug)) return no('a reference to a record that does not exist');
    }
    linked.push(def.link(r as SourceRecord, ctx));
  }
  const build = (records: readonly LinkedRecord[]) => {
    const builder = indexBuilder(def, { records: records.length, bytes: 0 }, targets);
    for (const r of records) builder.add(r);
    return builder.finish();
  };
  let made = build(linked);
  if ((made.detail.plan === null) !== (old.detail.plan === null) || made.embeds.length !== old.embeds.length || (made.range === null) !== (old.range === null)) return no('another layout');
  if ((made.searchFrom === null) !== (old.searchFrom === null) || made.postings.length !== old.postings.length) return no('another layout');
  if (made.list.gaps !== null || made.detail.own.gaps !== null) return no('a late field');
  // The records read that are, in everything the index holds of them, the old record of their slug
  // (the rest of a group that did not match as a whole: one record inserted in it leaves 64 as they
  // were) are taken as those old records, where the numbering stays ascending: fewer records to put
  // in the orders and the search index.
  const kept = keptAsTheyWere(old, made, ids, newOf);
  if (kept.length > 0) {
    const oldOf2 = oldOf.slice();
    for (const [k, o] of kept) oldOf2[ids[k]!] = o;
    let last = -1;
    let ascending = true;
    for (let i = 0; i < size && ascending; i++) if (oldOf2[i]! >= 0) (ascending = oldOf2[i]! > last), (last = oldOf2[i]!);
    if (ascending) {
      const gone = new Set(kept.map(([k]) => k));
      for (const [k, o] of kept) (oldOf[ids[k]!] = o), (newOf[o] = ids[k]!), (madeOf[ids[k]!] = -1);
      linked = linked.filter((_, k) => !gone.has(k));
      ids = ids.filter((_, k) => !gone.has(k));
      ids.forEach((id, k) => (madeOf[id] = k));
      made = build(linked);
    }
  }

  // A slug or `_id` of a record read that another record has (invalid: built whole, which reports it).
  const slugs = new Set<string>();
  const idsNow = new Set<unknown>();
  for (let k = 0; k < ids.length; k++) {
    const slug = slugOf(made, k);
    const holder = slugId(old, slug);
    if (slugs.has(slug) || (holder >= 0 && newOf[holder]! >= 0)) return no('a slug another record has');
    slugs.add(slug);
    if (idsNow.has(linked[k]!._id)) return no('an _id another record has');
    idsNow.add(linked[k]!._id);
  }
  const idKey = memberKey('_id');
  for (let id = 0; id < n && idsNow.size > 0; id++) {
    if (newOf[id]! < 0) continue;
    const item = listItem(old.list, id);
    const plain = memberString(item, idKey);
    if (idsNow.has(plain ?? (JSON.parse(item.toString('utf8')) as { _id: unknown })._id)) return no('an _id another record has');
  }

  const orders = ordersOf(old, made, linked, ids, oldOf, madeOf, newOf, size);
  if (orders === null) return no('a sort key not read back from the JSON');
  const ranks = orders.map((order) => {
    const rank = new Int32Array(order.length);
    for (let p = 0; p < order.length; p++) rank[order[p]!] = p;
    return rank;
  });
  const postings: PostingTable[] = [];
  const equality = def.filters.filter((f) => f.kind !== 'range') as Exclude<ResourceDefinition['filters'][number], { kind: 'range' }>[];
  for (let x = 0; x < old.postings.length; x++) {
    const t = old.postings[x]!;
    const m = made.postings[x]!;
    const c = new PostingCollector(equality[x]!, t.embed);
    if (t.embed >= 0) {
      const e = remapIds(old.embeds[t.embed]!.ids, made.embeds[t.embed]!.ids, oldOf, madeOf, size);
      for (let id = 0; id < size; id++) c.addId(e[id]!);
    } else if (t.keys === null || m.keys === null) return no('a filter table of another kind');
    else {
      const keys = keysOf(old, t, linked, oldOf, madeOf, size, equality[x]!);
      for (const k of keys) c.addKeys(k);
    }
    postings.push(c.finish(size, orders, t.embed >= 0 ? t.offsets.length - 1 : 0));
  }
  let range: RangeIndex | null = null;
  if (old.range !== null) {
    const byId = new Float64Array(size);
    for (let i = 0; i < size; i++) byId[i] = oldOf[i]! >= 0 ? old.range.byId[oldOf[i]!]! : made.range!.byId[madeOf[i]!]!;
    const withValue = Int32Array.from({ length: size }, (_, i) => i).filter((i) => byId[i] === byId[i]);
    withValue.sort((a, b) => byId[a]! - byId[b]! || a - b);
    range = { param: old.range.param, ids: withValue, values: Float64Array.from(withValue, (i) => byId[i]!), byId };
  }
  // The search index: every posting's ids renumbered, the grams of the texts read and of those gone
  // moved in and out; where the trigrams index groups of texts, built from every record's text.
  const removed: TextAt[] = [];
  for (let id = 0; id < n; id++) if (newOf[id]! < 0) removed.push({ id, text: searchTextOf(old, id) });
  const added: TextAt[] = Array.from(ids, (id, k) => ({ id, text: searchTextOf(made, k) }));
  let search = searchIndexRenumbered(old.search, newOf, size, removed, added);
  if (search === null) {
    const texts = new Array<string>(size);
    for (let i = 0; i < size; i++) texts[i] = oldOf[i]! >= 0 ? searchTextOf(old, oldOf[i]!) : searchTextOf(made, madeOf[i]!);
    search = buildSearchIndex(texts);
  }
  let searchFrom: SearchFrom | null = null;
  if (old.searchFrom !== null) {
    const derived = new Uint32Array((size + 31) >>> 5);
    for (let i = 0; i < size; i++) {
      const b = oldOf[i]! >= 0 ? bitOf(old.searchFrom.derived, oldOf[i]!) : bitOf(made.searchFrom!.derived, madeOf[i]!);
      if (b === 1) derived[i >>> 5]! |= 1 << (i & 31);
    }
    searchFrom = { field: old.searchFrom.field, derived };
  }
  const searchText = remapStrings(old.searchText, made.searchText, oldOf, madeOf, size);

  const plan = old.detail.plan;
  const per = plan?.listCuts.length ?? 0;
  const ownPer = plan === null ? 0 : plan.ownRuns - 1;
  const list = remapFragments(old.list, made.list, oldOf, madeOf, size);
  const detail: Details = {
    plan,
    own: remapFragments(old.detail.own, made.detail.own, oldOf, madeOf, size),
    cuts: per === 0 ? old.detail.cuts : remapPer(old.detail.cuts, made.detail.cuts, per, oldOf, madeOf, size),
    ownCuts: ownPer === 0 ? old.detail.ownCuts : remapPer(old.detail.ownCuts, made.detail.ownCuts, ownPer, oldOf, madeOf, size),
  };
  const at = remapPer(old.slugs.at, made.slugs.at, 1, oldOf, madeOf, size);
  const embeds: Embed[] = old.embeds.map((e, x) => ({ ...e, ids: remapIds(e.ids, made.embeds[x]!.ids, oldOf, madeOf, size) }));
  // Group digests: the file's sources as read; the index and sort digests of a group that is an old
  // group as it was (a shift of whole groups), else unknown (a later edit of it compares each record's).
  const groups = groupCount(size);
  const keys = new Uint32Array(2 * groups);
  const sorts = new Uint32Array(2 * groups);
  for (let g = 0; g < groups; g++) {
    const a = g * RECORD_GROUP;
    const b = Math.min(size, a + RECORD_GROUP);
    const o = oldOf[a]!;
    let whole = o >= 0 && o % RECORD_GROUP === 0 && Math.min(n, o + RECORD_GROUP) - o === b - a;
    for (let i = a + 1; i < b && whole; i++) whole = oldOf[i] === o + (i - a);
    if (!whole) continue;
    const h = o / RECORD_GROUP;
    keys.set(old.groups!.keys.subarray(2 * h, 2 * h + 2), 2 * g);
    sorts.set(old.groups!.sorts.subarray(2 * h, 2 * h + 2), 2 * g);
  }
  const index: CollectionIndex = {
    def: old.def,
    size,
    slugs: slugTableAt(list.bytes, list.starts, at),
    list,
    detail,
    embeds,
    orders,
    ranks,
    postings,
    range,
    searchText,
    searchFrom,
    search,
    groups: { sources, keys, sorts },
  };
  return { index, records: ids.length };
}

/**
 * The records of `made` (records `ids` now) that hold, in every part of the index, what the old
 * record of their slug holds (one not kept otherwise: `newOf` -1): the same list item, detail-only
 * text and offsets into them, embedded ids, range value, search text, and keys in each filter table
 * (sort keys are read from the JSON, the same); with that old record's number.
 */
function keptAsTheyWere(old: CollectionIndex, made: CollectionIndex, ids: Int32Array, newOf: Int32Array): [number, number][] {
  const pairs: [number, number][] = [];
  const sameBytes = (a: Fragments, i: number, b: Fragments, j: number) => a.bytes.compare(b.bytes, b.starts[j]!, b.starts[j + 1]!, a.starts[i]!, a.starts[i + 1]!) === 0;
  const sameOffsets = (a: RecordOffsets, i: number, b: RecordOffsets, j: number, per: number) => {
    for (let x = 0; x < per; x++) if (a[i * per + x] !== b[j * per + x]) return false;
    return true;
  };
  const plan = old.detail.plan;
  const per = plan?.listCuts.length ?? 0;
  const ownPer = plan === null ? 0 : plan.ownRuns - 1;
  for (let k = 0; k < ids.length; k++) {
    const o = slugId(old, slugOf(made, k));
    if (o < 0 || newOf[o]! >= 0) continue;
    if (!sameBytes(old.list, o, made.list, k) || !sameBytes(old.detail.own, o, made.detail.own, k)) continue;
    if (!sameOffsets(old.detail.cuts, o, made.detail.cuts, k, per) || !sameOffsets(old.detail.ownCuts, o, made.detail.ownCuts, k, ownPer) || !sameOffsets(old.slugs.at, o, made.slugs.at, k, 1)) continue;
    if (old.embeds.some((e, x) => e.ids[o] !== made.embeds[x]!.ids[k])) continue;
    if (old.range !== null && !Object.is(old.range.byId[o], made.range!.byId[k])) continue;
    if (searchTextOf(old, o) !== searchTextOf(made, k)) continue;
    if (old.searchFrom !== null && bitOf(old.searchFrom.derived, o) !== bitOf(made.searchFrom!.derived, k)) continue;
    pairs.push([k, o]);
  }
  if (pairs.length === 0) return pairs;
  // Keys in each keyed filter table, in the order the table numbers them (embedded ids are compared above).
  const keysIn = (t: PostingTable, records: ReadonlyMap<number, number>): string[][] => {
    const out = Array.from({ length: records.size }, () => [] as string[]);
    for (let key = 0; key + 1 < t.offsets.length; key++) {
      for (let e = t.offsets[key]!; e < t.offsets[key + 1]!; e++) {
        const at = records.get(t.ids[e]!);
        if (at !== undefined) out[at]!.push(stringAt(t.keys!, key));
      }
    }
    return out;
  };
  const oldAt = new Map(pairs.map(([, o], x) => [o, x]));
  const madeAt = new Map(pairs.map(([k], x) => [k, x]));
  const differ = new Set<number>();
  for (let x = 0; x < old.postings.length; x++) {
    if (old.postings[x]!.keys === null) continue;
    if (made.postings[x]!.keys === null) return [];
    const a = keysIn(old.postings[x]!, oldAt);
    const b = keysIn(made.postings[x]!, madeAt);
    for (let p = 0; p < pairs.length; p++) if (a[p]!.length !== b[p]!.length || a[p]!.some((key) => !b[p]!.includes(key))) differ.add(p);
  }
  return pairs.filter((_, p) => !differ.has(p));
}

/** Record `id`'s list item (no late field). */
const listItem = (f: Fragments, id: number): Buffer => f.bytes.subarray(f.starts[id]!, f.starts[id + 1]!);

const bitOf = (bits: Uint32Array, i: number): number => (bits[i >>> 5]! >>> (i & 31)) & 1;

/**
 * Calls `run(fromMade, first, count, at)` for each run of records `at, at + 1, ...` (new numbers)
 * that are records `first, first + 1, ...` of the old index (or of the records read: `fromMade`).
 */
function forRuns(oldOf: Int32Array, madeOf: Int32Array, size: number, run: (fromMade: boolean, first: number, count: number, at: number) => void): void {
  for (let i = 0; i < size; ) {
    const fromMade = oldOf[i]! < 0;
    const src = fromMade ? madeOf : oldOf;
    const first = src[i]!;
    let j = i + 1;
    while (j < size && src[j] === first + (j - i) && (oldOf[j]! < 0) === fromMade) j++;
    run(fromMade, first, j - i, i);
    i = j;
  }
}

/** Entries laid out back to back (starts `old`, `made`) for the new numbering: their new starts; `copy` places each run's bytes. */
function remapStarts(old: ArrayLike<number>, made: ArrayLike<number>, oldOf: Int32Array, madeOf: Int32Array, size: number, copy: (fromMade: boolean, start: number, end: number, at: number) => void): Float64Array {
  const starts = new Float64Array(size + 1);
  let pos = 0;
  forRuns(oldOf, madeOf, size, (fromMade, first, count, at) => {
    const s = fromMade ? made : old;
    const from = s[first]!;
    const to = s[first + count]!;
    copy(fromMade, from, to, pos);
    for (let k = 0; k < count; k++) starts[at + k] = s[first + k]! - from + pos;
    pos += to - from;
  });
  starts[size] = pos;
  return starts;
}

function remapFragments(old: Fragments, made: Fragments, oldOf: Int32Array, madeOf: Int32Array, size: number): Fragments {
  let total = 0;
  forRuns(oldOf, madeOf, size, (fromMade, first, count) => {
    const s = fromMade ? made.starts : old.starts;
    total += s[first + count]! - s[first]!;
  });
  const bytes = Buffer.allocUnsafeSlow(total);
  const starts = remapStarts(old.starts, made.starts, oldOf, madeOf, size, (fromMade, a, b, at) => (fromMade ? made : old).bytes.copy(bytes, at, a, b));
  return { bytes, starts: offsetsOf(starts, total), gaps: null, late: null, keys: null };
}

function remapStrings(old: StringTable, made: StringTable, oldOf: Int32Array, madeOf: Int32Array, size: number): StringTable {
  let wide = old.units instanceof Uint16Array;
  for (let u = 0; u < made.units.length && !wide; u++) wide = made.units[u]! > 0xff;
  let total = 0;
  forRuns(oldOf, madeOf, size, (fromMade, first, count) => {
    const s = fromMade ? made.starts : old.starts;
    total += s[first + count]! - s[first]!;
  });
  const units = wide ? new Uint16Array(total) : new Uint8Array(total);
  const starts = remapStarts(old.starts, made.starts, oldOf, madeOf, size, (fromMade, a, b, at) => units.set((fromMade ? made : old).units.subarray(a, b), at));
  return { units, starts: offsetsOf(starts, total), slots: new Int32Array(0) };
}

/** `per` offsets for each record, from the old record's or the read record's (2 bytes each while every one fits). */
function remapPer(old: RecordOffsets, made: RecordOffsets, per: number, oldOf: Int32Array, madeOf: Int32Array, size: number): RecordOffsets {
  let wide = old instanceof Uint32Array;
  for (let k = 0; k < made.length && !wide; k++) wide = made[k]! > 0xffff;
  const out = wide ? new Uint32Array(size * per) : new Uint16Array(size * per);
  forRuns(oldOf, madeOf, size, (fromMade, first, count, at) => out.set((fromMade ? made : old).subarray(first * per, (first + count) * per), at * per));
  return out;
}

function remapIds(old: Int32Array, made: Int32Array, oldOf: Int32Array, madeOf: Int32Array, size: number): Int32Array {
  const out = new Int32Array(size);
  forRuns(oldOf, madeOf, size, (fromMade, first, count, at) => out.set((fromMade ? made : old).subarray(first, first + count), at));
  return out;
}

/** A sort key as the index builder takes it: a number (NaN: none) or a folded text (null: none). */
function sortKey(type: 'number' | 'text', k: unknown): number | string | null {
  if (type === 'number') return k === null || k === undefined ? NaN : Number(k);
  return k === null || k === undefined ? null : fold(String(k));
}

const none = (k: number | string | null) => k === null || k !== k;
const sameKey = (a: number | string | null, b: number | string | null) => a === b || (none(a) && none(b));

/**
 * Every sort order for the new numbering: the old records in their old relative places (their keys
 * and `_id`s are as they were), the records read put where their keys go, as indexes.ts buildOrder
 * places them (a key of none last, ties by `_id`); the old records' keys read back from their JSON
 * (known.ts) where a read record is compared with them, so null when a read record's key or `_id`
 * does not read back from its own JSON as it was built (patch.ts reordered: the same rule).
 */
function ordersOf(old: CollectionIndex, made: CollectionIndex, linked: readonly LinkedRecord[], ids: Int32Array, oldOf: Int32Array, madeOf: Int32Array, newOf: Int32Array, size: number): Int32Array[] | null {
  const def = old.def;
  const after = knownCollection(made);
  let before: ReturnType<typeof knownCollection> | null = null;
  const oldRecord = (id: number) => (before ??= knownCollection(old)).get(slugOf(old, id))!;
  for (let j = 0; j < linked.length; j++) if (after.get(slugOf(made, j))!._id !== linked[j]!._id) return null;
  const orders: Int32Array[] = [];
  for (const sort of def.sorts) {
    const sign = sort.dir === 'asc' ? 1 : -1;
    const madeKeys = new Array<number | string | null>(linked.length);
    for (let j = 0; j < linked.length; j++) {
      const k = sortKey(sort.type, sort.key(linked[j]!));
      if (!sameKey(k, sortKey(sort.type, sort.key(after.get(slugOf(made, j))! as LinkedRecord)))) return null;
      madeKeys[j] = k;
    }
    const oldKeys = new Map<number, number | string | null>();
    const key = (id: number) => {
      if (madeOf[id]! >= 0) return madeKeys[madeOf[id]!]!;
      let k = oldKeys.get(id);
      if (k === undefined) oldKeys.set(id, (k = sortKey(sort.type, sort.key(oldRecord(oldOf[id]!) as LinkedRecord))));
      return k;
    };
    const idText = (id: number) => (madeOf[id]! >= 0 ? linked[madeOf[id]!]!._id : oldRecord(oldOf[id]!)._id) as string;
    const compare = (a: number, b: number): number => {
      const ka = key(a);
      const kb = key(b);
      if (ka !== kb) {
        const na = none(ka);
        const nb = none(kb);
        if (na || nb) return na && nb ? (idText(a) < idText(b) ? -1 : 1) : na ? 1 : -1;
        return ka! < kb! ? -sign : sign;
      }
      return idText(a) < idText(b) ? -1 : 1;
    };
    const was = old.orders[orders.length]!;
    const rest = new Int32Array(size - linked.length);
    let r = 0;
    for (let p = 0; p < was.length; p++) {
      const id = newOf[was[p]!]!;
      if (id >= 0) rest[r++] = id;
    }
    if (r !== rest.length) return null;
    const sorted = Array.from(ids).sort(compare);
    const order = new Int32Array(size);
    let at = 0;
    r = 0;
    for (const id of sorted) {
      let lo = r;
      let hi = rest.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compare(rest[mid]!, id) < 0) lo = mid + 1;
        else hi = mid;
      }
      order.set(rest.subarray(r, lo), at);
      at += lo - r;
      order[at++] = id;
      r = lo;
    }
    order.set(rest.subarray(r), at);
    orders.push(order);
  }
  return orders;
}

type FilterDef = Exclude<ResourceDefinition['filters'][number], { kind: 'range' }>;

/**
 * Each record's keys in table `t` of `old` for the new numbering (those of the records read from
 * `linked`, as they list them), in an order a PostingCollector numbers as a full build does: keys in
 * order of first appearance, a record's in the order it lists them. An old record has its keys in the
 * order of their old numbers, which is its own order for the keys it was the first to hold; where it
 * is the first to hold two or more now but was not before, its order is read from its JSON (known.ts),
 * as a full build reads it (patch.ts severalKeys: the same rule).
 */
function keysOf(old: CollectionIndex, t: PostingTable, linked: readonly LinkedRecord[], oldOf: Int32Array, madeOf: Int32Array, size: number, filter: FilterDef): (readonly string[])[] {
  const n = old.size;
  const strings: string[] = [];
  const keyOf = (k: number) => (strings[k] ??= stringAt(t.keys!, k));
  // The old table inverted: record -> its key numbers (ascending).
  const counts = new Int32Array(n + 1);
  for (let e = 0; e < t.ids.length; e++) counts[t.ids[e]! + 1]!++;
  for (let id = 0; id < n; id++) counts[id + 1]! += counts[id]!;
  const members = new Int32Array(t.ids.length);
  const cursor = counts.slice(0, n);
  for (let k = 0; k + 1 < t.offsets.length; k++) for (let e = t.offsets[k]!; e < t.offsets[k + 1]!; e++) members[cursor[t.ids[e]!]!++] = k;
  let before: ReturnType<typeof knownCollection> | null = null;
  const listed = (r: LinkedRecord): string[] => {
    const raw = filter.get(r);
    const values = Array.isArray(raw) ? raw : raw === null || raw === undefined ? [] : [raw];
    return values.map((v) => (filter.kind === 'text' ? fold(String(v).trim()) : String(v)));
  };
  const out = new Array<readonly string[]>(size);
  const seen = new Set<string>();
  for (let id = 0; id < size; id++) {
    let keys: readonly string[];
    const j = madeOf[id]!;
    if (j >= 0) keys = listed(linked[j]!);
    else {
      const o = oldOf[id]!;
      keys = Array.from(members.subarray(counts[o]!, counts[o + 1]!), keyOf);
      if (keys.length > 1) {
        let fresh = 0;
        for (const k of keys) if (!seen.has(k)) fresh++;
        if (fresh > 1) keys = listed((before ??= knownCollection(old)).get(slugOf(old, o))! as LinkedRecord);
      }
    }
    for (const k of keys) seen.add(k);
    out[id] = keys;
  }
  return out;
}
