// Writes the boot cache of a freshly validated snapshot: every structure raw, 8-byte aligned, with a
// CRC-32 per section, to a temp file that is fsynced and renamed into place.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { Fragments } from './fragments.ts';
import type { CollectionIndex } from './indexes.ts';
import type { GramPostings } from './search-index.ts';
import {
  align8, cacheFile, cacheKey, crc32, MAGIC, racy, READ_CHUNK, readDataIdentity, STRING_CHUNK,
  type CollectionRef, type Collections, type DataIdentity, type FragmentsRef, type GramsRef, type Header, type Kind,
  type Section, type StringsRef, type View,
} from './boot-cache-format.ts';

/** Collects the sections in file order; each is written straight from its typed array. */
class SectionWriter {
  readonly sections: Section[] = [];
  readonly views: View[] = [];
  private pos = 0;

  add(kind: Kind, view: View): number {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    this.sections.push({ kind, offset: this.pos, bytes: view.byteLength, crc: crc32!(bytes) });
    this.views.push(view);
    this.pos += align8(view.byteLength);
    return this.sections.length - 1;
  }

  /** Strings as lengths plus joined text, latin1 when every unit fits (exact, unlike UTF-8 with lone surrogates). */
  strings(list: readonly string[]): StringsRef {
    const lengths = new Int32Array(list.length);
    const chunks: { section: number; latin1: boolean; count: number }[] = [];
    let first = 0;
    let units = 0;
    for (let i = 0; i <= list.length; i++) {
      if (i === list.length || units >= STRING_CHUNK) {
        if (i > first) {
          const text = list.slice(first, i).join('');
          const latin1 = !/[^\u0000-\u00ff]/.test(text);
          chunks.push({ section: this.add('u8', Buffer.from(text, latin1 ? 'latin1' : 'utf16le')), latin1, count: i - first });
        }
        first = i;
        units = 0;
      }
      if (i < list.length) units += lengths[i] = list[i]!.length;
    }
    return { lengths: this.add('i32', lengths), chunks };
  }

  fragments(f: Fragments): FragmentsRef {
    return {
      bytes: this.add('u8', f.bytes),
      starts: this.add('f64', f.starts),
      gaps: f.gaps && this.add('f64', f.gaps),
      keys: f.keys && this.add('f64', f.keys),
    };
  }

  grams(g: GramPostings): GramsRef {
    const keys = new Float64Array(g.offsets.length - 1);
    for (const [key, slot] of g.slots) keys[slot] = key;
    return { keys: this.add('f64', keys), offsets: this.add('i32', g.offsets), ids: this.add('i32', g.ids) };
  }

  collection(ix: CollectionIndex): CollectionRef {
    const postings = [...ix.postings].map(([param, byKey]) => {
      const lists = [...byKey.values()];
      const offsets = new Int32Array(lists.length + 1);
      lists.forEach((ids, k) => (offsets[k + 1] = offsets[k]! + ids.length));
      const flat = new Int32Array(offsets[lists.length]!);
      lists.forEach((ids, k) => flat.set(ids, offsets[k]!));
      const bits: [number, number][] = [];
      lists.forEach((ids, k) => {
        const b = ix.bits.get(ids);
        if (b) bits.push([k, this.add('u32', b)]);
      });
      // The lists of one sort order lie back to back in one array, in key order: one section per sort.
      const inOrder = [...ix.orders.keys()].map((sort) => {
        const sorted = new Int32Array(flat.length);
        lists.forEach((ids, k) => sorted.set(ix.inOrder.get(ids)!.get(sort)!, offsets[k]!));
        return { sort, ids: this.add('i32', sorted) };
      });
      return { param, keys: this.strings([...byKey.keys()]), offsets: this.add('i32', offsets), ids: this.add('i32', flat), bits, inOrder };
    });
    const r = ix.range;
    return {
      size: ix.size,
      slugs: this.strings(slugList(ix)),
      list: this.fragments(ix.list),
      detail: this.fragments(ix.detail),
      sorts: [...ix.orders].map(([name, order]) => ({ name, order: this.add('i32', order), rank: this.add('i32', ix.ranks.get(name)!) })),
      postings,
      range: r && { param: r.param, ids: this.add('i32', r.ids), values: this.add('f64', r.values), byId: this.add('f64', r.byId) },
      searchText: this.strings(ix.searchText),
      unigrams: this.grams(ix.search.unigrams),
      bigrams: this.grams(ix.search.bigrams),
      trigrams: this.grams(ix.search.trigrams),
    };
  }
}

function slugList(ix: CollectionIndex): string[] {
  const slugs = new Array<string>(ix.size);
  for (const [slug, id] of ix.slugs) slugs[id] = slug;
  return slugs;
}

async function writeAll(fh: FileHandle, data: Uint8Array): Promise<void> {
  for (let off = 0; off < data.length; ) off += (await fh.write(data, off, Math.min(data.length - off, READ_CHUNK))).bytesWritten;
}

/**
 * Writes the cache of a snapshot loaded from `dataDir`, keyed to `before`: the identity read before
 * the files were. Returns false (nothing written) when the files changed since, or too recently to
 * be told apart from a later change.
 */
export async function saveSnapshotCache(stateDir: string, dataDir: string, snapshot: { readonly collections: Collections }, before: DataIdentity): Promise<boolean> {
  if (!crc32) return false;
  const now = await readDataIdentity(dataDir);
  if (now.files.join('\n') !== before.files.join('\n') || racy(before)) return false;
  const w = new SectionWriter();
  const collections: Record<string, CollectionRef> = {};
  for (const def of RESOURCE_LIST) collections[def.name] = w.collection(snapshot.collections[def.name]);
  const header: Header = { key: await cacheKey(dataDir, before), sections: w.sections, collections };
  const json = Buffer.from(JSON.stringify(header));
  const head = Buffer.alloc(align8(MAGIC.length + 4 + json.length));
  MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, MAGIC.length);
  json.copy(head, MAGIC.length + 4);

  const file = cacheFile(stateDir);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 }); // the state directory is owner-only, its cache too
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await writeAll(fh, head);
    const pad = Buffer.alloc(8);
    for (const v of w.views) {
      await writeAll(fh, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      if (v.byteLength % 8 !== 0) await writeAll(fh, pad.subarray(0, 8 - (v.byteLength % 8)));
    }
    await fh.sync();
    await fh.close();
    await rename(tmp, file);
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  // The rename is durable once the directory is synced; where a directory cannot be synced, skip it.
  const dir = await open(dirname(file), 'r').catch(() => null);
  await dir?.sync().catch(() => {});
  await dir?.close();
  return true;
}
