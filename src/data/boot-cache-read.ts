// Reads the boot cache back: the structures of a snapshot as views over the file's sections, when
// the key matches the data files exactly and every section passes its CRC; otherwise null.
import { open, type FileHandle } from 'node:fs/promises';
import { RESOURCE_LIST, RESOURCES } from '../resources/index.ts';
import type { ResourceDefinition } from '../resources/types.ts';
import type { Fragments } from './fragments.ts';
import type { CollectionIndex } from './indexes.ts';
import type { GramPostings } from './search-index.ts';
import {
  align8, cacheFile, cacheKey, crc32, MAGIC, READ_CHUNK, readDataIdentity,
  type CollectionRef, type Collections, type FragmentsRef, type GramsRef, type Header, type Kind, type StringsRef, type View,
} from './boot-cache-format.ts';

async function readExactly(fh: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let off = 0; off < into.length; ) {
    const { bytesRead } = await fh.read(into, off, Math.min(into.length - off, READ_CHUNK), position + off);
    if (bytesRead === 0) throw new Error('cache file truncated');
    off += bytesRead;
  }
}

/** Throws on any inconsistency: the caller turns every throw into a miss. */
function check(ok: boolean): void {
  if (!ok) throw new Error('cache file inconsistent');
}

/** Rebuilds the structures over the section buffers (views, no copies) and checks their sizes. */
function rebuild(def: ResourceDefinition, ref: CollectionRef, sec: (i: number, kind: Kind) => View): CollectionIndex {
  const n = ref.size;
  const i32 = (i: number, len?: number) => {
    const v = sec(i, 'i32') as Int32Array;
    check(len === undefined || v.length === len);
    return v;
  };
  const f64 = (i: number, len?: number) => {
    const v = sec(i, 'f64') as Float64Array;
    check(len === undefined || v.length === len);
    return v;
  };
  const strings = (s: StringsRef, count: number): string[] => {
    const lengths = i32(s.lengths, count);
    const out = new Array<string>(count);
    let i = 0;
    for (const chunk of s.chunks) {
      const text = (sec(chunk.section, 'u8') as Buffer).toString(chunk.latin1 ? 'latin1' : 'utf16le');
      let p = 0;
      for (const end = i + chunk.count; i < end; i++) out[i] = text.slice(p, (p += lengths[i]!));
      check(p === text.length);
    }
    check(i === count);
    return out;
  };
  const fragments = (f: FragmentsRef, fields: readonly unknown[]): Fragments => {
    const late = def.late && fields.includes(def.late.field) ? def.late : null;
    check((f.gaps === null) === (late === null) && (f.keys === null) === (late === null));
    const bytes = sec(f.bytes, 'u8') as Buffer;
    const starts = f64(f.starts, n + 1);
    check(starts[n] === bytes.length);
    return { bytes, starts, gaps: f.gaps === null ? null : f64(f.gaps, n), keys: f.keys === null ? null : f64(f.keys, n), late };
  };
  const grams = (g: GramsRef): GramPostings => {
    const keys = f64(g.keys);
    const offsets = i32(g.offsets, keys.length + 1);
    const ids = i32(g.ids, offsets[keys.length]);
    const slots = new Map<number, number>();
    for (let s = 0; s < keys.length; s++) slots.set(keys[s]!, s);
    return { slots, offsets, ids };
  };

  const slugs = new Map<string, number>();
  strings(ref.slugs, n).forEach((slug, id) => slugs.set(slug, id));
  check(slugs.size === n);
  const orders = new Map<string, Int32Array>();
  const ranks = new Map<string, Int32Array>();
  for (const s of ref.sorts) {
    orders.set(s.name, i32(s.order, n));
    ranks.set(s.name, i32(s.rank, n));
  }
  check(def.sorts.every((s) => orders.has(s.name)));
  const postings = new Map<string, Map<string, Int32Array>>();
  const bits = new Map<Int32Array, Uint32Array>();
  const inOrder = new Map<Int32Array, Map<string, Int32Array>>();
  for (const p of ref.postings) {
    const keys = (sec(p.keys.lengths, 'i32') as Int32Array).length;
    const offsets = i32(p.offsets, keys + 1);
    const ids = i32(p.ids, offsets[keys]);
    const lists = strings(p.keys, keys).map((key, k) => [key, ids.subarray(offsets[k], offsets[k + 1])] as const);
    postings.set(p.param, new Map(lists));
    for (const [k, b] of p.bits) bits.set(lists[k]![1], sec(b, 'u32') as Uint32Array);
    for (const [, ids] of lists) inOrder.set(ids, new Map());
    check(def.sorts.every((s) => p.inOrder.some((o) => o.sort === s.name)));
    for (const o of p.inOrder) {
      const sorted = i32(o.ids, offsets[keys]);
      lists.forEach(([, ids], k) => inOrder.get(ids)!.set(o.sort, sorted.subarray(offsets[k], offsets[k + 1])));
    }
  }
  const r = ref.range;
  const range = r && { param: r.param, ids: i32(r.ids), values: f64(r.values), byId: f64(r.byId, n) };
  check(range === null || range.ids.length === range.values.length);
  const searchText = strings(ref.searchText, n);
  return {
    def,
    size: n,
    slugs,
    list: fragments(ref.list, def.listFields),
    detail: fragments(ref.detail, def.detailFields),
    orders,
    ranks,
    postings,
    bits,
    inOrder,
    range,
    searchText,
    search: { unigrams: grams(ref.unigrams), bigrams: grams(ref.bigrams), trigrams: grams(ref.trigrams) },
  };
}

const KINDS = { u8: 1, i32: 4, u32: 4, f64: 8 } as const;

/** The cached structures of the data in `dataDir` when the cache matches those files exactly; null otherwise. */
export async function loadSnapshotCache(stateDir: string, dataDir: string): Promise<Collections | null> {
  if (!crc32) return null;
  let fh: FileHandle | null = null;
  try {
    const key = await cacheKey(dataDir, await readDataIdentity(dataDir));
    fh = await open(cacheFile(stateDir), 'r');
    const size = (await fh.stat()).size;
    const start = Buffer.alloc(MAGIC.length + 4);
    await readExactly(fh, start, 0);
    if (!start.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const jsonLength = start.readUInt32LE(MAGIC.length);
    if (start.length + jsonLength > size) return null;
    const json = Buffer.alloc(jsonLength);
    await readExactly(fh, json, start.length);
    const header = JSON.parse(json.toString('utf8')) as Header;
    if (header.key !== key) return null;
    const base = align8(start.length + jsonLength);
    const last = header.sections.at(-1);
    if (last !== undefined && base + last.offset + align8(last.bytes) !== size) return null;
    // Each section in its own allocation: aligned for any typed array, and freed with its structure.
    const views: View[] = [];
    for (const s of header.sections) {
      const buf = Buffer.allocUnsafeSlow(s.bytes);
      await readExactly(fh, buf, base + s.offset);
      if (crc32(buf) !== s.crc || s.bytes % KINDS[s.kind] !== 0) return null;
      const len = s.bytes / KINDS[s.kind];
      const at = buf.byteOffset; // 0: allocUnsafeSlow never pools
      views.push(s.kind === 'u8' ? buf : s.kind === 'i32' ? new Int32Array(buf.buffer, at, len) : s.kind === 'u32' ? new Uint32Array(buf.buffer, at, len) : new Float64Array(buf.buffer, at, len));
    }
    const sec = (i: number, kind: Kind): View => {
      check(header.sections[i]?.kind === kind);
      return views[i]!;
    };
    const collections = {} as Collections;
    for (const def of RESOURCE_LIST) {
      const ref = header.collections[def.name];
      if (!ref) return null;
      collections[def.name] = rebuild(RESOURCES[def.name], ref, sec);
    }
    return collections;
  } catch {
    return null;
  } finally {
    await fh?.close().catch(() => {});
  }
}
