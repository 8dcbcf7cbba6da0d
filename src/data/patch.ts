// After an edit of a few records of one data file, the collection made from it is rebuilt from its
// previous index (the live snapshot's, or the boot cache written for the file before the edit) instead
// of from every record (issue 19: an edit of one outfit at 100k rebuilt 270k outfits, 10-12 s). The
// file is read and cut into records (never parsed whole); a group of records (record-groups.ts) whose
// source bytes have the digest of the same group before is taken as it was; the records of the
// groups that changed are parsed, validated, linked and written as a full build would, and each such
// group must keep its records' _id and embedded records. Then every order, posting and range stays
// as it is, the JSON arenas are the old ones with those records' bytes replaced, and what changed is
// put right: a record whose sort key changed is moved in that order; a search text changed (a title)
// moves the grams it loses and gains (or, where texts are grouped, the search index is built again
// from every record's text); a slug changed (to one no other record has) makes the slug table's
// slots again; a filter value changed makes that filter's table again from every record's key, a
// range value the range index. Records added at the end are put in every order, filter table,
// search gram and the slug table (made for the new count), records removed from the end taken out
// of them. Any other edit (records removed or moved elsewhere, an _id, an embedded record, invalid
// data...) is not patched: the caller builds it whole, which also reports invalid data as always.
// test/data/patch.test.ts compares every answer of a patched index with a full build's.
import { join } from 'node:path';
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName, LinkContext, LinkedRecord, OutputField, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import { detailBytes, embedFields, listEmbedPlan, type Details, type Embed } from './detail-layout.ts';
import { fragment, offsetsOf, recordOffsetsOf, type Fragments, type RecordOffsets } from './fragments.ts';
import { memberKey, memberString } from './json-bytes.ts';
import { fold } from './fold.ts';
import { indexBuilder, PostingCollector, searchTextOf, slugId, slugOf, withListLinked, withTargets, type CollectionIndex, type PostingTable, type RangeIndex, type Targets } from './indexes.ts';
import { decodableFields, knownCollection } from './known.ts';
import type { KnownCollections } from './load.ts';
import { groupCount, RECORD_GROUP, SourceDigester } from './record-groups.ts';
import { readRecords } from './records.ts';
import { searchIndexOfTexts, searchIndexWith, type TextChange } from './search-index.ts';
import { regroupedIndexWith } from './search-regroup.ts';
import type { SearchFrom } from './search-text.ts';
import { slugTableAt, stringAt, type StringTable } from './string-table.ts';
import { checkObject, type Findings } from './validate.ts';
import { readApart } from './boot-cache-read.ts';
import { digestWhileReading } from './content-digest.ts';
import { copiedOff, keysOf, mergedOrder, NO_KEYS, type FilterDef, orderComparator, sameKey, ShiftMatcher, shiftedIndex, unknownDigest } from './patch-shift.ts';
import { decoded, linkHolders, shownField } from './link-holders.ts';

/** More changed records than this share of the collection: a full build (the patch's gain is gone). */
const MAX_CHANGED_SHARE = 0.05;

/**
 * `changed` (patchCollection): the ids of the records of the groups read again, ascending, and their
 * source records as the file holds them now (filmography.ts: a movie's cast names celebrities by slug,
 * which its served JSON does not show).
 */
export type PatchResult =
  | { readonly index: CollectionIndex; readonly records: number; readonly changed?: { readonly ids: Int32Array; readonly sources: readonly SourceRecord[] } }
  | { readonly index: null; readonly why: string };

/**
 * Whether `def`'s index can be patched at all: none of its answers depend on other records of its own,
 * and what it reads back from other collections' records (`referrers`: a celebrity's filmography from
 * the movies' casts) is only fields kept as holes filled from their list items (refs embeds), which a
 * changed record takes from its detail before the edit: the files those come from did not change (a
 * patch's base differs from the files now in its own file alone), nor did its slug (checked).
 */
export function patchable(def: ResourceDefinition): boolean {
  const refs = embedFields(def).filter((e) => e.refs).map((e) => e.field);
  const derived = Object.keys(def.derived.properties).filter((f) => f !== def.late?.field);
  return (def.referrers?.length ?? 0) === 0 ? refs.length === 0 : derived.every((f) => refs.includes(f));
}

/** The derived fields of `def` read back from other collections' records: taken from the old record's detail by a patch. */
const readBack = (def: ResourceDefinition): string[] => ((def.referrers?.length ?? 0) === 0 ? [] : embedFields(def).filter((e) => e.refs).map((e) => e.field));

/**
 * `old` (the index of `def` built from the file before the edit, with the same collections to link
 * to as now) patched to the file in `dir` as it is now, or why not. `targets`: the indexes of the
 * collections it embeds from; `known`: its link targets (load.ts KnownCollections); `read`: the
 * reader's chunk size (tests: groups cut across chunks), and the file's identity as the load found it
 * (boot-cache-format.ts readDataIdentity), whose digest is made from the bytes read when not known
 * (content-digest.ts: the boot cache write then reads the file no more).
 */
export async function patchCollection(dir: string, def: ResourceDefinition, old: CollectionIndex, targets: Targets, known: KnownCollections, read: { readonly chunkBytes?: number; readonly identity?: string } = {}): Promise<PatchResult> {
  // A list item's embedded record is read from the index it embeds (fragments.ts ListEmbed).
  if (old.list.embed != null) old = withTargets(old, targets);
  const was = old.groups;
  if (!patchable(def)) return { index: null, why: 'its answers read other records' };
  if (was?.sources == null) return { index: null, why: 'no record digests' };
  const n = old.size;
  const digester = new SourceDigester();
  /** The current group's records as read: their bytes (a view of the reader's chunk, or a copy), with each record's place in them. */
  let pending: { bytes: Buffer; starts: number[]; ends: number[] }[] = [];
  /** The groups that changed, and their records' bytes. */
  const changedGroups: number[] = [];
  const changedTexts: string[] = [];
  let tooMany = false;
  const limit = Math.max(RECORD_GROUP * 4, Math.ceil(n * MAX_CHANGED_SHARE));
  // Records inserted or removed in the middle: the records matched to the old groups wherever they moved (patch-shift.ts).
  const matcher = new ShiftMatcher(old, limit);
  matcher.slugIdOf = (slug) => slugId(old, slug);
  digester.onGroup = (g, digest) => {
    matcher.fixed(g, digest);
    const same = g < groupCount(n) && digest.every((w, k) => w === was.sources![4 * g + k]);
    if (!same && !tooMany) {
      changedGroups.push(g);
      for (const p of pending) for (let k = 0; k < p.starts.length; k++) changedTexts.push(p.bytes.toString('utf8', p.starts[k], p.ends[k]));
      if (changedTexts.length > limit) tooMany = true;
    }
    pending = [];
  };
  const hashing = read.identity === undefined ? null : digestWhileReading(dir, read.identity);
  try {
    await readRecords(join(dir, def.file), () => {}, {
      chunkBytes: read.chunkBytes,
      onBytes: hashing?.update,
      parse: false,
      onSlices: (buf, starts, ends) => {
        for (let k = 0; k < starts.length; ) {
          const m = Math.min(starts.length, k + RECORD_GROUP - (digester.count % RECORD_GROUP));
          // The chunk's own bytes (valid during this call: the reader reads the next chunk into the
          // same buffer), read only if the group turns out changed; the group the chunk ends in is
          // copied below. (Copying every group's bytes was 0.15 s of a 1.25 s patch at 100k.)
          const piece = { bytes: buf, starts: starts.slice(k, m), ends: ends.slice(k, m) };
          pending.push(piece);
          digester.slices(buf, piece.starts, piece.ends);
          matcher.slices(buf, piece.starts, piece.ends);
          k = m;
        }
        matcher.keep(buf);
        pending = pending.map((p) => {
          if (p.bytes !== buf) return p;
          const from = p.starts[0]!;
          return { bytes: Buffer.from(buf.subarray(from, p.ends[p.ends.length - 1])), starts: p.starts.map((x) => x - from), ends: p.ends.map((x) => x - from) };
        });
      },
    });
    await hashing?.finish();
  } catch (err) {
    return { index: null, why: `not read: ${(err as Error).message}` };
  }
  // Records added at the end (the other edit a person makes): their groups are new, the last one
  // before them changed; the records' ids stay. Records removed from the end: the ids past the new
  // count go (a removal elsewhere moves every later record: their _ids differ, built whole).
  const size = digester.count;
  if (size === 0 || n === 0) return { index: null, why: `${size} records where there were ${n}` };
  const sources = digester.finish(size)!;
  const moved = matcher.finish();
  if (moved !== null) return matcher.tooMany ? { index: null, why: 'too many records changed' } : shiftedIndex(def, old, moved, size, sources, targets, known);
  if (tooMany) return { index: null, why: 'too many records changed' };
  if (changedGroups.length === 0 && size === n) return { index: { ...old, groups: { ...was, sources } }, records: 0, changed: { ids: new Int32Array(0), sources: [] } };

  // The changed records, as a full load would take them: parsed, validated, references checked, linked.
  // What a record reads back from others (a filmography) is its record's before the edit: the same
  // slug, and the files of those others did not change. Records removed: others may name them (built
  // whole, which reports it); records added: no unchanged file can name a slug no record had.
  const back = readBack(def);
  if (back.length > 0 && size < n) return { index: null, why: 'records others read back removed' };
  const ctx: LinkContext = { get: (c: CollectionName, slug: string) => known[c]?.get(slug), referrers: () => [] };
  const linked: LinkedRecord[] = [];
  const records: SourceRecord[] = [];
  let withEmbeds: CollectionIndex | null = null;
  const firstIds = changedGroups.flatMap((g) => Array.from({ length: Math.max(0, Math.min(size, (g + 1) * RECORD_GROUP) - g * RECORD_GROUP) }, (_, i) => g * RECORD_GROUP + i));
  for (const text of changedTexts) {
    let r: unknown;
    try {
      r = JSON.parse(text);
    } catch {
      return { index: null, why: 'invalid JSON' };
    }
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return { index: null, why: 'a record that is not an object' };
    const found: Findings = { problems: [], refs: [] };
    checkObject(def.source, r as Record<string, unknown>, '', found);
    if (found.problems.length > 0) return { index: null, why: 'invalid records' };
    for (const site of found.refs) {
      const target = known[site.collection as CollectionName];
      if (target === undefined || !target.has(site.slug)) return { index: null, why: 'a reference to a record that does not exist' };
    }
    const record = def.link(r as SourceRecord, ctx);
    const id = firstIds[linked.length];
    if (back.length > 0 && id !== undefined && id < n) {
      // The old detail, its holes filled from the indexes they were made with (`targets`: the same files).
      withEmbeds ??= { ...old, embeds: old.embeds.map((e) => ({ ...e, index: targets(e.target) ?? null })) };
      if (withEmbeds.embeds.some((e) => e.index === null)) return { index: null, why: 'an embedded collection not indexed' };
      const was = (JSON.parse(detailBytes(withEmbeds.list, withEmbeds.detail, withEmbeds.embeds, id, 20000101).toString('utf8')) as { data: Record<string, unknown> }).data;
      // A slug changed: only of a record no other read back (an empty filmography), to one no record had
      // (which the unchanged files cannot name either); else built whole (which reports what names the old one).
      if (record.slug !== slugOf(old, id) && (back.some((f) => !Array.isArray(was[f]) || (was[f] as unknown[]).length > 0) || slugId(old, record.slug) >= 0)) return { index: null, why: 'a slug others read back changed' };
      for (const f of back) (record as Record<string, unknown>)[f] = was[f];
    }
    records.push(r as SourceRecord);
    linked.push(record);
  }
  const builder = indexBuilder(def, { records: linked.length, bytes: 0 }, targets);
  for (const r of linked) builder.add(r);
  const made = builder.finish();
  // Each changed group gives the indexes what it gave before: its records' _id and filter values (the
  // index digest; else each record's are compared, and a table of a filter whose value changed is
  // made again), each record's embedded ids and range value; its sort keys too (their digest), or
  // else the records whose keys changed are put in their new places.
  let sortsChanged = false;
  /** Whether a changed group's _id or filter values differ by its digest: then each record's are compared. */
  let keysChanged = false;
  for (let j = 0; j < changedGroups.length; j++) {
    const g = changedGroups[j]!;
    // (A group numbered anew after records moved has digests unknown: patch-shift.ts.)
    if (made.groups!.keys[2 * j] !== was.keys[2 * g] || made.groups!.keys[2 * j + 1] !== was.keys[2 * g + 1] || (g < groupCount(n) && unknownDigest(was.keys, g))) keysChanged = true;
    if (made.groups!.sorts[2 * j] !== was.sorts[2 * g] || made.groups!.sorts[2 * j + 1] !== was.sorts[2 * g + 1] || (g < groupCount(n) && unknownDigest(was.sorts, g))) sortsChanged = true;
  }
  if ((made.detail.plan === null) !== (old.detail.plan === null) || made.embeds.length !== old.embeds.length || (made.range === null) !== (old.range === null)) return { index: null, why: 'another layout' };
  if ((made.searchFrom === null) !== (old.searchFrom === null)) return { index: null, why: 'another layout' };
  // Record ids of the changed records, ascending (made's record j is ids[j]).
  const ids = new Int32Array(linked.length);
  let j = 0;
  for (const g of changedGroups) for (let i = g * RECORD_GROUP; i < Math.min(size, (g + 1) * RECORD_GROUP); i++) ids[j++] = i;
  if (j !== linked.length) return { index: null, why: 'records counted twice' };
  /** Whether a changed record's search text (or where it is read from) changed: then the search index is built again from the texts. */
  let textsChanged = false;
  /** Whether a changed record's slug changed: then the slug table's slots are made again (each new slug checked unique first). */
  let slugsChanged = size !== n;
  /** Whether a changed record's range value changed: then the range index is made again. */
  let rangeChanged = size !== n && old.range !== null;
  // Records removed from the end: their texts leave the search index.
  if (size < n) textsChanged = true;
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    if (id >= n) {
      // An added record: its text is new (an empty one before), and it has no embed or range value to compare.
      textsChanged = true;
      continue;
    }
    if (slugOf(made, k) !== slugOf(old, id)) slugsChanged = true;
    if (searchTextOf(made, k) !== searchTextOf(old, id) || bit(made.searchFrom?.derived, k) !== bit(old.searchFrom?.derived, id)) textsChanged = true;
    if (made.embeds.some((e, x) => e.starts === null && e.ids[k] !== old.embeds[x]!.ids[id])) return { index: null, why: 'an embedded record changed' };
    if (made.range !== null && !Object.is(made.range.byId[k], old.range!.byId[id])) rangeChanged = true;
  }
  if (slugsChanged && !slugsUnique(old, made, ids)) return { index: null, why: 'a slug another record has' };
  if (size > n && !addedIdsUnique(old, ids, linked)) return { index: null, why: 'an _id another record has' };
  const filters = keysChanged || size !== n ? changedFilters(old, made, ids, linked, size) : new Map<number, FilterKeys>();
  if (typeof filters === 'string') return { index: null, why: filters };
  // A search text changed: the texts of every record (those of the others as the old index holds
  // them), the search index built from them as a full build would, and the table and `derived` bits
  // with the changed records' entries; a text sort (the title's) may have moved them too.
  const search = textsChanged ? searchRebuilt(old, made, ids, size) : null;
  // What is kept of `old` may lie in the memory its arenas do (a boot cache file is read into one
  // allocation): copied out (the arenas themselves are made anew below), so the replaced arenas are
  // freed with the old snapshot (else +370 MB of RSS after each such reload at 100k).
  const arenas = new Set([old.list.bytes.buffer, old.detail.own.bytes.buffer]);
  const copied = copiedOff({ ...old, list: null, detail: { ...old.detail, own: null }, ...search }, arenas);
  const kept: CollectionIndex = { ...copied, list: old.list, detail: { ...copied.detail, own: old.detail.own } };
  // Sort keys of the same digests are the same, but for a text sort's key that is the search text (its
  // digest holds a marker for it: indexes.ts), which may have changed with it.
  // Added records go into every order.
  const sorts = old.def.sorts.flatMap((sort, s) => (sortsChanged || size > n || (textsChanged && sort.type === 'text') ? [s] : []));
  const reorder = sorts.length > 0 ? reordered(kept, made, ids, linked, sorts, size) : { orders: kept.orders, ranks: kept.ranks, postings: kept.postings };
  if (reorder === null) return { index: null, why: 'a sort key not read back from the JSON' };
  // Records removed from the end leave the other orders too (no key read: none of them moved).
  const sorted = size >= n ? reorder : { ...reorder, orders: reorder.orders.map((o, s) => (sorts.includes(s) ? o : o.filter((id) => id < size))), ranks: reorder.ranks.slice() };
  if (size < n) for (let s = 0; s < sorted.orders.length; s++) if (!sorts.includes(s)) (sorted.ranks as Int32Array[])[s] = rankOf(sorted.orders[s]!);
  const per = old.detail.plan?.listCuts.length ?? 0;
  const ownPer = old.detail.plan === null ? 0 : old.detail.plan.ownRuns - 1;
  const detail: Details = {
    plan: old.detail.plan,
    own: spliceFragments(old.detail.own, made.detail.own, ids, size),
    cuts: spliceRecordOffsets(kept.detail.cuts, made.detail.cuts, ids, per, size),
    ownCuts: spliceRecordOffsets(kept.detail.ownCuts, made.detail.ownCuts, ids, ownPer, size),
  };
  const list = spliceFragments(old.list, made.list, ids, size);
  const at = spliceRecordOffsets(kept.slugs.at, made.slugs.at, ids, 1, size);
  const embeds = kept.embeds.map((e, x) => (e.starts !== null ? spliceHoles(e, made.embeds[x]!, ids, size) : size === n ? e : { ...e, ids: spliceIds(e.ids, made.embeds[x]!.ids, ids, size) }));
  // A filter whose value changed (every filter, when records were added): its table made again from
  // every record's keys (or embedded record's id), in the final orders.
  const postings = sorted.postings.map((t, x) => {
    const keys = filters.get(x);
    if (keys === undefined) return t;
    const c = new PostingCollector(old.def.filters.filter((f) => f.kind !== 'range')[x] as Exclude<ResourceDefinition['filters'][number], { kind: 'range' }>, t.embed);
    if (keys instanceof Int32Array) for (let id = 0; id < size; id++) c.addId(keys[id]!);
    else for (const k of keys) c.addKeys(k === null ? NO_KEYS : typeof k === 'string' ? [k] : k);
    return c.finish(size, sorted.orders, t.embed >= 0 ? t.offsets.length - 1 : 0);
  });
  const range = rangeChanged ? rangeWith(old.range!, made.range!, ids, size) : kept.range;
  const sortKeys = kept.sortKeys.map((k, s) => (k === null || (ids.length === 0 && size === n) ? k : spliceIds(k, made.sortKeys[s]!, ids, size)));
  // The changed groups' digests are theirs now (a later edit of one compares with them).
  const groupKeys = new Uint32Array(2 * groupCount(size));
  const groupSorts = new Uint32Array(2 * groupCount(size));
  groupKeys.set(kept.groups!.keys.subarray(0, groupKeys.length));
  groupSorts.set(kept.groups!.sorts.subarray(0, groupSorts.length));
  changedGroups.forEach((g, j) => {
    groupKeys.set(made.groups!.keys.subarray(2 * j, 2 * j + 2), 2 * g);
    groupSorts.set(made.groups!.sorts.subarray(2 * j, 2 * j + 2), 2 * g);
  });
  const index: CollectionIndex = {
    ...kept,
    ...sorted,
    size,
    embeds,
    sortKeys,
    range,
    postings,
    slugs: slugsChanged ? slugTableAt(list.bytes, list.starts, at) : { ...kept.slugs, at },
    list,
    detail,
    groups: { sources, keys: groupKeys, sorts: groupSorts },
  };
  return { index: withListLinked(index), records: linked.length, changed: { ids, sources: records } };
}

/**
 * The search index, text table and `derived` bits of `old` with the texts of records `ids` those of
 * `made`'s records 0, 1, ...: the postings of the grams those texts lose and gain updated
 * (search-index.ts searchIndexWith; where the trigrams index groups of texts, search-regroup.ts), or,
 * where the new texts would not be grouped as the old were, built from every record's text; laid out as a full build of the same texts lays them out
 * (test/data/patch.test.ts).
 */
function searchRebuilt(old: CollectionIndex, made: CollectionIndex, ids: Int32Array, size: number): Pick<CollectionIndex, 'search' | 'searchText' | 'searchFrom'> {
  const changes: TextChange[] = [];
  for (let k = 0; k < ids.length; k++) {
    // (An added record's text was none: an empty one.)
    const was = ids[k]! < old.size ? searchTextOf(old, ids[k]!) : '';
    const now = searchTextOf(made, k);
    if (was !== now || ids[k]! >= old.size) changes.push({ id: ids[k]!, was, now });
  }
  // (A record removed from the end: its text an empty one now.)
  for (let id = size; id < old.size; id++) changes.push({ id, was: searchTextOf(old, id), now: '' });
  // (Trigrams over groups of equal texts: only the groups the changed texts leave and join made again.)
  let search = searchIndexWith(old.search, changes, size) ?? regroupedIndexWith(old.search, changes, size, (id) => searchTextOf(old, id));
  if (search === null) {
    const texts = searchTexts(old);
    for (const c of changes) texts[c.id] = c.now;
    texts.length = size;
    search = searchIndexOfTexts(old.search, texts, changes);
  }
  let searchFrom: SearchFrom | null = null;
  if (old.searchFrom !== null) {
    const derived = new Uint32Array((size + 31) >>> 5);
    derived.set(old.searchFrom.derived.subarray(0, derived.length));
    // (Bits of records removed from the end, in the last word, cleared.)
    if (size < old.size && (size & 31) !== 0) derived[derived.length - 1]! &= (1 << (size & 31)) - 1;
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (bit(made.searchFrom!.derived, k) === 1) derived[id >>> 5]! |= 1 << (id & 31);
      else derived[id >>> 5]! &= ~(1 << (id & 31));
    }
    searchFrom = { field: old.searchFrom.field, derived };
  }
  return { search, searchText: spliceStrings(old.searchText, made.searchText, ids, size), searchFrom };
}

/**
 * The `size` strings of `old` (a table without hash slots) with those of `ids` (ascending) `made`'s
 * strings 0, 1, ... (ids past `old`'s: added at the end).
 */
function spliceStrings(old: StringTable, made: StringTable, ids: Int32Array, size: number): StringTable {
  let wide = old.units instanceof Uint16Array;
  for (let u = 0; u < made.units.length && !wide; u++) wide = made.units[u]! > 0xff;
  const total = splicedLength(old.starts, made.starts, ids, size);
  const units = wide ? new Uint16Array(total) : new Uint8Array(total);
  const starts = splice(old.starts, made.starts, ids, size, (fromMade, a, b, at) => units.set((fromMade ? made : old).units.subarray(a, b), at));
  return { units, starts: offsetsOf(starts, total), slots: new Int32Array(0) };
}

/** The folded search text of each record of `ix`. */
function searchTexts(ix: CollectionIndex): string[] {
  const texts = new Array<string>(ix.size);
  for (let id = 0; id < ix.size; id++) texts[id] = searchTextOf(ix, id);
  return texts;
}

/** The position of each record id in `order`. */
function rankOf(order: Int32Array): Int32Array {
  const rank = new Int32Array(order.length);
  for (let p = 0; p < order.length; p++) rank[order[p]!] = p;
  return rank;
}

/**
 * Each record's keys in a filter table made again: the id of the embedded record (Int32Array), or per
 * record its key (null: none) or, where records may hold several, its keys in an order that numbers
 * them as the record's own order does (PostingCollector.addKeys).
 */
type FilterKeys = Int32Array | (string | readonly string[] | null)[];

/**
 * Per filter table (its number) whose keys changed for a record of `ids` (`made`'s records 0, 1, ...,
 * linked as `linked`): every record's keys, those of the changed records as `made` has them; or why
 * the edit is not patched: an `_id` changed. Tables numbered by an embedded record's id are checked
 * with the embeds.
 */
function changedFilters(old: CollectionIndex, made: CollectionIndex, ids: Int32Array, linked: readonly LinkedRecord[], size: number): Map<number, FilterKeys> | string {
  const n = old.size;
  const before = knownCollection(old);
  for (let k = 0; k < ids.length && ids[k]! < n; k++) if (before.get(slugOf(old, ids[k]!))?._id !== linked[k]!._id) return 'an _id changed';
  const out = new Map<number, FilterKeys>();
  for (let x = 0; x < old.postings.length; x++) {
    const t = old.postings[x]!;
    const m = made.postings[x]!;
    // Records added: a table numbered by embedded records' ids made again from every record's.
    if (t.embed >= 0 && size !== n) out.set(x, spliceIds(old.embeds[t.embed]!.ids, made.embeds[t.embed]!.ids, ids, size));
    if (t.keys === null || m.keys === null) continue;
    const was = keyOfRecord(t, n);
    const now = keyOfRecord(m, ids.length);
    const keyAt = (table: PostingTable, k: number) => (k < 0 ? null : stringAt(table.keys!, k));
    let changed = size !== n;
    for (let k = 0; k < ids.length && !changed; k++) changed = keyAt(t, was.key[ids[k]!]!) !== keyAt(m, now.key[k]!);
    if (!changed) continue;
    if (was.several || now.several) {
      // Records not changed keep their numbers; the changed ones are `linked`.
      const oldOf = new Int32Array(size).map((_, id) => (id < n ? id : -1));
      const madeOf = new Int32Array(size).fill(-1);
      for (let k = 0; k < ids.length; k++) madeOf[ids[k]!] = k;
      const filter = old.def.filters.find((f) => f.kind !== 'range' && f.param === t.param) as FilterDef;
      out.set(x, keysOf(old, t, linked, oldOf, madeOf, size, filter, before));
      continue;
    }
    const strings: (string | null)[] = [];
    const keys = new Array<string | null>(size);
    for (let id = 0; id < Math.min(n, size); id++) {
      const k = was.key[id]!;
      keys[id] = k < 0 ? null : (strings[k] ??= stringAt(t.keys, k));
    }
    for (let k = 0; k < ids.length; k++) keys[ids[k]!] = keyAt(m, now.key[k]!);
    out.set(x, keys);
  }
  return out;
}

/** The key number of each of `size` records in table `t` (-1: none), and whether some record has several. */
function keyOfRecord(t: PostingTable, size: number): { readonly key: Int32Array; readonly several: boolean } {
  const key = new Int32Array(size).fill(-1);
  let several = false;
  for (let k = 0; k + 1 < t.offsets.length; k++) {
    for (let e = t.offsets[k]!; e < t.offsets[k + 1]!; e++) {
      const id = t.ids[e]!;
      if (key[id] !== -1) several = true;
      key[id] = k;
    }
  }
  return { key, several };
}

/**
 * True when each of the slugs of `made`'s records (records `ids` of `old` after the edit) is no other
 * record's: not another changed record's, nor that of a record of `old` that is not changed (a full
 * build reports a duplicate slug as invalid data: such an edit is built whole, which reports it).
 */
function slugsUnique(old: CollectionIndex, made: CollectionIndex, ids: Int32Array): boolean {
  const changed = new Set(ids);
  const seen = new Set<string>();
  for (let k = 0; k < ids.length; k++) {
    const slug = slugOf(made, k);
    if (seen.has(slug)) return false;
    seen.add(slug);
    const holder = slugId(old, slug);
    if (holder !== -1 && !changed.has(holder)) return false;
  }
  return true;
}

/**
 * True when no record added at the end (records `ids` past `old`'s, linked as `linked`) has the `_id`
 * of a record before the edit (a full build reports a duplicate `_id` as invalid data: such an edit is
 * built whole, which reports it). Changed records keep their `_id` (changedFilters), and the changed
 * records' among themselves are checked as they are read.
 */
function addedIdsUnique(old: CollectionIndex, ids: Int32Array, linked: readonly LinkedRecord[]): boolean {
  const added = new Set<unknown>();
  for (let k = 0; k < ids.length; k++) if (ids[k]! >= old.size) added.add(linked[k]!._id);
  const key = memberKey('_id');
  for (let id = 0; id < old.size; id++) {
    const item = fragment(old.list, id, 20000101);
    const plain = memberString(item, key);
    if (added.has(plain ?? (JSON.parse(item.toString('utf8')) as { _id: unknown })._id)) return false;
  }
  return true;
}

/** Whether `made`'s records 0, 1, ... are, byte for byte (and where their late values go), records `ids` of `old`. */
function sameRecords(old: Fragments, made: Fragments, ids: Int32Array): boolean {
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    if (old.bytes.compare(made.bytes, made.starts[k]!, made.starts[k + 1]!, old.starts[id]!, old.starts[id + 1]!) !== 0) return false;
    if (old.gaps !== null && (made.gaps === null || old.gaps[id]! - old.starts[id]! !== made.gaps[k]! - made.starts[k]!)) return false;
  }
  return true;
}

/**
 * spliceFragments in `old`'s own memory (no late field, `size` = `old`'s records), when its buffer has
 * room for the result (boot-cache-read.ts reads a base's arenas apart with room after them); else
 * null. The runs of unchanged records moved left are moved first, in order, those moved right then,
 * from the last (a run's new place never overlaps the old place of a run not moved yet), then the
 * changed records written: an edit that keeps each record's length moves nothing. `old`'s bytes are
 * the result's afterwards.
 */
function spliceInPlace(old: Fragments, made: Fragments, ids: Int32Array, size: number): Fragments | null {
  if (old.gaps !== null || made.gaps !== null || size !== old.starts.length - 1) return null;
  const runs: number[] = [];
  const starts = splice(old.starts, made.starts, ids, size, (fromMade, a, b, at) => (fromMade ? undefined : runs.push(a, b, at)));
  const total = starts[size]!;
  const length = old.starts[size]!;
  // (Only an arena alone in its memory: boot-cache-read.ts readApart.)
  if (!readApart.has(old.bytes.buffer) || total > old.bytes.buffer.byteLength - old.bytes.byteOffset) return null;
  const all = Buffer.from(old.bytes.buffer, old.bytes.byteOffset, Math.max(total, length));
  for (let r = 0; r < runs.length; r += 3) if (runs[r + 2]! < runs[r]!) all.copyWithin(runs[r + 2]!, runs[r]!, runs[r + 1]!);
  for (let r = runs.length - 3; r >= 0; r -= 3) if (runs[r + 2]! > runs[r]!) all.copyWithin(runs[r + 2]!, runs[r]!, runs[r + 1]!);
  for (let j = 0; j < ids.length; j++) made.bytes.copy(all, starts[ids[j]!]!, made.starts[j]!, made.starts[j + 1]!);
  return { bytes: all.subarray(0, total), starts: offsetsOf(starts, total), gaps: null, late: null, keys: null };
}

/**
 * The `size` records of `old` with those of `ids` (ascending) `made`'s records 0, 1, ... (ids past
 * `old`'s: added at the end; no late field).
 */
function spliceFragments(old: Fragments, made: Fragments, ids: Int32Array, size: number): Fragments {
  const total = splicedLength(old.starts, made.starts, ids, size);
  const bytes = Buffer.allocUnsafeSlow(total);
  const starts = splice(old.starts, made.starts, ids, size, (fromMade, a, b, at) => (fromMade ? made : old).bytes.copy(bytes, at, a, b));
  if (old.gaps === null || made.gaps === null) return { bytes, starts: offsetsOf(starts, total), gaps: null, late: null, keys: null };
  // A late field: each record's gap as far into it as before, its key as it was (or as made); or an
  // embedded record's gap (its ids are the index's embed's: withListLinked).
  const gaps = new Float64Array(size);
  const keys = old.keys === null ? null : new Float64Array(size);
  for (let id = 0, j = 0; id < size; id++) {
    const fromMade = j < ids.length && ids[j] === id;
    const [f, k] = fromMade ? [made, j++] : [old, id];
    gaps[id] = starts[id]! + (f.gaps![k]! - f.starts[k]!);
    if (keys !== null) keys[id] = f.keys![k]!;
  }
  return { bytes, starts: offsetsOf(starts, total), gaps: offsetsOf(gaps, total), late: old.late, keys, embed: old.embed ?? null };
}

/**
 * A refs embed's holes (detail-layout.ts Embed: per record, its entries of `ids` and `at`) for `size`
 * records: `old`'s, those of records `ids` `made`'s.
 */
function spliceHoles(old: Embed, made: Embed, ids: Int32Array, size: number): Embed {
  const total = splicedLength(old.starts!, made.starts!, ids, size);
  const out = new Int32Array(total);
  const at = new Uint32Array(total);
  const starts = splice(old.starts!, made.starts!, ids, size, (fromMade, a, b, to) => {
    const from = fromMade ? made : old;
    out.set(from.ids.subarray(a, b), to);
    at.set(from.at!.subarray(a, b), to);
  });
  return { ...old, ids: out, at: recordOffsetsOf(at), starts: Uint32Array.from(starts) };
}

/** The length of entry `k` of a table whose entries start at `was` (0 past its last entry). */
const entryLength = (was: ArrayLike<number>, k: number) => (k < was.length - 1 ? was[k + 1]! - was[k]! : 0);

/** The length of the entries `splice` lays out for the same arguments. */
function splicedLength(old: ArrayLike<number>, made: ArrayLike<number>, ids: Int32Array, size: number): number {
  let total = old[Math.min(old.length - 1, size)]! - old[0]!;
  for (let j = 0; j < ids.length; j++) total += entryLength(made, j) - entryLength(old, ids[j]!);
  return total;
}

/**
 * The starts of `size` variable-length entries laid out back to back: `old`'s (starts `old`), those of
 * `ids` (ascending) replaced by `made`'s entries 0, 1, ... (ids past `old`'s: added at the end). Each
 * run of them is placed by `copy(fromMade, start, end, at)`: the unchanged entries between two changed
 * ones in one call, their starts shifted. (String tables and JSON arenas alike.)
 */
function splice(old: ArrayLike<number>, made: ArrayLike<number>, ids: Int32Array, size: number, copy: (fromMade: boolean, start: number, end: number, at: number) => void): Float64Array {
  const n = old.length - 1;
  const starts = new Float64Array(size + 1);
  let pos = 0;
  let i = 0;
  for (let j = 0; j <= ids.length; j++) {
    const upto = Math.min(j < ids.length ? ids[j]! : n, n, size);
    if (i < upto) {
      const from = old[i]!;
      copy(false, from, old[upto]!, pos);
      for (let k = i; k < upto; k++) starts[k] = old[k]! - from + pos;
      pos += old[upto]! - from;
    }
    if (j === ids.length) break;
    const a = made[j]!;
    const b = made[j + 1]!;
    copy(true, a, b, pos);
    starts[ids[j]!] = pos;
    pos += b - a;
    i = ids[j]! + 1;
  }
  starts[size] = pos;
  return starts;
}

/** `per` offsets for each of `size` records: `old`'s, those of records `ids` `made`'s (2 bytes each while every one fits). */
function spliceRecordOffsets(old: RecordOffsets, made: RecordOffsets, ids: Int32Array, per: number, size: number): RecordOffsets {
  if (per === 0) return old;
  let wide = old instanceof Uint32Array;
  for (let k = 0; k < made.length && !wide; k++) wide = made[k]! > 0xffff;
  const out = wide ? new Uint32Array(size * per) : new Uint16Array(size * per);
  out.set(old.subarray(0, out.length));
  for (let j = 0; j < ids.length; j++) for (let k = 0; k < per; k++) out[ids[j]! * per + k] = made[j * per + k]!;
  return out;
}

/** One number for each of `size` records: `old`'s, those of records `ids` `made`'s. */
function spliceIds<T extends Int32Array | Float64Array>(old: T, made: T, ids: Int32Array, size: number): T {
  const out = (old instanceof Float64Array ? new Float64Array(size) : new Int32Array(size)) as T;
  out.set(old.subarray(0, out.length));
  for (let j = 0; j < ids.length; j++) out[ids[j]!] = made[j]!;
  return out;
}

/** The range index of `size` records: `old`'s values, those of records `ids` `made`'s, ordered as indexes.ts orders them. */
function rangeWith(old: RangeIndex, made: RangeIndex, ids: Int32Array, size: number): RangeIndex {
  const byId = new Float64Array(size);
  byId.set(old.byId);
  for (let j = 0; j < ids.length; j++) byId[ids[j]!] = made.byId[j]!;
  const withValue = Int32Array.from({ length: size }, (_, i) => i).filter((i) => byId[i] === byId[i]);
  withValue.sort((a, b) => byId[a]! - byId[b]! || a - b);
  return { param: old.param, ids: withValue, values: Float64Array.from(withValue, (i) => byId[i]!), byId };
}

/** Bit `i` of a bitmap, or 0 without one. */
const bit = (bits: Uint32Array | undefined, i: number): number => (bits === undefined ? 0 : (bits[i >>> 5]! >>> (i & 31)) & 1);

/** A sort key as the index builder takes it: a number (NaN: none) or a folded text (null: none). */
function sortKey(type: 'number' | 'text', k: unknown): number | string | null {
  if (type === 'number') return k === null || k === undefined ? NaN : Number(k);
  return k === null || k === undefined ? null : fold(String(k));
}


/**
 * The sort orders, ranks and postings in order of `old` with the changed records (`made`'s record j
 * is record `ids[j]`, linked as `linked[j]`) where their new sort keys put them, as the builder's
 * orders would (indexes.ts buildOrder: a key of none last, ties by `_id`). The keys of the records
 * not changed are the index's kept keys (SortDef `kept`: a key no answer shows), else read back from
 * their JSON (known.ts, as a link target reads them), so a sort whose key is neither could not be put
 * right: null when a changed record's key or `_id` does not read back from its own new JSON as it was
 * built. Only the orders of `sorts`
 * (numbers in the definition's) may change; the others are kept. `size`: the records after the
 * edit, those past `old`'s added at the end (in every order of `sorts`).
 */
function reordered(old: CollectionIndex, made: CollectionIndex, ids: Int32Array, linked: readonly LinkedRecord[], sorts: readonly number[], size: number): Pick<CollectionIndex, 'orders' | 'ranks' | 'postings'> | null {
  const def = old.def;
  const before = knownCollection(old);
  const after = knownCollection(made);
  const oldRecord = (id: number) => before.get(slugOf(old, id))!;
  const idOf = new Map<number, number>();
  ids.forEach((id, j) => idOf.set(id, j));
  for (let j = 0; j < ids.length; j++) if (after.get(slugOf(made, j))!._id !== linked[j]!._id) return null;
  const orders = old.orders.slice();
  const ranks = old.ranks.slice();
  let postings = old.postings;
  for (const s of sorts) {
    const sort = def.sorts[s]!;
    const sign = sort.dir === 'asc' ? 1 : -1;
    const keyOf = new Map<number, number | string | null>();
    const moved: number[] = [];
    const oldKept = old.sortKeys[s] ?? null;
    const madeKept = made.sortKeys[s] ?? null;
    if ((oldKept === null) !== (madeKept === null)) return null;
    /** The key of old record `id`: kept, or read back from the old JSON. */
    const oldKey = (id: number) => (oldKept !== null ? oldKept[id]! : sortKey(sort.type, sort.key(oldRecord(id) as LinkedRecord)));
    for (let j = 0; j < ids.length; j++) {
      const k = madeKept !== null ? madeKept[j]! : sortKey(sort.type, sort.key(linked[j]!));
      if (madeKept === null && !sameKey(k, sortKey(sort.type, sort.key(after.get(slugOf(made, j))! as LinkedRecord)))) return null;
      keyOf.set(ids[j]!, k);
      // (A record added at the end is put in its place in every order.)
      if (ids[j]! >= old.size || !sameKey(k, oldKey(ids[j]!))) moved.push(ids[j]!);
    }
    if (moved.length === 0 && size === old.size) continue;
    // Records not moved keep their old keys and places.
    const key = (id: number) => {
      let k = keyOf.get(id);
      if (k === undefined) keyOf.set(id, (k = oldKey(id)));
      return k;
    };
    const idText = (id: number) => (idOf.has(id) ? linked[idOf.get(id)!]!._id : oldRecord(id)._id) as string;
    const compare = orderComparator(key, idText, sign);
    const was = orders[s]!;
    const isMoved = new Set(moved);
    // (Records removed from the end leave every order.)
    const rest = was.filter((id) => !isMoved.has(id) && id < size);
    moved.sort(compare);
    const order = mergedOrder(rest, moved, size, compare);
    const rank = new Int32Array(order.length);
    for (let p = 0; p < order.length; p++) rank[order[p]!] = p;
    orders[s] = order;
    ranks[s] = rank;
    postings = postings.map((t) => resorted(t, s, rank, isMoved));
  }
  return { orders, ranks, postings };
}

/** `t` with its postings kept in order `s` that hold a record of `moved` put in order of `rank` again. */
function resorted(t: PostingTable, s: number, rank: Int32Array, moved: ReadonlySet<number>): PostingTable {
  let sorted: Int32Array | null = null;
  for (let j = 0; j < t.sortedKeys.length; j++) {
    const k = t.sortedKeys[j]!;
    let holds = false;
    for (let m = t.offsets[k]!; m < t.offsets[k + 1]! && !holds; m++) holds = moved.has(t.ids[m]!);
    if (!holds) continue;
    sorted ??= t.sorted[s]!.slice();
    sorted.subarray(t.sortedOffsets[j]!, t.sortedOffsets[j + 1]!).sort((a, b) => rank[a]! - rank[b]!);
  }
  if (sorted === null) return t;
  const all = t.sorted.slice();
  all[s] = sorted;
  return { ...t, sorted: all };
}

/**
 * The fields of `target`'s records whose values collection `def`'s index holds (issue 19: after an
 * edit of celebrities.json, outfits are kept when no celebrity's name, slug or picture changed): the
 * slug (references, embedded ids, slug filters), the fields links read (`readByLinks`) and the picks
 * of the fields that embed `target` (but those of a detail's object that index `ix` keeps as an id). Null when `def` reads `target`'s records back (`referrers`: a
 * celebrity's filmography depends on the movies' casts, which are not among these) or a field is not
 * one a record decoded from its served JSON holds (known.ts decodableFields).
 */
/**
 * `ix` (a collection kept after an edit of `target`'s file, fieldsSame) with its filter tables numbered
 * by `target`'s record ids sized for `size` records of it: an empty posting for each one added at the
 * end, as a build numbers them (PostingCollector.finish).
 */
export function grownBy(ix: CollectionIndex, target: CollectionName, size: number): CollectionIndex {
  const postings = ix.postings.map((t) => {
    if (t.embed < 0 || ix.embeds[t.embed]!.target !== target || t.offsets.length - 1 >= size) return t;
    const offsets = new Int32Array(size + 1);
    offsets.set(t.offsets);
    offsets.fill(t.offsets[t.offsets.length - 1]!, t.offsets.length);
    let bitsAt = t.bitsAt;
    if (bitsAt.length > 0) {
      bitsAt = new Int32Array(size).fill(-1);
      bitsAt.set(t.bitsAt);
    }
    return { ...t, offsets, bitsAt };
  });
  return postings.every((t, x) => t === ix.postings[x]) ? ix : { ...ix, postings };
}

const fieldNameOf = (f: OutputField): string => (typeof f === 'string' ? f : f.name);

/**
 * Whether `def` (without derived fields, one top-level reference to `target`) keeps of `target`'s
 * records, in its sort keys, filter values and search text as its link gives them, at most the slug:
 * two probe records of one slug and every other field told apart give the same.
 */
function keysReadOnlySlug(def: ResourceDefinition, target: CollectionName): boolean {
  if (Object.keys(def.derived.properties).length > 0) return false;
  const refs = Object.entries(def.source.properties).flatMap(([k, s]) => (s.type === 'string' && s.ref === target ? [k] : []));
  if (refs.length !== 1) return false;
  const names = Object.keys(RESOURCES[target].source.properties).filter((f) => f !== 'slug');
  const read = (mark: string): string => {
    const probe = { slug: 'probe', ...Object.fromEntries(names.map((f) => [f, `${mark}${f}`])) } as SourceRecord;
    const made = def.link({ [refs[0]!]: 'probe' } as SourceRecord, { get: (c) => (c === target ? probe : undefined), referrers: () => [] });
    return JSON.stringify([...def.sorts.map((s) => s.key(made)), ...def.filters.map((f) => f.get(made)), def.searchText(made)]);
  };
  try {
    return read('\u0000') === read('\u0001');
  } catch {
    return false;
  }
}

export function bakedFields(def: ResourceDefinition, target: CollectionName, ix?: CollectionIndex): string[] | null {
  if (def.referrers?.includes(target)) return null;
  const of = RESOURCES[target];
  const fields = new Set(['slug', ...(of.readByLinks ?? [])]);
  // A detail's embedded object that `ix` keeps as the record's id is read from the target's index as
  // it is served (detail-layout.ts): not held.
  const byId = (f: { readonly name: string }) => ix?.detail.plan != null && ix.embeds.some((e) => e.field === f.name && e.target === target && e.starts === null);
  // So is a list item's embedded record that it keeps as the record's id (fragments.ts ListEmbed).
  const listed = ix?.list.embed != null ? listEmbedPlan(def) : null;
  const listById = (f: { readonly name: string }) => listed !== null && fieldNameOf(def.listFields[listed.field]!) === f.name;
  const list = def.listFields.filter((f) => typeof f !== 'string' && f.from === target && !listById(f));
  const detail = def.detailFields.filter((f) => typeof f !== 'string' && f.from === target && !byId(f));
  // Every record of `target` it shows kept as an id, and no field of its own made from it: it holds
  // only the slug (issue 19: a celebrity's name edit keeps outfits and news as they are).
  if (ix !== undefined && list.length === 0 && detail.length === 0 && keysReadOnlySlug(def, target)) return ['slug'];
  for (const f of list) if (typeof f !== 'string') for (const p of f.pick) fields.add(p);
  for (const f of detail) if (typeof f !== 'string') for (const p of f.pick) fields.add(p);
  const decodable = decodableFields(of);
  return [...fields].every((f) => decodable.includes(f)) ? [...fields] : null;
}

/**
 * The records of `old` (an index of one collection before an edit of its file) that hold, as far as
 * `fields` go (bakedFields), other values in `now` (the index after the edit), by id, each with the
 * fields whose values differ; null when a record's slug changed or records were removed. Only the
 * records whose list item or detail-only text differs are decoded. Records added at the end of
 * `now` may be there: a collection whose file did not change and was valid names none of them (their
 * slugs are no old record's); see grownBy.
 */
export function changedRecords(old: CollectionIndex, now: CollectionIndex, fields: readonly string[]): Map<number, string[]> | null {
  if (now.size < old.size) return null;
  const same = (a: Fragments, b: Fragments, id: number) =>
    a.bytes.compare(b.bytes, b.starts[id]!, b.starts[id + 1]!, a.starts[id]!, a.starts[id + 1]!) === 0 && (a.gaps === null || a.gaps[id]! - a.starts[id]! === b.gaps![id]! - b.starts[id]!);
  let was: ReturnType<typeof knownCollection> | null = null;
  let is: ReturnType<typeof knownCollection> | null = null;
  const out = new Map<number, string[]>();
  for (let id = 0; id < old.size; id++) {
    if (same(old.list, now.list, id) && same(old.detail.own, now.detail.own, id)) continue;
    // (A slug changed: to one no record had, else null; relinked keeps only what holds none of those.)
    const slug = slugOf(old, id);
    if (slugOf(now, id) !== slug && slugId(old, slugOf(now, id)) >= 0) return null;
    const a = (was ??= knownCollection(old)).get(slug)!;
    const b = (is ??= knownCollection(now)).get(slugOf(now, id))!;
    const differ = fields.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
    if (differ.length > 0) out.set(id, differ);
  }
  return out;
}

/** Whether indexes `old` and `now` of one collection have the same records as far as `fields` go (changedRecords: none differs). */
export function fieldsSame(old: CollectionIndex, now: CollectionIndex, fields: readonly string[]): boolean {
  return changedRecords(old, now, fields)?.size === 0;
}

/** More records that hold a changed record than this share of the collection: built whole (each is decoded into an object first). */
const MAX_RELINKED_SHARE = 0.25;

/**
 * `old` (the index of `def`, whose own file did not change, built with `was`: the index of `target`
 * before an edit of its file) with its records that hold what the edit changed of records `changed`
 * of `target` (changedRecords: a celebrity's name or picture) written again, as a full build writes
 * them against `now` (`target`'s index after the edit), or why not (then it is built whole). Those
 * records are found, where `def` embeds `target`'s records (an outfit's celebrity), by the embed's
 * ids; where `target` reads `def`'s records back (a celebrity's filmography: the movies whose casts
 * name it), from each changed record's detail. Each is decoded from its served JSON (list item and
 * detail-only text), given the new embedded record, or, in its derived fields (a movie's cast), the
 * new value of each field links read (`readByLinks`) in place of the old where it stands under that
 * field's name, as often as the changed record is named there (else: not patched), and written by
 * the index builder; the rest of the index (orders, filters, search) stays as it is, which its sort
 * keys, filter values and search text, compared, allow. `targets`: the indexes the builder embeds.
 * `owned`: `old` is this load's alone (read from the boot cache for it): an arena is spliced in its
 * own memory where it has room (spliceInPlace), and `old` is not to be read afterwards.
 */
export function relinked(old: CollectionIndex, target: CollectionName, was: CollectionIndex, now: CollectionIndex, changed: ReadonlyMap<number, readonly string[]>, targets: Targets, owned = false): PatchResult {
  const def = old.def;
  const of = RESOURCES[target];
  const no = (why: string): PatchResult => ({ index: null, why });
  const plan = old.detail.plan;
  if (def.late !== undefined || plan === null) return no('another layout');
  // Its records decoded as they were made: a list item's embedded record read from `was`.
  if (old.list.embed != null) old = withTargets(old, (t) => (t === target ? was : targets(t)));
  const n = old.size;
  const hit = new Uint8Array(n);
  let hits = 0;
  const mark = (id: number) => {
    if (id >= 0 && id < n && hit[id] === 0) (hit[id] = 1), hits++;
  };
  // Records that embed a changed record: by the ids of the embed of each such field.
  const embedded = [...def.listFields, ...def.detailFields].flatMap((f) => (typeof f !== 'string' && f.from === target ? [f.name] : []));
  const embeds = old.embeds.filter((e) => e.target === target && e.starts === null && embedded.includes(e.field));
  if (embedded.length > 0) {
    if (Object.keys(def.derived.properties).length > 0) return no('derived fields beside embedded records');
    if (!embedded.every((f) => embeds.some((e) => e.field === f))) return no('an embedded record kept as text alone');
    for (const e of embeds) {
      for (let id = 0; id < n; id++) {
        const fields = changed.get(e.ids[id]!);
        if (fields === undefined) continue;
        // (Its slug changed: the record names one that is gone; built whole, which reports it.)
        if (fields.includes('slug')) return no('a slug changed that records hold');
        mark(id);
      }
    }
  }
  /** Records found by the values they show (link-holders.ts): the id of the changed record each was made from. */
  let holders: ReadonlyMap<number, number> | null = null;
  // Records a changed record reads back (`referrers`), each with how often it names it.
  const named = new Map<number, { readonly id: number; readonly times: number }[]>();
  if (of.referrers?.includes(def.name)) {
    const back = embedFields(of).filter((e) => e.refs && e.target === def.name).map((e) => e.field);
    if (back.length === 0) return no(`${target} reads its records back not as refs`);
    const withEmbeds = { ...now, embeds: now.embeds.map((e) => ({ ...e, index: e.target === def.name ? old : (targets(e.target) ?? null) })) };
    if (withEmbeds.embeds.some((e) => e.index === null)) return no('an embedded collection not indexed');
    for (const [t, fields] of changed) {
      if (fields.includes('slug')) {
        // Its slug changed: kept only when no record named it before the edit (`old` is the index those
        // are read back from: none of its records named the old slug, and none can name the new one).
        if (t >= was.size) continue;
        const wasWith = { ...was, embeds: was.embeds.map((e) => ({ ...e, index: e.target === def.name ? old : (targets(e.target) ?? null) })) };
        if (wasWith.embeds.some((e) => e.index === null)) return no('an embedded collection not indexed');
        const before = (JSON.parse(detailBytes(wasWith.list, wasWith.detail, wasWith.embeds, t, 20000101).toString('utf8')) as { data: Record<string, unknown> }).data;
        if (back.some((f) => !Array.isArray(before[f]) || (before[f] as unknown[]).length > 0)) return no('a slug changed that records name');
        continue;
      }
      if (!fields.every((f) => of.readByLinks?.includes(f) || embedded.length > 0)) return no(`a field links do not read (${fields.join(', ')})`);
      const data = (JSON.parse(detailBytes(withEmbeds.list, withEmbeds.detail, withEmbeds.embeds, t, 20000101).toString('utf8')) as { data: Record<string, unknown> }).data;
      const times = new Map<number, number>();
      for (const f of back) {
        for (const item of (data[f] ?? []) as { slug?: unknown }[]) {
          const id = typeof item?.slug === 'string' ? slugId(old, item.slug) : -1;
          if (id < 0) return no('a record read back not found');
          times.set(id, (times.get(id) ?? 0) + 1);
        }
      }
      for (const [id, k] of times) {
        mark(id);
        let list = named.get(id);
        if (list === undefined) named.set(id, (list = []));
        list.push({ id: t, times: k });
      }
    }
  } else if (embedded.length === 0) {
    // Records that show values of changed records as derived fields of their own, naming them by a
    // reference they do not serve (a review its movie's title): found by those values (link-holders.ts).
    const found = linkHolders(old, target, was, changed);
    if (typeof found === 'string') return no(found);
    for (const id of found.keys()) mark(id);
    holders = found;
  }
  // (None: a changed record that no record holds, an outfit's celebrity without outfits.)
  if (hits === 0) return { index: old, records: 0 };
  if (hits > Math.max(RECORD_GROUP * 4, n * MAX_RELINKED_SHARE)) return no('too many records hold them');
  const ids = new Int32Array(hits);
  for (let id = 0, j = 0; id < n; id++) if (hit[id] === 1) ids[j++] = id;

  const before = knownCollection(was);
  const after = knownCollection(now);
  const decode = (id: number): Record<string, unknown> => decoded(old, id);
  const derived = Object.keys(def.derived.properties);
  const records: LinkedRecord[] = [];
  let textsChanged = false;
  for (const id of ids) {
    const wasRecord = decode(id);
    const r = decode(id);
    for (const e of embeds) r[e.field] = e.ids[id]! < 0 ? null : after.get(slugOf(now, e.ids[id]!));
    const giver = holders?.get(id);
    if (giver !== undefined) {
      // Linked again as a full build links it, to the changed record as it is now.
      const shown = shownField(def, target)!;
      const slug = slugOf(now, giver);
      const linked = def.link({ ...r, [shown.ref]: slug } as SourceRecord, { get: (c, s) => (c === target && s === slug ? after.get(slug) : undefined), referrers: () => [] });
      for (const f of derived) r[f] = linked[f];
    }
    // Per field links read, each old value (JSON) of the changed records that name this one: its new
    // value (one: two records of one old value given two new ones cannot be told apart), and how
    // many times they name it.
    const renames = new Map<string, Map<string, { readonly to: unknown; readonly text: string; times: number; found: number }>>();
    for (const { id: t, times } of giver === undefined ? (named.get(id) ?? []) : []) {
      const slug = slugOf(now, t);
      for (const f of changed.get(t)!) {
        if (!of.readByLinks?.includes(f)) {
          if (embedded.length > 0) continue;
          return no(`a field links do not read (${f})`);
        }
        const from = JSON.stringify(before.get(slug)![f]);
        const to = after.get(slug)![f];
        let byValue = renames.get(f);
        if (byValue === undefined) renames.set(f, (byValue = new Map()));
        const got = byValue.get(from);
        if (got === undefined) byValue.set(from, { to, text: JSON.stringify(to), times, found: 0 });
        else if (got.text !== JSON.stringify(to)) return no('two records of one value given two others');
        else got.times += times;
      }
    }
    if (renames.size > 0) {
      const walk = (v: unknown): void => {
        if (Array.isArray(v)) for (const x of v) walk(x);
        else if (v !== null && typeof v === 'object') {
          const o = v as Record<string, unknown>;
          for (const k of Object.keys(o)) {
            const hit = renames.get(k)?.get(JSON.stringify(o[k]));
            if (hit === undefined) walk(o[k]);
            else (o[k] = hit.to), hit.found++;
          }
        }
      };
      for (const f of derived) walk(r[f]);
      // Found more often: another record of that value, or a value of the record's own, is named there too.
      for (const byValue of renames.values()) for (const h of byValue.values()) if (h.found !== h.times) return no('a value held otherwise too');
    }
    // What the orders and filter tables hold of the record is the same; a search text changed (a
    // review's movie title) moves the grams it loses and gains (searchRebuilt, as patchCollection does).
    const same = (get: (x: LinkedRecord) => unknown) => JSON.stringify(get(r as LinkedRecord)) === JSON.stringify(get(wasRecord as LinkedRecord));
    if (!def.sorts.every((sort) => same(sort.key)) || !def.filters.every((f) => same(f.get))) return no('a sort key or filter value changed');
    if (!same(def.searchText)) textsChanged = true;
    records.push(r as LinkedRecord);
  }
  return rewritten(old, ids, records, (t) => (t === target ? now : targets(t)), textsChanged, owned);
}

/**
 * `old` with its records `ids` (ascending) those of `records` (linked as a full build links them) as
 * the index builder writes them (`targets`: the indexes it embeds from), or why not: each must keep
 * its slug, embedded records, sort keys and filter values (the caller checks those two); a changed
 * search text (`textsChanged`) moves the grams it loses and gains. `owned`: as relinked's. `records`
 * is emptied.
 */
export function rewritten(old: CollectionIndex, ids: Int32Array, records: LinkedRecord[], targets: Targets, textsChanged: boolean, owned: boolean): PatchResult {
  const def = old.def;
  const n = old.size;
  const plan = old.detail.plan;
  const no = (why: string): PatchResult => ({ index: null, why });
  if (plan === null) return no('another layout');
  const builder = indexBuilder(def, { records: records.length, bytes: 0 }, targets);
  for (const r of records) builder.add(r);
  const made = builder.finish();
  records.length = 0;
  if (made.detail.plan === null || made.embeds.length !== old.embeds.length || made.detail.plan.runs.length !== plan.runs.length) return no('another layout');
  for (let k = 0; k < ids.length; k++) {
    if (slugOf(made, k) !== slugOf(old, ids[k]!)) return no('a slug read back otherwise');
    if (made.embeds.some((e, x) => e.starts === null && e.ids[k] !== old.embeds[x]!.ids[ids[k]!])) return no('an embedded record changed');
  }
  // An arena none of whose records changed is kept (a movie's list item does not show its cast, an
  // outfit's detail-only text not its celebrity); what is kept of `old` is copied off the memory of
  // the others (a boot cache file is one allocation: then everything is), as patchCollection does.
  const listSame = sameRecords(old.list, made.list, ids);
  const ownSame = sameRecords(old.detail.own, made.detail.own, ids);
  if (listSame && ownSame) return { index: old, records: 0 };
  // (Before an arena is spliced in place: a text the table leaves out is read from the old list item.)
  const search = textsChanged ? searchRebuilt(old, made, ids, n) : null;
  const arenas = new Set([...(listSame ? [] : [old.list.bytes.buffer]), ...(ownSame ? [] : [old.detail.own.bytes.buffer])]);
  const kept = copiedOff({ ...old, list: listSame ? old.list : null, detail: { ...old.detail, own: ownSame ? old.detail.own : null }, ...search }, arenas);
  const detail: Details = {
    plan,
    own: ownSame ? kept.detail.own! : ((owned && spliceInPlace(old.detail.own, made.detail.own, ids, n)) || spliceFragments(old.detail.own, made.detail.own, ids, n)),
    cuts: listSame ? kept.detail.cuts : spliceRecordOffsets(kept.detail.cuts, made.detail.cuts, ids, plan.listCuts.length, n),
    ownCuts: ownSame ? kept.detail.ownCuts : spliceRecordOffsets(kept.detail.ownCuts, made.detail.ownCuts, ids, plan.ownRuns - 1, n),
  };
  const index: CollectionIndex = {
    ...kept,
    list: listSame ? kept.list! : ((owned && spliceInPlace(old.list, made.list, ids, n)) || spliceFragments(old.list, made.list, ids, n)),
    detail,
    slugs: listSame ? kept.slugs : { ...kept.slugs, at: spliceRecordOffsets(kept.slugs.at, made.slugs.at, ids, 1, n) },
    embeds: kept.embeds.map((e, x) => (e.starts !== null ? spliceHoles(e, made.embeds[x]!, ids, n) : e)),
  };
  return { index: withListLinked(index), records: ids.length };
}

