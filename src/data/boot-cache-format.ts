// The boot cache (issues 5, 19): the typed arrays of a validated snapshot written as they are, one
// file per collection in the state directory, so the next start on the same data files reads them
// back into the very buffers the server answers from, instead of parsing, validating and indexing
// again; after an edit, only the collections made from the edited file are built (DEPENDS).
// File: "CAPIBOOT", the header length and the header's CRC-32 (u32 LE each), a JSON header, then the
// sections back to back, each 8-byte aligned. The header holds the key (the identity (stat) of the
// data files the collection is made from, the format version and a fingerprint of the code and
// definitions that build the structures), the file's size, and a CRC-32 of every index section.
// Why that is enough without hashing the JSON arenas (most of the file; hashing them was the largest
// cost of a restart): the file only ever appears under its name complete (written to a temp file,
// fsynced, renamed, directory fsynced), so a crash while writing leaves the old file or none; a
// truncated or extended file fails the size check, a foreign or old one the magic, header CRC or key;
// damage inside an index section (which could send a request out of bounds) fails its CRC; and every
// record of an arena must start with `{` and end with `}` at its offsets, which catches a torn or
// zeroed page there (a check per record, not per byte). Any mismatch is a miss with a log line.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { endianness } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as zlib from 'node:zlib';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import type { CollectionIndex } from './indexes.ts';

/** Bump when the layout, or anything the structures are built from that the fingerprint misses, changes. */
export const BOOT_CACHE_FORMAT = 20;
export const MAGIC = Buffer.from('CAPIBOOT');
/** Data files changed this recently before the load may change again within one timestamp tick. */
const RACY_MS = 100;
/** Whole-second timestamps (ext3, HFS+, some network file systems) need a wider margin. */
const RACY_COARSE_MS = 2000;
/** One read() call is limited to 2 GiB. */
export const READ_CHUNK = 1 << 30;
// zlib.crc32 is Node >= 20.15; without it there is no cache (a miss every time).
export const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

export type Collections = Record<CollectionName, CollectionIndex>;
export type DataIdentity = { readonly at: number; readonly files: readonly string[] };

/** Identity of the data files as they are now (stat before reading them, so a later change is a miss). */
export async function readDataIdentity(dataDir: string): Promise<DataIdentity> {
  const at = Date.now();
  const files = await Promise.all(
    RESOURCE_LIST.map(async (def) => {
      const s = await stat(join(dataDir, def.file), { bigint: true });
      return `${def.file}:${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    }),
  );
  return { at, files };
}

/** Files changed so recently that a same-size rewrite could keep the same timestamps. */
export function racy(id: DataIdentity): boolean {
  const times = id.files.flatMap((f) => f.split(':').slice(-2).map(BigInt));
  const coarse = times.every((t) => t % 1_000_000_000n === 0n);
  const newest = Number(times.reduce((a, b) => (a > b ? a : b)) / 1_000_000n);
  return newest > id.at - (coarse ? RACY_COARSE_MS : RACY_MS);
}

let codePrint: Promise<string> | null = null;
/** The hash of src/data and src/resources, defined by bin/dev-bundle.mjs in the bundle it builds; else not defined at all. */
declare const CELEBRITY_API_CODE_PRINT: string | undefined;

/**
 * Under tsx: the very hash bin/dev-bundle.mjs (codePrint) compiles into a checkout's bundle, each
 * .ts file of src/data and src/resources by path and contents, so that an in-process server (tests,
 * `startServer()`) and the CLI share one boot cache instead of rebuilding it at every switch (at 100k,
 * a minute or more each time). test/bin/dev-bundle.test.ts checks the two agree.
 */
async function sourcesPrint(src: string): Promise<string> {
  const hash = createHash('sha256');
  for (const dir of ['data', 'resources']) {
    for (const name of (await readdir(join(src, dir))).filter((n) => n.endsWith('.ts')).sort()) {
      hash.update(`src/${dir}/${name}\0`).update(await readFile(join(src, dir, name)));
    }
  }
  return hash.digest('hex');
}

/** Hash of the code that builds the structures: the sources (or the bundle), and every definition. */
function fingerprint(): Promise<string> {
  return (codePrint ??= (async () => {
    const hash = createHash('sha256');
    hash.update(`${BOOT_CACHE_FORMAT}\0${endianness()}\0${process.version}\0${JSON.stringify(process.versions.unicode ?? '')}\0`);
    const here = fileURLToPath(import.meta.url);
    // A checkout, through tsx or its bundle: the sources' hash, which covers every definition too
    // (their functions' text differs between tsx's output and esbuild's, so it is left out). Bundled
    // otherwise (dist/): the bundle's directory. In a single executable (no such directory): the
    // executable itself, by size and time.
    const sources = typeof CELEBRITY_API_CODE_PRINT === 'string' ? CELEBRITY_API_CODE_PRINT : here.endsWith('.ts') ? await sourcesPrint(resolve(dirname(here), '..')) : null;
    if (sources !== null) return hash.update(`sources ${sources}`).digest('hex');
    let found = false;
    const dir = dirname(here);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => /\.(ts|js|cjs|mjs)$/.test(n)).sort()) {
      hash.update(name).update(await readFile(join(dir, name)));
      found = true;
    }
    if (!found) {
      const s = await stat(process.execPath);
      hash.update(`${process.execPath}:${s.size}:${s.mtimeMs}`);
    }
    const fns = (_: string, v: unknown) => (typeof v === 'function' ? String(v) : v);
    for (const def of RESOURCE_LIST) hash.update(JSON.stringify(def, fns));
    return hash.digest('hex');
  })());
}

/**
 * The data files each collection's answers are made from: its own, and those its link reads
 * directly (a link reads source records, never linked ones, so one level is enough). An edit of
 * one file rebuilds only the collections that list it. test/data/boot-cache.test.ts checks that
 * linking each collection reads nothing else.
 */
export const DEPENDS: Readonly<Record<CollectionName, readonly CollectionName[]>> = {
  celebrities: ['celebrities', 'movies'], // filmography: the movies whose cast names the celebrity
  outfits: ['outfits', 'celebrities'],
  news: ['news', 'celebrities'],
  movies: ['movies', 'celebrities'], // cast names
  reviews: ['reviews', 'movies'],
};

/** The identities (readDataIdentity) of the files collection `name` is made from, in DEPENDS order. */
export function keyFiles(name: CollectionName, id: DataIdentity): string[] {
  return DEPENDS[name].map((c) => id.files[RESOURCE_LIST.findIndex((d) => d.name === c)]!);
}

/** A collection's key: format, code, data directory and the identity of the files it depends on. */
export async function collectionKey(name: CollectionName, dataDir: string, id: DataIdentity): Promise<string> {
  return JSON.stringify({ format: BOOT_CACHE_FORMAT, code: await fingerprint(), dir: resolve(dataDir), collection: name, files: keyFiles(name, id) });
}

/**
 * A key apart: its files' identities, and the rest (format, code, directory, collection). Two keys
 * with the same rest differ only in the files' identities, which the files' bytes may still match.
 */
export function splitKey(key: string): { readonly rest: string; readonly files: readonly string[] } | null {
  try {
    const { files, ...rest } = JSON.parse(key) as { files?: unknown };
    return Array.isArray(files) && files.every((f) => typeof f === 'string') ? { rest: JSON.stringify(rest), files } : null;
  } catch {
    return null;
  }
}

/** One file per collection, so an edit rewrites only what it affects. */
export const cacheFile = (stateDir: string, name: CollectionName): string => join(stateDir, 'cache', `${name}.bin`);
/** The single file of format 3 and before: removed when the new ones are written. */
export const oldCacheFile = (stateDir: string): string => join(stateDir, 'cache', 'snapshot.bin');

export type Kind = 'u8' | 'u16' | 'i32' | 'u32' | 'f64';
export type View = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float64Array;
export const KIND_BYTES = { u8: 1, u16: 2, i32: 4, u32: 4, f64: 8 } as const;
/**
 * A section: one typed array, 8-byte aligned in the file. `crc` is the CRC-32 of an index section
 * (offsets, orders, postings, hash tables), or null for a JSON byte arena (the bulk of the file).
 */
export interface Section { readonly kind: Kind; readonly offset: number; readonly bytes: number; readonly crc: number | null }
export interface TableRef { readonly units: number; readonly starts: number; readonly slots: number }
/** The slugs: where each starts in its list item (the text is the list arena's), and the hash slots. */
export interface SlugRef { readonly at: number; readonly slots: number }
export interface FragmentsRef { readonly bytes: number; readonly starts: number; readonly gaps: number | null; readonly keys: number | null }
/** `planned`: the detail-only layout of detail-layout.ts (else `own` holds whole bodies). */
export interface DetailsRef { readonly planned: boolean; readonly own: FragmentsRef; readonly cuts: number; readonly ownCuts: number }
export interface GramsRef { readonly keys: number; readonly offsets: number; readonly lows: number; readonly blocks: number; readonly at: number; readonly bitsAt: number; readonly bits: number; readonly bitCounts: number }
export interface PostingRef { readonly param: string; readonly keys: TableRef | null; readonly embed: number; readonly offsets: number; readonly ids: number; readonly sortedKeys: number; readonly sortedOffsets: number; readonly sorted: readonly number[]; readonly bitsAt: number; readonly bits: number }
/** An embed (detail-layout.ts Embed): the ids it holds; the index it reads is the snapshot's collection `target`. */
export interface EmbedRef { readonly field: string; readonly target: CollectionName; readonly ids: number; readonly starts: number | null; readonly at: number | null }
export interface CollectionRef {
  readonly size: number;
  readonly slugs: SlugRef;
  readonly list: FragmentsRef;
  readonly detail: DetailsRef;
  readonly embeds: readonly EmbedRef[];
  readonly orders: readonly number[];
  readonly ranks: readonly number[];
  /** Per sort, the section of its kept keys (indexes.ts CollectionIndex `sortKeys`), or null. */
  readonly sortKeys: readonly (number | null)[];
  readonly postings: readonly PostingRef[];
  readonly range: { param: string; ids: number; values: number; byId: number } | null;
  readonly searchText: TableRef;
  /** search-text.ts SearchFrom: its field, and the section of its bitmap. */
  readonly searchFrom: { readonly field: number; readonly derived: number } | null;
  readonly unigrams: GramsRef;
  readonly bigrams: GramsRef;
  readonly trigrams: GramsRef;
  /** search-index.ts TextGroups: the sections of its starts and ids (both empty: no groups). */
  readonly searchGroups: { readonly starts: number; readonly ids: number };
  /** record-groups.ts RecordGroups: the sections of its source digests (null: none) and index digests; absent: none. */
  readonly recordGroups?: { readonly sources: number | null; readonly keys: number; readonly sorts: number } | null;
}
/**
 * `size`: the whole file's length, so a truncated or extended file is a miss before any section is read.
 * `digests`: the SHA-256 of each file of the key (content-digest.ts), null where it was not known:
 * a file whose identity changed since is still this cache's when its bytes hash the same.
 */
export interface Header { readonly key: string; readonly size: number; readonly digests: readonly (string | null)[] | null; readonly sections: readonly Section[]; readonly collection: CollectionRef }

/** `n` rounded up to a multiple of 8, in doubles: a section or a file passes 2 GiB at scale 1M (a bitwise `& ~7` wraps there). */
export const align8 = (n: number) => (n % 8 === 0 ? n : n + 8 - (n % 8));
/** Magic, header length (u32 LE), CRC-32 of the header (u32 LE), then the header JSON. */
export const PREFIX_BYTES = MAGIC.length + 8;
