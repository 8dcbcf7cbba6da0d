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
import { RESOURCES } from '../resources/index.ts';
import type { Schema } from '../resources/schema.ts';
import type { CollectionName, LinkContext, LinkedRecord, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import { detailBytes, embedFields, type Details, type Embed } from './detail-layout.ts';
import { fragment, offsetsOf, recordOffsetsOf, type Fragments, type RecordOffsets } from './fragments.ts';
import { fold } from './fold.ts';
import { indexBuilder, lastAtOrBelow, withListLinked, PostingCollector, searchTextOf, slugId, slugOf, SMALL_POSTING, type CollectionIndex, type PostingTable, type RangeIndex, type Targets } from './indexes.ts';
import { memberKey, memberString } from './json-bytes.ts';
import { knownCollection } from './known.ts';
import type { KnownCollections } from './load.ts';
import { groupCount, RECORD_GROUP } from './record-groups.ts';
import { buildSearchIndex, searchIndexRenumbered, type TextAt } from './search-index.ts';
import { regroupedIndexRenumbered } from './search-regroup.ts';
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
  // What a record reads back from others (a celebrity's filmography, from the movies' casts): refs
  // embeds alone (patch.ts patchable), taken from the detail before the edit of the old record of its slug.
  const back = (def.referrers?.length ?? 0) === 0 ? [] : embedFields(def).filter((e) => e.refs).map((e) => e.field);
  if (back.length === 0 && old.embeds.some((e) => e.starts !== null)) return no('refs of another kind');
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
  let withEmbeds: CollectionIndex | null = null;
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
    const record = def.link(r as SourceRecord, ctx);
    const o = back.length > 0 ? slugId(old, record.slug) : -1;
    if (o >= 0) {
      // (The files those come from did not change; a slug no record had is named by none of them.)
      withEmbeds ??= { ...old, embeds: old.embeds.map((e) => ({ ...e, index: targets(e.target) ?? null })) };
      if (withEmbeds.embeds.some((e) => e.index === null)) return no('an embedded collection not indexed');
      const was = (JSON.parse(detailBytes(withEmbeds.list, withEmbeds.detail, withEmbeds.embeds, o, 20000101).toString('utf8')) as { data: Record<string, unknown> }).data;
      for (const f of back) (record as Record<string, unknown>)[f] = was[f];
    }
    linked.push(record);
  }
  const build = (records: readonly LinkedRecord[]) => {
    const builder = indexBuilder(def, { records: records.length, bytes: 0 }, targets);
    for (const r of records) builder.add(r);
    return builder.finish();
  };
  let made = build(linked);
  if ((made.detail.plan === null) !== (old.detail.plan === null) || made.embeds.length !== old.embeds.length || (made.range === null) !== (old.range === null)) return no('another layout');
  if ((made.searchFrom === null) !== (old.searchFrom === null) || made.postings.length !== old.postings.length) return no('another layout');
  if ((made.list.gaps === null) !== (old.list.gaps === null) || (made.detail.own.gaps === null) !== (old.detail.own.gaps === null)) return no('another layout');
  if (made.embeds.some((e, x) => (e.starts === null) !== (old.embeds[x]!.starts === null))) return no('another layout');
  // The records read that are, in everything the index holds of them, the old record of their slug
  // (the rest of a group that did not match as a whole: one record inserted in it leaves 64 as they
  // were) are taken as those old records, where the numbering stays ascending: fewer records to put
  // in the orders and the search index.
  const kept = old.list.gaps !== null || old.detail.own.gaps !== null || old.embeds.some((e) => e.starts !== null) ? [] : keptAsTheyWere(old, made, ids, newOf);
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

  // A record others read back gone: only one none of them named (an empty filmography: no movie's
  // cast names the celebrity; the collections that embed it check their own, movedRecords), else
  // built whole, which reports what names it. (One read again under its slug is not gone.)
  if (back.length > 0) {
    for (let o = 0; o < n; o++) {
      if (newOf[o]! >= 0 || slugId(made, slugOf(old, o)) >= 0) continue;
      withEmbeds ??= { ...old, embeds: old.embeds.map((e) => ({ ...e, index: targets(e.target) ?? null })) };
      if (withEmbeds.embeds.some((e) => e.index === null)) return no('an embedded collection not indexed');
      const was = (JSON.parse(detailBytes(withEmbeds.list, withEmbeds.detail, withEmbeds.embeds, o, 20000101).toString('utf8')) as { data: Record<string, unknown> }).data;
      if (back.some((f) => !Array.isArray(was[f]) || (was[f] as unknown[]).length > 0)) return no('records others read back removed');
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
  if (idsNow.size > 0 && !idsUnique(old, idsNow, newOf)) return no('an _id another record has');

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
    // A table where each record holds one key at most, none new or gone: its postings renumbered.
    const madeKeys = t.embed >= 0 ? made.embeds[t.embed]!.ids : m.keys === null ? null : keyNumbers(t.keys!, m);
    const renumbered = madeKeys === null ? null : postingsRenumbered(t, madeKeys, ids, newOf, size, orders, ranks);
    if (renumbered !== null) {
      postings.push(renumbered);
      continue;
    }
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
  // moved in and out; built from every record's text where that would not group texts as before.
  const removed: TextAt[] = [];
  for (let id = 0; id < n; id++) if (newOf[id]! < 0) removed.push({ id, text: searchTextOf(old, id) });
  const added: TextAt[] = Array.from(ids, (id, k) => ({ id, text: searchTextOf(made, k) }));
  // (Where they index groups of equal texts: the groups records leave and join, search-regroup.ts.)
  let search = searchIndexRenumbered(old.search, newOf, size, removed, added) ?? regroupedIndexRenumbered(old.search, newOf, size, removed, added, (id) => searchTextOf(old, id));
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
  const embeds: Embed[] = old.embeds.map((e, x) => (e.starts === null ? { ...e, ids: remapIds(e.ids, made.embeds[x]!.ids, oldOf, madeOf, size) } : remapHoles(e, made.embeds[x]!, oldOf, madeOf, size)));
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
    sortKeys: old.sortKeys.map((k, s) => k && remapIds(k, made.sortKeys[s]!, oldOf, madeOf, size)),
    postings,
    range,
    searchText,
    searchFrom,
    search,
    groups: { sources, keys, sorts },
  };
  // What it still shares with `old` (a key table, a plan) is copied when it lies in memory of `old`'s
  // (a boot cache file is read into one allocation: else the whole file is kept alive by it).
  return { index: withListLinked(copiedOff(index, buffersOf(old))), records: ids.length };
}

/**
 * The records of `made` (records `ids` now) that hold, in every part of the index, what the old
 * record of their slug holds (one not kept otherwise: `newOf` -1): the same list item, detail-only
 * text and offsets into them, embedded ids, range value, kept sort keys, search text, and keys in each
 * filter table (the other sort keys are read from the JSON, the same); with that old record's number.
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
    if (old.sortKeys.some((keys, s) => keys !== null && !Object.is(keys[o], made.sortKeys[s]![k]))) continue;
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

/** `_id`s of a few records read as plain text: each looked for in the list items' bytes (a native search), not each item's read. */
const FEW_IDS = 8;
const PLAIN_ID = /^[\x20-\x7e]*$/;

/** True when no record of `old` kept (`newOf` >= 0) has one of `ids` as its `_id`. */
function idsUnique(old: CollectionIndex, ids: ReadonlySet<unknown>, newOf: Int32Array): boolean {
  const key = memberKey('_id');
  const idOf = (id: number): unknown => {
    const item = listItem(old.list, id);
    return memberString(item, key) ?? (JSON.parse(fragment(old.list, id, 20000101).toString('utf8')) as { _id: unknown })._id;
  };
  if (ids.size <= FEW_IDS && [...ids].every((x) => typeof x === 'string' && PLAIN_ID.test(x) && !x.includes('"') && !x.includes('\\'))) {
    // Such an `_id` is written as these bytes in its record's list item whoever wrote it (no escape):
    // each place they stand is checked to be a kept record's own `_id`.
    const { bytes, starts } = old.list;
    for (const x of ids) {
      const needle = Buffer.from(`${JSON.stringify('_id')}:${JSON.stringify(x)}`);
      for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) {
        const lo = lastAtOrBelow(starts, at, old.size - 1);
        if (newOf[lo]! >= 0 && idOf(lo) === x) return false;
      }
    }
    return true;
  }
  for (let id = 0; id < old.size; id++) if (newOf[id]! >= 0 && ids.has(idOf(id))) return false;
  return true;
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
  if (old.gaps === null || made.gaps === null) return { bytes, starts: offsetsOf(starts, total), gaps: null, late: null, keys: null };
  // A late field: each record's gap as far into it as before, its key as it was; or an embedded
  // record's gap (its ids are the index's embed's: withListLinked).
  const gaps = new Float64Array(size);
  const keys = old.keys === null ? null : new Float64Array(size);
  forRuns(oldOf, madeOf, size, (fromMade, first, count, at) => {
    const f = fromMade ? made : old;
    for (let k = 0; k < count; k++) {
      gaps[at + k] = starts[at + k]! + (f.gaps![first + k]! - f.starts[first + k]!);
      if (keys !== null) keys[at + k] = f.keys![first + k]!;
    }
  });
  return { bytes, starts: offsetsOf(starts, total), gaps: offsetsOf(gaps, total), late: old.late, keys, embed: old.embed ?? null };
}

/** A refs embed's holes (per record, its entries of `ids` and `at`) for the new numbering. */
function remapHoles(old: Embed, made: Embed, oldOf: Int32Array, madeOf: Int32Array, size: number): Embed {
  let total = 0;
  forRuns(oldOf, madeOf, size, (fromMade, first, count) => {
    const s = (fromMade ? made : old).starts!;
    total += s[first + count]! - s[first]!;
  });
  const ids = new Int32Array(total);
  const at = new Uint32Array(total);
  const starts = remapStarts(old.starts!, made.starts!, oldOf, madeOf, size, (fromMade, a, b, to) => {
    const from = fromMade ? made : old;
    ids.set(from.ids.subarray(a, b), to);
    at.set(from.at!.subarray(a, b), to);
  });
  return { ...old, ids, at: recordOffsetsOf(at), starts: Uint32Array.from(starts) };
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

function remapIds<T extends Int32Array | Float64Array>(old: T, made: T, oldOf: Int32Array, madeOf: Int32Array, size: number): T {
  const out = (old instanceof Float64Array ? new Float64Array(size) : new Int32Array(size)) as T;
  forRuns(oldOf, madeOf, size, (fromMade, first, count, at) => out.set((fromMade ? made : old).subarray(first, first + count), at));
  return out;
}

/** A sort key as the index builder takes it: a number (NaN: none) or a folded text (null: none). */
function sortKey(type: 'number' | 'text', k: unknown): number | string | null {
  if (type === 'number') return k === null || k === undefined ? NaN : Number(k);
  return k === null || k === undefined ? null : fold(String(k));
}

const none = (k: number | string | null) => k === null || k !== k;

/** indexes.ts buildOrder's comparator (and sort-order.ts numberOrder's order), with `_id`s for its id ranks. */
export function orderComparator(key: (id: number) => number | string | null, idText: (id: number) => string, sign: number): (a: number, b: number) => number {
  return (a, b) => {
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
}

/** An order of `size` records: `rest` (in order) with each of `placed` (sorted by `compare`) put before the first record of `rest` that comes after it. */
export function mergedOrder(rest: Int32Array, placed: readonly number[], size: number, compare: (a: number, b: number) => number): Int32Array {
  const order = new Int32Array(size);
  let at = 0;
  let r = 0;
  for (const id of placed) {
    // The first place in `rest` (from r on) whose record comes after `id`.
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
  return order;
}
/** Sort keys equal, or both absent (null or NaN). */
export const sameKey = (a: number | string | null, b: number | string | null) => a === b || (none(a) && none(b));

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
  for (const [s, sort] of def.sorts.entries()) {
    const sign = sort.dir === 'asc' ? 1 : -1;
    // A key no answer shows: each record's as the index keeps it (SortDef `kept`), none read back.
    const oldKept = old.sortKeys[s] ?? null;
    const madeKept = made.sortKeys[s] ?? null;
    if ((oldKept === null) !== (madeKept === null)) return null;
    const madeKeys = new Array<number | string | null>(linked.length);
    for (let j = 0; j < linked.length; j++) {
      const k = madeKept !== null ? madeKept[j]! : sortKey(sort.type, sort.key(linked[j]!));
      if (madeKept === null && !sameKey(k, sortKey(sort.type, sort.key(after.get(slugOf(made, j))! as LinkedRecord)))) return null;
      madeKeys[j] = k;
    }
    const oldKeys = new Map<number, number | string | null>();
    const key = (id: number) => {
      if (madeOf[id]! >= 0) return madeKeys[madeOf[id]!]!;
      if (oldKept !== null) return oldKept[oldOf[id]!]!;
      let k = oldKeys.get(id);
      if (k === undefined) oldKeys.set(id, (k = sortKey(sort.type, sort.key(oldRecord(oldOf[id]!) as LinkedRecord))));
      return k;
    };
    const idText = (id: number) => (madeOf[id]! >= 0 ? linked[madeOf[id]!]!._id : oldRecord(oldOf[id]!)._id) as string;
    const compare = orderComparator(key, idText, sign);
    const was = old.orders[orders.length]!;
    const rest = new Int32Array(size - linked.length);
    let r = 0;
    for (let p = 0; p < was.length; p++) {
      const id = newOf[was[p]!]!;
      if (id >= 0) rest[r++] = id;
    }
    if (r !== rest.length) return null;
    orders.push(mergedOrder(rest, Array.from(ids).sort(compare), size, compare));
  }
  return orders;
}

export const NO_KEYS: readonly string[] = [];

/**
 * The key number in `keys` (an old table's) of each record of table `m` (of the records read): -1
 * for none; null when a record holds two or more, or one `keys` has not.
 */
function keyNumbers(keys: StringTable, m: PostingTable): Int32Array | null {
  const numbers = new Map<string, number>();
  for (let k = 0; k + 1 < keys.starts.length; k++) numbers.set(stringAt(keys, k), k);
  const out = new Int32Array(m.ids.length === 0 ? 0 : Math.max(...m.ids) + 1).fill(-1);
  for (let k = 0; k + 1 < m.offsets.length; k++) {
    const number = numbers.get(stringAt(m.keys!, k));
    if (number === undefined) return null;
    for (let e = m.offsets[k]!; e < m.offsets[k + 1]!; e++) {
      if (out[m.ids[e]!] !== -1) return null;
      out[m.ids[e]!] = number;
    }
  }
  return out;
}

/**
 * Filter table `t` of the old index for the new numbering (record i before is record `newOf[i]`, -1:
 * gone; the records read, numbers `ids`, hold the keys `madeKeys`: a key number of `t`, or -1, or past
 * its length none), as PostingCollector.finish lays out the table of the same records: each posting's
 * ids mapped and the records read merged in, its lists in each order (`orders`, `ranks`: the new ones)
 * mapped with those records put by their ranks, bitmaps made for the new count. Null where that is
 * not the layout a build makes: a record holding two keys or more, a key whose first record is no
 * longer in the place its number says, a key no record holds now (a keyed table), or a posting
 * passing SMALL_POSTING either way.
 */
function postingsRenumbered(t: PostingTable, madeKeys: Int32Array, ids: Int32Array, newOf: Int32Array, size: number, orders: readonly Int32Array[], ranks: readonly Int32Array[]): PostingTable | null {
  const K = t.offsets.length - 1;
  const keyOfMade = (j: number) => (j < madeKeys.length ? madeKeys[j]! : -1);
  // Records read, by key: counts, then their ids ascending (ids are).
  const madeCount = new Int32Array(K + 1);
  for (let j = 0; j < ids.length; j++) {
    const k = keyOfMade(j);
    if (k >= K) return null;
    if (k >= 0) madeCount[k + 1]!++;
  }
  for (let k = 0; k < K; k++) madeCount[k + 1]! += madeCount[k]!;
  const madeIds = new Int32Array(madeCount[K]!);
  const cursor = madeCount.slice(0, K);
  for (let j = 0; j < ids.length; j++) if (keyOfMade(j) >= 0) madeIds[cursor[keyOfMade(j)]!++] = ids[j]!;
  const held = new Uint8Array(newOf.length);
  const offsets = new Int32Array(K + 1);
  let lastFirst = -1;
  for (let k = 0; k < K; k++) {
    let count = madeCount[k + 1]! - madeCount[k]!;
    let first = count > 0 ? madeIds[madeCount[k]!]! : size;
    for (let e = t.offsets[k]!; e < t.offsets[k + 1]!; e++) {
      const id = t.ids[e]!;
      if (held[id] === 1) return null;
      held[id] = 1;
      const now = newOf[id]!;
      if (now >= 0) {
        count++;
        if (now < first) first = now;
      }
    }
    if (t.keys !== null) {
      // Keys are numbered by the record that holds each first.
      if (count === 0 || first <= lastFirst) return null;
      lastFirst = first;
    }
    offsets[k + 1] = offsets[k]! + count;
  }
  const out = new Int32Array(offsets[K]!);
  for (let k = 0; k < K; k++) {
    let o = offsets[k]!;
    let m = madeCount[k]!;
    for (let e = t.offsets[k]!; e < t.offsets[k + 1]!; e++) {
      const now = newOf[t.ids[e]!]!;
      if (now < 0) continue;
      while (m < madeCount[k + 1]! && madeIds[m]! < now) out[o++] = madeIds[m++]!;
      out[o++] = now;
    }
    while (m < madeCount[k + 1]!) out[o++] = madeIds[m++]!;
  }
  // Lists in each order: the same postings long enough as before.
  let large = 0;
  for (let k = 0; k < K; k++) if (offsets[k + 1]! - offsets[k]! > SMALL_POSTING) large++;
  if (large !== t.sortedKeys.length) return null;
  for (let j = 0; j < large; j++) if (offsets[t.sortedKeys[j]! + 1]! - offsets[t.sortedKeys[j]!]! <= SMALL_POSTING) return null;
  const sortedOffsets = new Int32Array(large + 1);
  for (let j = 0; j < large; j++) sortedOffsets[j + 1] = sortedOffsets[j]! + offsets[t.sortedKeys[j]! + 1]! - offsets[t.sortedKeys[j]!]!;
  const sorted = orders.map((_, s) => {
    const rank = ranks[s]!;
    const was = t.sorted[s]!;
    const list = new Int32Array(sortedOffsets[large]!);
    for (let j = 0; j < large; j++) {
      const k = t.sortedKeys[j]!;
      const adds = Array.from(madeIds.subarray(madeCount[k]!, madeCount[k + 1]!)).sort((a, b) => rank[a]! - rank[b]!);
      let o = sortedOffsets[j]!;
      let m = 0;
      for (let e = t.sortedOffsets[j]!; e < t.sortedOffsets[j + 1]!; e++) {
        const now = newOf[was[e]!]!;
        if (now < 0) continue;
        while (m < adds.length && rank[adds[m]!]! < rank[now]!) list[o++] = adds[m++]!;
        list[o++] = now;
      }
      while (m < adds.length) list[o++] = adds[m++]!;
    }
    return list;
  });
  // Bitmaps of the postings that hold at least 1/64 of the records, as finish makes them.
  const words = (size + 31) >>> 5;
  let dense = 0;
  for (let k = 0; k < K; k++) if ((offsets[k + 1]! - offsets[k]!) * 64 >= size) dense++;
  const bitsAt = new Int32Array(dense === 0 ? 0 : K).fill(-1);
  const bits = new Uint32Array(dense * words);
  dense = 0;
  for (let k = 0; k < bitsAt.length; k++) {
    if ((offsets[k + 1]! - offsets[k]!) * 64 < size) continue;
    bitsAt[k] = dense;
    for (let e = offsets[k]!; e < offsets[k + 1]!; e++) bits[dense * words + (out[e]! >>> 5)]! |= 1 << (out[e]! & 31);
    dense++;
  }
  return { param: t.param, keys: t.keys, embed: t.embed, offsets, ids: out, sortedKeys: t.sortedKeys, sortedOffsets, sorted, bitsAt, bits };
}

export type FilterDef = Exclude<ResourceDefinition['filters'][number], { kind: 'range' }>;

/**
 * Each record's keys in table `t` of `old` for the new numbering (those of the records read from
 * `linked`, as they list them), in an order a PostingCollector numbers as a full build does: keys in
 * order of first appearance, a record's in the order it lists them. An old record has its keys in the
 * order of their old numbers, which is its own order for the keys it was the first to hold; where it
 * is the first to hold two or more now but was not before, its order is read from its JSON (known.ts),
 * as a full build reads it. `known`: `old` as a link target when the caller has it already.
 */
export function keysOf(old: CollectionIndex, t: PostingTable, linked: readonly LinkedRecord[], oldOf: Int32Array, madeOf: Int32Array, size: number, filter: FilterDef, known: ReturnType<typeof knownCollection> | null = null): (readonly string[])[] {
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
  let before = known;
  const listed = (r: LinkedRecord): string[] => {
    const raw = filter.get(r);
    const values = Array.isArray(raw) ? raw : raw === null || raw === undefined ? [] : [raw];
    return values.map((v) => (filter.kind === 'text' ? fold(String(v).trim()) : String(v)));
  };
  const out = new Array<readonly string[]>(size);
  const seen = new Set<string>();
  const madeKeys = linked.map(listed);
  // No record with two keys or more: which keys came first does not matter (one array per key).
  let several = madeKeys.some((k) => k.length > 1);
  for (let id = 0; id < n && !several; id++) several = counts[id + 1]! - counts[id]! > 1;
  const single: (readonly string[])[] = [];
  for (let id = 0; id < size; id++) {
    let keys: readonly string[];
    const j = madeOf[id]!;
    if (j >= 0) keys = madeKeys[j]!;
    else if (!several) {
      const o = oldOf[id]!;
      out[id] = counts[o + 1] === counts[o] ? NO_KEYS : (single[members[counts[o]!]!] ??= [keyOf(members[counts[o]!]!)]);
      continue;
    } else {
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

/**
 * Where the records of `old` (an index of one collection before an edit of its file) are in `now`
 * (after it) when records were inserted among them (issue 19: a celebrity inserted in the middle of
 * celebrities.json moves every later one): each old record's number now, by its slug, and the
 * records (old numbers) whose values of `fields` differ, with those fields; -1 for a record gone
 * (renumberedBy keeps only a collection none of whose records names it); null when the numbering
 * does not stay ascending. A record inserted is named by no collection whose file did not change and
 * was valid (its slug was no record's).
 */
export function movedRecords(old: CollectionIndex, now: CollectionIndex, fields: readonly string[]): Moved | null {
  const newOf = new Int32Array(old.size);
  const changed = new Map<number, string[]>();
  const same = (a: Fragments, i: number, b: Fragments, j: number) =>
    a.bytes.compare(b.bytes, b.starts[j]!, b.starts[j + 1]!, a.starts[i]!, a.starts[i + 1]!) === 0 && (a.gaps === null || a.gaps[i]! - a.starts[i]! === b.gaps![j]! - b.starts[j]!);
  let was: ReturnType<typeof knownCollection> | null = null;
  let is: ReturnType<typeof knownCollection> | null = null;
  let last = -1;
  let goneReadBack = false;
  for (let o = 0; o < old.size; o++) {
    const slug = slugOf(old, o);
    const j = slugId(now, slug);
    if (j < 0) {
      newOf[o] = -1;
      // (What it read back from others: its refs holes, a celebrity's filmography.)
      for (const e of old.embeds) if (e.starts !== null && e.starts[o + 1]! > e.starts[o]!) goneReadBack = true;
      continue;
    }
    if (j <= last) return null;
    newOf[o] = last = j;
    if (same(old.list, o, now.list, j) && same(old.detail.own, o, now.detail.own, j)) continue;
    const a = (was ??= knownCollection(old)).get(slug)!;
    const b = (is ??= knownCollection(now)).get(slug)!;
    const differ = fields.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
    if (differ.length > 0) changed.set(o, differ);
  }
  return { newOf, changed, goneReadBack };
}

/** What movedRecords finds. */
export interface Moved {
  /** Each old record's number now, -1: gone. */
  readonly newOf: Int32Array;
  /** Old records whose values of the fields asked differ, with those fields. */
  readonly changed: ReadonlyMap<number, readonly string[]>;
  /** Whether a record gone read records of others back (a celebrity's filmography not empty: a movie's cast named it). */
  readonly goneReadBack: boolean;
}

/**
 * `ix` (a collection kept after an edit of `target`'s file, which moved `target`'s records: movedRecords
 * `newOf`, `size` records now) with what it numbers by `target`'s records renumbered: embedded ids,
 * and the filter tables numbered by them (an empty posting for each record inserted), as a build
 * against the new index numbers them (PostingCollector.finish); null when a table is not numbered by `newOf`'s records.
 */
export function renumberedBy(ix: CollectionIndex, target: CollectionName, moved: Moved, size: number): CollectionIndex | null {
  const newOf = moved.newOf;
  const mapIds = (ids: Int32Array) => ids.map((id) => (id < 0 ? id : newOf[id]!));
  if (newOf.includes(-1)) {
    // Records of `target` gone: kept only when every reference to them is an embedded record's (one
    // id per record, checked below), or one `target` reads back (a movie's cast names a celebrity
    // exactly when its filmography holds the movie: those of the gone were empty).
    const refs: string[] = [];
    refPaths(ix.def.source, '', target, refs);
    const readBack = RESOURCES[target].referrers?.includes(ix.def.name) === true && !moved.goneReadBack;
    if (!readBack && !refs.every((f) => ix.embeds.some((e) => e.field === f && e.target === target && e.starts === null))) return null;
    for (const e of ix.embeds) if (e.target === target && e.ids.some((id) => id >= 0 && newOf[id]! < 0)) return null;
  }
  const embeds = ix.embeds.map((e) => (e.target === target ? { ...e, ids: mapIds(e.ids) } : e));
  const postings = ix.postings.map((t) => {
    if (t.embed < 0 || ix.embeds[t.embed]!.target !== target) return t;
    const K = t.offsets.length - 1;
    if (K !== newOf.length) return null;
    const offsets = new Int32Array(size + 1);
    for (let k = 0; k < K; k++) {
      if (newOf[k]! >= 0) offsets[newOf[k]! + 1] = t.offsets[k + 1]! - t.offsets[k]!;
      else if (t.offsets[k + 1] !== t.offsets[k]) return null;
    }
    for (let j = 0; j < size; j++) offsets[j + 1]! += offsets[j]!;
    let bitsAt = t.bitsAt;
    if (bitsAt.length > 0) {
      bitsAt = new Int32Array(size).fill(-1);
      for (let k = 0; k < K; k++) {
        if (newOf[k]! >= 0) bitsAt[newOf[k]!] = t.bitsAt[k]!;
        else if (t.bitsAt[k]! >= 0) return null;
      }
    }
    // The postings' ids, their lists in each order and their bitmaps stay in the same order (the
    // numbering ascends): only where each starts moves.
    const sortedKeys = mapIds(t.sortedKeys);
    if (sortedKeys.includes(-1)) return null;
    return { ...t, offsets, sortedKeys, bitsAt };
  });
  if (postings.some((t) => t === null)) return null;
  return withListLinked({ ...ix, embeds, postings: postings as PostingTable[] });
}

/** The memory every typed array of `value` lies in (not the definition, nor the indexes embeds read). */
function buffersOf(value: unknown, out = new Set<ArrayBufferLike>()): Set<ArrayBufferLike> {
  if (ArrayBuffer.isView(value)) out.add(value.buffer);
  else if (Array.isArray(value)) for (const v of value) buffersOf(v, out);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) if (k !== 'def' && k !== 'index' && k !== 'source') buffersOf(v, out);
  return out;
}

/**
 * `value` with every typed array that lies in one of `buffers` replaced by a copy (objects and arrays
 * copied only where something under them is): never the definition, nor the indexes embeds read
 * (nor what a list arena's embed reads of them: fragments.ts ListEmbed `source`).
 * (patch.ts copies a kept collection off the old cache file's memory with it too.)
 */
export function copiedOff<T>(value: T, buffers: ReadonlySet<ArrayBufferLike>): T {
  if (ArrayBuffer.isView(value)) {
    if (!buffers.has(value.buffer)) return value;
    return (Buffer.isBuffer(value) ? Buffer.from(value) : (value as unknown as Uint8Array).slice()) as T;
  }
  if (Array.isArray(value)) {
    const out = value.map((v) => copiedOff(v, buffers));
    return (out.some((v, i) => v !== value[i]) ? out : value) as T;
  }
  if (value === null || typeof value !== 'object') return value;
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'def' || k === 'index' || k === 'source') continue;
    const c = copiedOff(v, buffers);
    if (c !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = c;
  }
  return (out ?? value) as T;
}

/** The paths of the fields of `schema` that reference records of `target` (a top-level field by its name). */
function refPaths(schema: Schema, path: string, target: string, out: string[]): void {
  if (schema.type === 'string' && schema.ref === target) out.push(path);
  else if (schema.type === 'object') for (const [k, v] of Object.entries(schema.properties)) refPaths(v, path === '' ? k : `${path}.${k}`, target, out);
  else if (schema.type === 'array') refPaths(schema.items, `${path}[]`, target, out);
  else if (schema.type === 'map') refPaths(schema.values, `${path}{}`, target, out);
}
