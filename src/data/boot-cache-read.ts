// Reads the boot cache back: each section read straight into the typed array the server answers
// from (no copy, no decoding), when the key matches the data files exactly and the checks of
// boot-cache-format.ts pass. Otherwise a miss: null, and the reason for the log line.
import { open, type FileHandle } from 'node:fs/promises';
import { RESOURCE_LIST, RESOURCES } from '../resources/index.ts';
import type { ResourceDefinition } from '../resources/types.ts';
import { rememberDigest, sameBut, sameData } from './content-digest.ts';
import { detailPlan, embedFields, listEmbedPlan, type Details, type Embed } from './detail-layout.ts';
import type { Fragments, Offsets, RecordOffsets } from './fragments.ts';
import { addSendRoom, SEND_ROOM_BYTES } from './send-buffer.ts';
import { linkEmbeds, SMALL_POSTING, type CollectionIndex, type PostingTable } from './indexes.ts';
import { groupCount, groupsConsistent, gramsConsistent, type GramPostings, type TextGroups } from './search-index.ts';
import { groupCount as groupsOf } from './record-groups.ts';
import { searchField, type SearchFrom } from './search-text.ts';
import { slotBits, slugSlots, type SlugTable, type StringTable } from './string-table.ts';
import {
  align8, cacheFile, collectionKey, crc32, DEPENDS, keyFiles, KIND_BYTES, MAGIC, PREFIX_BYTES, READ_CHUNK, readDataIdentity, splitKey,
  type CollectionRef, type Collections, type DataIdentity, type DetailsRef, type FragmentsRef, type GramsRef, type Header, type Kind, type PostingRef, type Section, type SlugRef, type TableRef, type View,
} from './boot-cache-format.ts';

/** Why the cache was not used; thrown and turned into a miss by the caller. */
class Miss extends Error {}

function check(ok: boolean, why = 'inconsistent structure'): void {
  if (!ok) throw new Miss(why);
}

async function readExactly(fh: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let off = 0; off < into.length; ) {
    const { bytesRead } = await fh.read(into, off, Math.min(into.length - off, READ_CHUNK), position + off);
    if (bytesRead === 0) throw new Miss('truncated');
    off += bytesRead;
  }
}

/** `first` of wellCut: the first byte of any JSON value (`"`, `{`, `[`, `-`, a digit, `n`, `t`, `f`). */
const VALUE_START = 256;
const valueStart = new Uint8Array(256);
for (const c of '"{[-0123456789ntf') valueStart[c.charCodeAt(0)] = 1;

/**
 * Every record of an arena is not empty and starts with `first` (any value's first byte for
 * VALUE_START), and ends with `}` when `closed`, at its offsets: a torn or zeroed page shows at the
 * record boundaries in it.
 */
function wellCut(bytes: Uint8Array, starts: Offsets, n: number, first: number, closed: boolean): boolean {
  for (let i = 0; i < n; i++) {
    const a = starts[i]!;
    const b = starts[i + 1]!;
    if (!(b > a) || (first === VALUE_START ? valueStart[bytes[a]!] !== 1 : bytes[a] !== first) || (closed && bytes[b - 1] !== 0x7d)) return false;
  }
  return true;
}

/** Rebuilds the structures over the section buffers (views, no copies) and checks their sizes. */
function rebuild(def: ResourceDefinition, ref: CollectionRef, sec: (i: number, ...kinds: Kind[]) => View): CollectionIndex {
  const n = ref.size;
  const i32 = (i: number, len?: number) => {
    const v = sec(i, 'i32') as Int32Array;
    check(len === undefined || v.length === len);
    return v;
  };
  /** Arena offsets: u32, or f64 for an arena past 4 GiB (fragments.ts Offsets). */
  const offsets = (i: number, len?: number) => {
    const v = sec(i, 'u32', 'f64') as Offsets;
    check(len === undefined || v.length === len);
    return v;
  };
  const f64 = (i: number, len?: number) => {
    const v = sec(i, 'f64') as Float64Array;
    check(len === undefined || v.length === len);
    return v;
  };
  const table = (t: TableRef, count?: number): StringTable => {
    const out = { units: sec(t.units, 'u8', 'u16') as Uint8Array | Uint16Array, starts: offsets(t.starts), slots: i32(t.slots) };
    // Sizes only: the slots' contents are an index section, so their CRC has already vouched for
    // them (string-table.ts consistent() read every slot again: 0.1-0.2 s at 100k).
    const k = out.starts.length - 1;
    const slots = out.slots.length;
    check(k >= 0 && out.starts[0] === 0 && out.starts[k] === out.units.length && (slots === 0 || ((slots & (slots - 1)) === 0 && slots >= k * 2)));
    check(count === undefined || k === count);
    return out;
  };
  // Sizes only, as for a table: both are index sections, vouched for by their CRC; a slug's text is
  // in the list arena, which the record-boundary check covers as it covers the answers.
  const slugTable = (t: SlugRef): SlugTable => {
    const at = sec(t.at, 'u16', 'u32') as RecordOffsets;
    const slots = i32(t.slots);
    check(at.length === n && slots.length === slugSlots(n));
    return { at, slots, bits: slotBits(n) };
  };
  /** `first`: the byte each record starts with (-1: records may be empty, nothing to check); `closed`: each ends with `}`. */
  /** `gapped`: each record has a gap without a late value (its embedded record's: fragments.ts ListEmbed). */
  const fragments = (f: FragmentsRef, shown: boolean, first: number, closed: boolean, gapped = false): Fragments => {
    const late = shown ? def.late! : null;
    check((f.gaps === null) === (late === null && !gapped) && (f.keys === null) === (late === null));
    const bytes = sec(f.bytes, 'u8') as Uint8Array;
    const starts = offsets(f.starts, n + 1);
    check(starts[0] === 0 && starts[n] === bytes.length);
    check(first < 0 || wellCut(bytes, starts, n, first, closed), 'a JSON arena is torn');
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return { bytes: buf, starts, gaps: f.gaps === null ? null : offsets(f.gaps, n), keys: f.keys === null ? null : f64(f.keys, n), late };
  };
  const grams = (g: GramsRef, positions: boolean, units = n): GramPostings => {
    const keys = f64(g.keys);
    const offsets = i32(g.offsets, keys.length + 1);
    const lows = sec(g.lows, 'u16') as Uint16Array;
    const at = sec(g.at, 'u8');
    const out = {
      keys, offsets, lows, blocks: i32(g.blocks), at: new Uint8Array(at.buffer, at.byteOffset, at.length),
      bitsAt: i32(g.bitsAt, keys.length), bits: sec(g.bits, 'u32') as Uint32Array, bitCounts: i32(g.bitCounts),
    };
    check(gramsConsistent(out, units, positions));
    return out;
  };
  const posting = (p: PostingRef): PostingTable => {
    // Numbered by keys, or by the ids of an embedded record (an object embed; linkEmbeds checks
    // that there is a posting for each record of its collection).
    check((p.keys === null) === (p.embed >= 0) && (p.embed < 0 || (p.embed < ref.embeds.length && ref.embeds[p.embed]!.starts === null)));
    const keys = p.keys && table(p.keys);
    const offsets = i32(p.offsets, keys ? keys.starts.length : undefined);
    check(offsets.length > 0);
    const count = offsets.length - 1;
    const ids = i32(p.ids, offsets[count]);
    const bitsAt = i32(p.bitsAt);
    check(bitsAt.length === 0 || bitsAt.length === count);
    let dense = 0;
    for (let k = 0; k < bitsAt.length; k++) if (bitsAt[k]! >= 0) dense++;
    const bits = sec(p.bits, 'u32') as Uint32Array;
    check(bits.length === dense * ((n + 31) >>> 5) && offsets[0] === 0);
    check(p.sorted.length === def.sorts.length);
    // The postings kept in every order: ascending numbers, each of more than SMALL_POSTING ids and
    // as long as its ascending list (a request slices `sorted` at these offsets).
    const sortedKeys = i32(p.sortedKeys);
    const sortedOffsets = i32(p.sortedOffsets, sortedKeys.length + 1);
    check(sortedOffsets[0] === 0);
    for (let j = 0; j < sortedKeys.length; j++) {
      const k = sortedKeys[j]!;
      const n = k >= 0 && k < count && (j === 0 || k > sortedKeys[j - 1]!) ? offsets[k + 1]! - offsets[k]! : -1;
      check(n > SMALL_POSTING && sortedOffsets[j + 1]! - sortedOffsets[j]! === n);
    }
    return { param: p.param, keys, embed: p.embed, offsets, ids, sortedKeys, sortedOffsets, sorted: p.sorted.map((s) => i32(s, sortedOffsets[sortedKeys.length]!)), bitsAt, bits };
  };

  const lateIn = (fields: readonly unknown[]) => def.late !== undefined && fields.includes(def.late.field);
  // The embeds the code makes for this definition, or none (a load without the collections embedded
  // from); the index each reads is set by linkEmbeds once the snapshot has every collection.
  const want = embedFields(def);
  check(ref.embeds.length === 0 || (ref.embeds.length === want.length && ref.embeds.every((e, k) => e.field === want[k]!.field && e.target === want[k]!.target)));
  const embeds: Embed[] = ref.embeds.map((e, k) => {
    // A refs run's: a hole count per record (CSR) and a place per hole; else one id per record.
    check((e.starts === null) === !want[k]!.refs && (e.at === null) === !want[k]!.refs);
    if (e.starts === null || e.at === null) return { field: e.field, target: e.target, ids: i32(e.ids, n), index: null, starts: null, at: null };
    const starts = sec(e.starts, 'u32') as Uint32Array;
    check(starts.length === n + 1 && starts[0] === 0);
    for (let i = 0; i < n; i++) check(starts[i]! <= starts[i + 1]!);
    const ids = i32(e.ids, starts[n]);
    const at = sec(e.at, 'u16', 'u32') as RecordOffsets;
    check(at.length === ids.length);
    return { field: e.field, target: e.target, ids, index: null, starts, at };
  });
  const details = (d: DetailsRef): Details => {
    const plan = detailPlan(def, embeds.length > 0);
    check((plan !== null) === d.planned);
    if (plan === null) return { plan, own: fragments(d.own, lateIn(def.detailFields), 0x7b, true), cuts: new Uint32Array(0), ownCuts: new Uint32Array(0) };
    // Own text starts with a value (its first field's key is the plan's): not a zeroed byte.
    const own = fragments(d.own, false, plan.runs.some((r) => r.kind === 'own') ? VALUE_START : -1, false);
    const cuts = sec(d.cuts, 'u16', 'u32') as RecordOffsets;
    const ownCuts = sec(d.ownCuts, 'u16', 'u32') as RecordOffsets;
    check(cuts.length === n * plan.listCuts.length && ownCuts.length === n * Math.max(plan.ownRuns - 1, 0));
    return { plan, own, cuts, ownCuts };
  };
  /** The list arena; with its embedded record kept as an id (listEmbedPlan), that embed's gaps, checked inside their records. */
  const listFragments = (): Fragments => {
    const byId = embeds.length > 0 ? listEmbedPlan(def) : null;
    const list = fragments(ref.list, lateIn(def.listFields), 0x7b, true, byId !== null);
    if (byId === null) return list;
    const { starts, gaps } = list;
    for (let i = 0; i < n; i++) check(gaps![i]! > starts[i]! && gaps![i]! < starts[i + 1]!);
    return { ...list, embed: { head: byId.head, slot: byId.slot, ids: embeds[byId.slot]!.ids, source: null } };
  };
  // The field the code reads texts from, and a bit per record.
  const searchFrom = (f: CollectionRef['searchFrom']): SearchFrom | null => {
    if (f === null) return null;
    const derived = sec(f.derived, 'u32') as Uint32Array;
    check(f.field === searchField(def) && derived.length === (n + 31) >>> 5);
    return { field: f.field, derived };
  };
  check(ref.orders.length === def.sorts.length && ref.ranks.length === def.sorts.length && ref.sortKeys?.length === def.sorts.length);
  // Kept keys where the definition keeps them (SortDef `kept`), one per record.
  check(ref.sortKeys.every((k, s) => (k !== null) === (def.sorts[s]!.kept === true && def.sorts[s]!.type === 'number')));
  const r = ref.range;
  const range = r && { param: r.param, ids: i32(r.ids), values: f64(r.values), byId: f64(r.byId, n) };
  check(range === null || range.ids.length === range.values.length);
  const groups: TextGroups = { starts: i32(ref.searchGroups.starts), ids: i32(ref.searchGroups.ids) };
  check(groupsConsistent(groups, n));
  const search = { size: n, groups };
  const rg = ref.recordGroups ?? null;
  const recordGroups = rg && { sources: rg.sources === null ? null : (sec(rg.sources, 'u32') as Uint32Array), keys: sec(rg.keys, 'u32') as Uint32Array, sorts: sec(rg.sorts, 'u32') as Uint32Array };
  check(recordGroups === null || ((recordGroups.sources === null || recordGroups.sources.length === 4 * groupsOf(n)) && recordGroups.keys.length === 2 * groupsOf(n) && recordGroups.sorts.length === 2 * groupsOf(n)));
  return {
    def,
    size: n,
    slugs: slugTable(ref.slugs),
    list: listFragments(),
    detail: details(ref.detail),
    embeds,
    orders: ref.orders.map((s) => i32(s, n)),
    ranks: ref.ranks.map((s) => i32(s, n)),
    sortKeys: ref.sortKeys.map((s) => (s === null ? null : f64(s, n))),
    postings: ref.postings.map(posting),
    range,
    searchText: table(ref.searchText, n),
    searchFrom: searchFrom(ref.searchFrom),
    search: { size: n, unigrams: grams(ref.unigrams, false), bigrams: grams(ref.bigrams, false), trigrams: grams(ref.trigrams, true, groupCount(search)), groups },
    groups: recordGroups,
  };
}

function view(kind: Kind, buf: ArrayBufferLike, at: number, bytes: number): View {
  const len = bytes / KIND_BYTES[kind];
  switch (kind) {
    case 'u8': return new Uint8Array(buf, at, len);
    case 'u16': return new Uint16Array(buf, at, len);
    case 'i32': return new Int32Array(buf, at, len);
    case 'u32': return new Uint32Array(buf, at, len);
    case 'f64': return new Float64Array(buf, at, len);
  }
}

/**
 * A file's sections are read into one allocation of up to this many bytes (more only for a larger
 * file): each allocation of external memory past V8's limit starts a garbage collection (at 100k,
 * 256 MB groups made 8 scavenges and 4 full collections of a 6 MB heap), and this stays well under
 * the largest buffer Node 20 allows (4 GiB). One allocation per file, never one across files: a
 * reload that rebuilds one collection then frees its memory, which a shared allocation would keep
 * while any other collection still uses it.
 */
const GROUP_BYTES = 2 ** 31;

/** Bytes after a section read apart (besides 1/256 of its size) that the arena may grow into. */
const APART_ROOM = 1 << 20;

/** The memory of the sections read apart: each holds that section alone (and room after it). */
export const readApart = new WeakSet<ArrayBufferLike>();

/**
 * `stale`: written for files of other identities but the same bytes (content-digest.ts): the index is
 * good, and the file is worth writing again under the current key (else each start hashes the file).
 */
export type CacheResult = { readonly index: CollectionIndex; readonly miss: null; readonly stale: boolean } | { readonly index: null; readonly miss: string };

/**
 * A cache file whose header matched: its sections are read by `read` (which may still miss, on a
 * damaged index section), so a load can start building what missed before these reads are done.
 */
export type CacheOpened = { readonly read: () => Promise<CacheResult>; readonly stale: boolean; readonly miss: null; readonly key: string; readonly digests: readonly (string | null)[] | null } | { readonly read: null; readonly miss: string };

/**
 * The cached index of collection `def` when its file matches the data files of `id` exactly; else why not.
 * `shared`: the sections are read into SharedArrayBuffers (`serve --threads` above 1), which
 * src/threads/share.ts then hands to the threads as they are: no copy of the data, and never the
 * loaded copy and the shared one side by side. One thread reads into plain memory, which costs no
 * zero-fill.
 */
export async function readCollectionCache(stateDir: string, dataDir: string, def: ResourceDefinition, id: DataIdentity, shared = false): Promise<CacheResult> {
  const opened = await openCollectionCache(stateDir, dataDir, def, id, shared);
  return opened.read === null ? { index: null, miss: opened.miss } : opened.read();
}

/**
 * The header of collection `def`'s cache file checked (readCollectionCache); the sections not read yet.
 * `base`: instead, a cache file written for the same code and data but for `def`'s own file, which
 * changed since: the index an edit of that file is patched from (patch.ts); or, given as the numbers
 * of files among DEPENDS[def.name], but for those files (snapshot.ts: a collection kept after an edit
 * of a file it links to, when what it takes from that file is unchanged). `key`: the file's key.
 */
export async function openCollectionCache(stateDir: string, dataDir: string, def: ResourceDefinition, id: DataIdentity, shared = false, base: boolean | readonly number[] = false): Promise<CacheOpened> {
  if (!crc32) return { read: null, miss: 'this Node has no zlib.crc32' };
  let fh: FileHandle | null = null;
  try {
    const key = await collectionKey(def.name, dataDir, id);
    try {
      fh = await open(cacheFile(stateDir, def.name), 'r');
    } catch (err) {
      return { read: null, miss: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'none yet' : `cannot open: ${(err as Error).message}` };
    }
    const size = (await fh.stat()).size;
    check(size >= PREFIX_BYTES, 'truncated');
    const start = Buffer.alloc(PREFIX_BYTES);
    await readExactly(fh, start, 0);
    check(start.subarray(0, MAGIC.length).equals(MAGIC), 'not a boot cache (magic)');
    const jsonLength = start.readUInt32LE(MAGIC.length);
    check(PREFIX_BYTES + jsonLength <= size, 'truncated');
    const json = Buffer.alloc(jsonLength);
    await readExactly(fh, json, PREFIX_BYTES);
    check(crc32(json) === start.readUInt32LE(MAGIC.length + 4), 'header damaged');
    const header = JSON.parse(json.toString('utf8')) as Header;
    const files = keyFiles(def.name, id);
    const digests = Array.isArray(header.digests) && header.digests.length === files.length ? header.digests : null;
    // Other identities of the files, but maybe the same bytes (a touch, a copy, a checkout): hashed.
    const stale = header.key !== key;
    if (base !== false) {
      const skip = base === true ? [DEPENDS[def.name].indexOf(def.name)] : base;
      check(stale && (await sameBut(dataDir, header.key, key, skip, digests)), 'not written for this collection before an edit of its file');
    }
    else check(!stale || (await sameData(dataDir, header.key, key, digests)), 'written for other data files, another version or other code');
    check(header.size === size, 'truncated or extended');
    // A file whose identity is this cache's: so is the digest it was written with (for a reload's
    // sameData, and the cache write after an edit of another file, which then hashes only that one).
    const written = splitKey(header.key)?.files;
    if (digests && written?.length === files.length) digests.forEach((d, i) => typeof d === 'string' && written[i] === files[i] && rememberDigest(files[i]!, d));
    const handle = fh;
    fh = null; // the read closes it
    // A collection kept after an edit of a file it links to may have its records that hold what
    // changed written again (patch.ts relinked): its JSON arenas then read into memory of their own,
    // so the one replaced is let go without copying the rest of the index off the file's allocation.
    const apart = Array.isArray(base) ? [header.collection.list.bytes, header.collection.detail.own.bytes] : [];
    return { read: () => readSections(handle, def, header, align8(PREFIX_BYTES + jsonLength), size, stale, shared, apart), stale, miss: null, key: header.key, digests };
  } catch (err) {
    return { read: null, miss: err instanceof Miss ? err.message : `unreadable: ${(err as Error).message}` };
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** The sections of a cache file whose header openCollectionCache checked, read and checked; closes `fh`. */
async function readSections(fh: FileHandle, def: ResourceDefinition, header: Header, base: number, size: number, stale: boolean, shared: boolean, apart: readonly number[] = []): Promise<CacheResult> {
  const crc = crc32!;
  try {
    const views: View[] = [];
    const sections = header.sections;
    const listBytes = header.collection.list.bytes;
    for (let first = 0; first < sections.length; ) {
      // Sections lie back to back, 8-byte aligned: a run of them is one read into one buffer, and
      // each is a view at its offset in it (aligned for any typed array).
      let last = first;
      // (A section of `apart`: read alone, into its own allocation.)
      while (last + 1 < sections.length && !apart.includes(first) && !apart.includes(last + 1) && sections[last + 1]!.offset + sections[last + 1]!.bytes - sections[first]!.offset <= GROUP_BYTES) last++;
      const from = sections[first]!.offset;
      const end = sections[last]!.offset + sections[last]!.bytes;
      check(from % 8 === 0 && end >= from && base + end <= size);
      // Not zero-filled (the read overwrites it all), and never from the pool: offset 0 of its own memory.
      // A SharedArrayBuffer is always zero-filled, but in fresh pages the kernel gives zeroed anyway.
      // A section read apart has room to grow after it (patch.ts relinked splices its records in place).
      const room = apart.includes(first) ? APART_ROOM + ((end - from) >>> 8) : 0;
      // The group of the list arena, in memory of this thread's own, has room for a page's body after
      // it (send-buffer.ts SendRoom: a join copies into it without a view per record).
      const send = !shared && room === 0 && first <= listBytes && listBytes <= last ? SEND_ROOM_BYTES : 0;
      const group = (shared ? Buffer.from(new SharedArrayBuffer(end - from + room)) : Buffer.allocUnsafeSlow(end - from + room + send)).subarray(0, end - from);
      if (room > 0) readApart.add(group.buffer);
      if (send > 0) addSendRoom(group.buffer as ArrayBuffer, end - from);
      await readExactly(fh, group, base + from);
      for (let i = first; i <= last; i++) {
        const s = sections[i]!;
        const at = s.offset - from;
        check(s.bytes % KIND_BYTES[s.kind] === 0 && at % 8 === 0 && at + s.bytes <= group.length);
        check(s.crc === null || crc(group.subarray(at, at + s.bytes)) === s.crc, 'an index section is damaged');
        views.push(view(s.kind, group.buffer, at, s.bytes));
      }
      first = last + 1;
    }
    const sec = (i: number, ...kinds: Kind[]): View => {
      check(kinds.includes(header.sections[i]?.kind as Kind));
      return views[i]!;
    };
    return { index: rebuild(def, header.collection, sec), miss: null, stale };
  } catch (err) {
    return { index: null, miss: err instanceof Miss ? err.message : `unreadable: ${(err as Error).message}` };
  } finally {
    await fh.close().catch(() => {});
  }
}

/** Every collection from the cache, or null when any one misses (tests and tools). */
export async function loadSnapshotCache(stateDir: string, dataDir: string, shared = false): Promise<Collections | null> {
  const id = await readDataIdentity(dataDir);
  const collections = {} as Collections;
  for (const def of RESOURCE_LIST) {
    const got = await readCollectionCache(stateDir, dataDir, RESOURCES[def.name], id, shared);
    if (got.index === null) return null;
    collections[def.name] = got.index;
  }
  return linkEmbeds(collections);
}

/**
 * The index of packIndex (boot-cache-write.ts) over its sections' typed arrays, as another thread
 * handed them over; checked as a cache file's sections are (sizes, record boundaries).
 */
export function unpackIndex(def: ResourceDefinition, ref: CollectionRef, sections: readonly Section[], views: readonly View[]): CollectionIndex {
  return rebuild(def, ref, (i, ...kinds) => {
    check(kinds.includes(sections[i]?.kind as Kind) && views[i] !== undefined);
    return views[i]!;
  });
}
