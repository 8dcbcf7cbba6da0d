// Writes the boot cache of a freshly validated snapshot: every typed array as it is, 8-byte aligned,
// a CRC-32 per index section, to a temp file that is fsynced and renamed into place.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileDigest } from './content-digest.ts';
import type { Details } from './detail-layout.ts';
import type { Fragments, Offsets, RecordOffsets } from './fragments.ts';
import type { CollectionIndex, PostingTable } from './indexes.ts';
import type { GramPostings } from './search-index.ts';
import type { StringTable } from './string-table.ts';
import type { CollectionName } from '../resources/types.ts';
import {
  align8, cacheFile, collectionKey, crc32, keyFiles, MAGIC, oldCacheFile, PREFIX_BYTES, racy, READ_CHUNK, readDataIdentity,
  type CollectionRef, type DataIdentity, type DetailsRef, type FragmentsRef, type GramsRef, type Header, type Kind,
  type PostingRef, type Section, type TableRef, type View,
} from './boot-cache-format.ts';

/** Collects the sections in file order; each is written straight from its typed array. */
class SectionWriter {
  readonly sections: Section[] = [];
  readonly views: View[] = [];
  private pos = 0;

  /** `checksums`: a CRC-32 per index section (the file's); none for a hand-over between threads (packIndex). */
  constructor(private readonly checksums = true) {}

  /** `index`: a structure the server indexes with (checksummed); else a JSON arena (checked per record). */
  add(kind: Kind, view: View, index = true): number {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    this.sections.push({ kind, offset: this.pos, bytes: view.byteLength, crc: index && this.checksums ? crc32!(bytes) : null });
    this.views.push(view);
    this.pos += align8(view.byteLength);
    return this.sections.length - 1;
  }

  /** Arena offsets as they are: u32 below 4 GiB, f64 past it (fragments.ts Offsets). */
  offsets(o: Offsets): number {
    return this.add(o instanceof Uint32Array ? 'u32' : 'f64', o);
  }

  table(t: StringTable): TableRef {
    return { units: this.add(t.units instanceof Uint8Array ? 'u8' : 'u16', t.units), starts: this.offsets(t.starts), slots: this.add('i32', t.slots) };
  }

  fragments(f: Fragments): FragmentsRef {
    return {
      bytes: this.add('u8', f.bytes, false),
      starts: this.offsets(f.starts),
      gaps: f.gaps && this.offsets(f.gaps),
      keys: f.keys && this.add('f64', f.keys),
    };
  }

  /** Offsets within a record as they are: u16, or u32 (fragments.ts RecordOffsets). */
  recordOffsets(o: RecordOffsets): number {
    return this.add(o instanceof Uint16Array ? 'u16' : 'u32', o);
  }

  details(d: Details): DetailsRef {
    return { planned: d.plan !== null, own: this.fragments(d.own), cuts: this.recordOffsets(d.cuts), ownCuts: this.recordOffsets(d.ownCuts) };
  }

  grams(g: GramPostings): GramsRef {
    return {
      keys: this.add('f64', g.keys),
      offsets: this.add('i32', g.offsets),
      lows: this.add('u16', g.lows),
      blocks: this.add('i32', g.blocks),
      at: this.add('u8', Buffer.from(g.at.buffer, g.at.byteOffset, g.at.length)),
      bitsAt: this.add('i32', g.bitsAt),
      bits: this.add('u32', g.bits),
      bitCounts: this.add('i32', g.bitCounts),
    };
  }

  posting(p: PostingTable): PostingRef {
    return {
      param: p.param,
      keys: p.keys && this.table(p.keys),
      embed: p.embed,
      offsets: this.add('i32', p.offsets),
      ids: this.add('i32', p.ids),
      sortedKeys: this.add('i32', p.sortedKeys),
      sortedOffsets: this.add('i32', p.sortedOffsets),
      sorted: p.sorted.map((ids) => this.add('i32', ids)),
      bitsAt: this.add('i32', p.bitsAt),
      bits: this.add('u32', p.bits),
    };
  }

  collection(ix: CollectionIndex): CollectionRef {
    const r = ix.range;
    return {
      size: ix.size,
      slugs: { at: this.recordOffsets(ix.slugs.at), slots: this.add('i32', ix.slugs.slots) },
      list: this.fragments(ix.list),
      detail: this.details(ix.detail),
      embeds: ix.embeds.map((e) => ({ field: e.field, target: e.target, ids: this.add('i32', e.ids), starts: e.starts && this.add('u32', e.starts), at: e.at && this.recordOffsets(e.at) })),
      orders: ix.orders.map((o) => this.add('i32', o)),
      ranks: ix.ranks.map((o) => this.add('i32', o)),
      sortKeys: ix.sortKeys.map((k) => k && this.add('f64', k)),
      postings: ix.postings.map((p) => this.posting(p)),
      range: r && { param: r.param, ids: this.add('i32', r.ids), values: this.add('f64', r.values), byId: this.add('f64', r.byId) },
      searchText: this.table(ix.searchText),
      searchFrom: ix.searchFrom && { field: ix.searchFrom.field, derived: this.add('u32', ix.searchFrom.derived) },
      unigrams: this.grams(ix.search.unigrams),
      bigrams: this.grams(ix.search.bigrams),
      trigrams: this.grams(ix.search.trigrams),
      searchGroups: { starts: this.add('i32', ix.search.groups.starts), ids: this.add('i32', ix.search.groups.ids) },
      recordGroups: ix.groups ? { sources: ix.groups.sources && this.add('u32', ix.groups.sources), keys: this.add('u32', ix.groups.keys), sorts: this.add('u32', ix.groups.sorts) } : null,
    };
  }
}

/** A write that can be called off goes in pieces of this size, so it stops soon after (a drain deadline). */
const ABORTABLE_CHUNK = 16 << 20;

/**
 * A collection's index as the boot cache lays it out, for another thread: the header's structure and
 * each section's typed array as it is (boot-cache-read.ts unpackIndex makes the index again, no copy).
 */
export function packIndex(ix: CollectionIndex): { readonly ref: CollectionRef; readonly sections: readonly Section[]; readonly views: readonly View[] } {
  const w = new SectionWriter(false);
  const ref = w.collection(ix);
  return { ref, sections: w.sections, views: w.views };
}

async function writeAll(fh: FileHandle, data: Uint8Array, signal?: AbortSignal): Promise<void> {
  const chunk = signal ? ABORTABLE_CHUNK : READ_CHUNK;
  for (let off = 0; off < data.length; ) {
    signal?.throwIfAborted();
    off += (await fh.write(data, off, Math.min(data.length - off, chunk))).bytesWritten;
  }
}

/**
 * Writes the cache of collection `name` loaded from `dataDir`, keyed to `before`: the identity read
 * before the files were. Returns false (nothing written) when its files changed since, or too
 * recently to be told apart from a later change. `signal`: calls the write off (it rejects with the
 * signal's reason): the temp file is removed and nothing is renamed into place.
 */
export async function saveCollectionCache(stateDir: string, dataDir: string, name: CollectionName, ix: CollectionIndex, before: DataIdentity, signal?: AbortSignal): Promise<boolean> {
  if (!crc32) return false;
  const now = await readDataIdentity(dataDir);
  if (now.files.join('\n') !== before.files.join('\n') || racy(before)) return false;
  signal?.throwIfAborted();
  const w = new SectionWriter();
  const collection = w.collection(ix);
  const key = await collectionKey(name, dataDir, before);
  // The files' digests, for a later load that finds them touched but not changed (content-digest.ts):
  // hashed once per file version (the first write of each; at 100k, 847 MB in about 0.6 s of CPU).
  const digests = await Promise.all(keyFiles(name, before).map((f) => fileDigest(dataDir, f)));
  signal?.throwIfAborted();
  const last = w.sections.at(-1);
  const body = last === undefined ? 0 : last.offset + align8(last.bytes);
  // The file's size is in the header, which sits before the sections: find the fixed point (the
  // header grows by a digit at most once).
  let json = Buffer.alloc(0);
  for (let size = 0, prev = -1; size !== prev; ) {
    prev = size;
    json = Buffer.from(JSON.stringify({ key, size, digests, sections: w.sections, collection } satisfies Header));
    size = align8(PREFIX_BYTES + json.length) + body;
  }
  const head = Buffer.alloc(align8(PREFIX_BYTES + json.length));
  MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, MAGIC.length);
  head.writeUInt32LE(crc32!(json), MAGIC.length + 4);
  json.copy(head, PREFIX_BYTES);

  const file = cacheFile(stateDir, name);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 }); // the state directory is owner-only, its cache too
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await writeAll(fh, head, signal);
    const pad = Buffer.alloc(8);
    for (const v of w.views) {
      await writeAll(fh, new Uint8Array(v.buffer, v.byteOffset, v.byteLength), signal);
      if (v.byteLength % 8 !== 0) await writeAll(fh, pad.subarray(0, 8 - (v.byteLength % 8)), signal);
    }
    await fh.sync();
    await fh.close();
    signal?.throwIfAborted(); // never renamed into place once called off
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
  // The one-file cache of earlier versions would only take room now.
  await rm(oldCacheFile(stateDir), { force: true });
  return true;
}
