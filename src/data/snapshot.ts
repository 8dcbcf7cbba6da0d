// One immutable, fully indexed version of the data. A reload builds a new one beside the old and the
// server swaps it in one step; requests in flight finish on the snapshot they started with.
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { RESOURCE_LIST, RESOURCES } from '../resources/index.ts';
import type { CollectionName, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import type { Logger } from '../log.ts';
import { collectionKey, DEPENDS, readDataIdentity, splitKey, type DataIdentity } from './boot-cache-format.ts';
import { openCollectionCache, type CacheResult } from './boot-cache-read.ts';
import { knownDigest, sameBut, sameData } from './content-digest.ts';
import { saveCollectionCache } from './boot-cache-write.ts';
import { releaseMemory } from './gc.ts';
import { indexBuilder, linkEmbeds, type CollectionIndex, type SearchElsewhere } from './indexes.ts';
import { decodableFields, knownCollection } from './known.ts';
import { DataError, loadCollections, type DataInput, type IndexHint, type KnownCollections } from './load.ts';
import { BuildThread, SPLIT } from './build-split.ts';
import { bakedFields, changedRecords, grownBy, patchable, patchCollection, relinked } from './patch.ts';
import { filmographiesPatched } from './filmography.ts';
import { movedRecords, renumberedBy } from './patch-shift.ts';

export interface Snapshot {
  /** Identifies the data that is live, for logs and /metrics. */
  readonly version: string;
  readonly loadedAt: string;
  readonly collections: Readonly<Record<CollectionName, CollectionIndex>>;
  /**
   * Per collection, the key of the data files it was built from (boot-cache-format.ts
   * collectionKey); null for in-memory arrays. A reload keeps every collection whose key is unchanged.
   */
  readonly keys: Readonly<Record<CollectionName, string>> | null;
}

export interface LoadOptions {
  /** State directory holding the boot cache (src/data/boot-cache-*.ts); only used for a data directory. */
  readonly cacheDir?: string;
  readonly log?: Logger;
  /** The live snapshot, on a reload: its collections whose files did not change are kept as they are. */
  readonly previous?: Snapshot;
  /** Read the boot cache into SharedArrayBuffers, for threads to share without a copy (boot-cache-read.ts). */
  readonly shared?: boolean;
  /**
   * Whether a build from the files puts some collections on a worker thread (build-split.ts): 'auto'
   * (default) where there are two cores and enough data to be worth it, 'always' (tests), 'never'.
   */
  readonly buildThreads?: BuildThreads;
  /**
   * Takes the boot cache write of what this load built instead of writing it before returning: the
   * caller starts it when it suits (a server once it listens: a first start at 100k is ready about 3 s
   * sooner), and lets it follow the live snapshot (CacheWrite).
   */
  readonly writeLater?: (write: CacheWrite) => void;
  /** False: a collection whose file changed is built whole, never patched from its index before the edit (patch.ts); true by default. */
  readonly patch?: boolean;
}

/**
 * The boot cache files of the collections a load built, to be written. It holds each collection only
 * until it is written, or until a reload replaces it (follow): a pending write never keeps a replaced
 * snapshot alive, and never renames into place the cache of data that is no longer live.
 */
export class CacheWrite {
  private readonly pending: Map<CollectionName, CollectionIndex>;
  /** The collection being written, and how to call its write off. */
  private current: { readonly name: CollectionName; readonly abort: AbortController } | null = null;
  private running: Promise<void> | null = null;
  private dropped = false;

  constructor(
    private readonly cacheDir: string,
    private readonly dataDir: string,
    private readonly before: DataIdentity,
    private readonly keys: Readonly<Record<CollectionName, string>>,
    collections: ReadonlyMap<CollectionName, CollectionIndex>,
    private readonly log: Logger | undefined,
  ) {
    this.pending = new Map(collections);
  }

  /** Writes each pending collection, one at a time; resolves once done or dropped (never rejects: failures are logged). */
  start(): Promise<void> {
    return (this.running ??= this.run());
  }

  private async run(): Promise<void> {
    const started = performance.now();
    const saved: CollectionName[] = [];
    let skipped = false;
    try {
      for (let next = this.pending.keys().next(); !next.done; next = this.pending.keys().next()) {
        const name = next.value;
        const abort = new AbortController();
        this.current = { name, abort };
        try {
          if (await saveCollectionCache(this.cacheDir, this.dataDir, name, this.pending.get(name)!, this.before, abort.signal)) saved.push(name);
          else skipped = true;
        } catch (err) {
          if (!abort.signal.aborted) throw err;
        } finally {
          this.current = null;
          this.pending.delete(name);
        }
      }
      if (this.dropped && saved.length === 0) return;
      this.log?.info(saved.length > 0 || !skipped ? 'boot cache written' : 'boot cache not written: the data files changed during or just before loading', { ms: Math.round(performance.now() - started), saved });
    } catch (err) {
      this.pending.clear();
      this.log?.warn('boot cache not written', { error: (err as Error).message });
    }
  }

  /**
   * A reload made `live` the served snapshot: a collection it rebuilt is dropped (its write called
   * off if under way), one it kept is written from the live copy (with threads, the shared one), by
   * `into` when given: the reload's own write, keyed to the files as they are now (this one, keyed
   * to the files before the edit, would find them changed and write nothing).
   */
  follow(live: Snapshot, into?: CacheWrite): void {
    for (const name of [...this.pending.keys()]) {
      if (live.keys?.[name] !== this.keys[name]) this.drop(name);
      else if (into === undefined || into.keys[name] !== this.keys[name]) this.pending.set(name, live.collections[name]);
      else {
        into.pending.set(name, live.collections[name]);
        this.drop(name);
      }
    }
  }

  /** Calls off what is not written yet (a drain deadline); a file under way is removed, never renamed into place. */
  cancel(): void {
    for (const name of [...this.pending.keys()]) this.drop(name);
  }

  private drop(name: CollectionName): void {
    this.dropped = true;
    if (this.current?.name === name) this.current.abort.abort(new Error('boot cache write called off'));
    else this.pending.delete(name);
  }
}

export type BuildThreads = 'auto' | 'always' | 'never';
/**
 * What a build did with a second thread, for the load's log line: the collections built there (and
 * those of them whose search index this thread built once idle), or why it was not used.
 */
type BuildReport = { thread?: readonly CollectionName[]; searchedHere?: readonly CollectionName[]; threadFailed?: string };

let loads = 0;

/** An index from before an edit (the live one, or the boot cache's) with its key, and the digests of its key's files when its cache header gave them. */
type Base = { readonly index: CollectionIndex; readonly key: string; readonly owned?: boolean; readonly digests?: readonly (string | null)[] | null };

/** Whether `name` reads back the records of the one collection `changed` holds (celebrities: movies, for filmographies). */
const readsBack = (name: CollectionName, changed: readonly CollectionName[]) => changed.length === 1 && RESOURCES[name].referrers?.includes(changed[0]!) === true;

function stamp(collections: Record<CollectionName, CollectionIndex>, keys: Record<CollectionName, string> | null): Snapshot {
  const loadedAt = new Date().toISOString();
  loads += 1;
  return { version: `${loadedAt.replace(/[-:]/g, '').slice(0, 15)}-${loads}`, loadedAt, collections, keys };
}

/**
 * Builds the indexes of `only` (every collection when null) from a fresh load of `input`. Each record
 * goes into its collection's index builder as soon as it is read and linked, and is let go: only
 * collections that others link to are held whole, and only until those are read. `have`: collections
 * already indexed (cached or kept), which stand in for their files: those are not read again.
 */
async function build(
  input: DataInput,
  only: ReadonlySet<CollectionName> | null,
  have: Partial<Record<CollectionName, CollectionIndex>> = {},
  threads: BuildThreads = 'auto',
  report: BuildReport = {},
  links: KnownCollections = {},
  searchElsewhere?: SearchElsewhere,
): Promise<Partial<Record<CollectionName, CollectionIndex>>> {
  if (typeof input === 'string' && threads !== 'never') {
    const split = await splitOf(input, only, threads);
    const got = split && (await buildOnTwoThreads(input, only, have, split, report));
    if (got) return got;
  }
  const { known, indexer } = indexing(have, undefined, searchElsewhere);
  return loadCollections(input, indexer, only === null ? {} : { only, known: { ...known, ...links } });
}

/**
 * What a load links to (`have`'s collections as link targets) and its index builders. What an embed
 * reads: a collection indexed earlier in this load, or one it stands in for (the loader indexes what
 * others embed from first: celebrities before outfits and news). `finished`: told of each index made;
 * `searchElsewhere`: asked by each builder whether its search index is built elsewhere (indexes.ts).
 */
function indexing(have: Partial<Record<CollectionName, CollectionIndex>>, finished?: (name: CollectionName, ix: CollectionIndex) => void, searchElsewhere?: SearchElsewhere) {
  const known: KnownCollections = Object.fromEntries(Object.entries(have).map(([name, ix]) => [name, knownCollection(ix)]));
  const indexed: Partial<Record<CollectionName, CollectionIndex>> = { ...have };
  const indexer = (def: ResourceDefinition, hint: IndexHint) => {
    const builder = indexBuilder(def, { records: 0, bytes: hint.bytes, sources: hint.sources }, (name) => indexed[name], searchElsewhere);
    return {
      add: builder.add,
      finish: () => {
        const ix = (indexed[def.name] = builder.finish());
        finished?.(def.name, ix);
        return ix;
      },
    };
  };
  return { known, indexer };
}

/**
 * Builds `only` of a data directory on this thread alone, as a load always did (build-thread.ts);
 * `links`: link targets other than `have`'s (kept records: known.ts fromKeptRecords); `searchElsewhere`:
 * whether a collection's search index is built elsewhere (indexes.ts SearchElsewhere).
 */
export function buildCollections(
  dir: string,
  only: ReadonlySet<CollectionName>,
  have: Partial<Record<CollectionName, CollectionIndex>>,
  links: KnownCollections = {},
  searchElsewhere?: SearchElsewhere,
): Promise<Partial<Record<CollectionName, CollectionIndex>>> {
  return build(dir, only, have, 'never', {}, links, searchElsewhere);
}

/**
 * Below this many bytes of the thread's files, a second thread is not worth its start (a thread and
 * its modules: 0.1-0.5 s of CPU); test fixtures stay on one thread unless a test asks ('always').
 */
const SPLIT_MIN_BYTES = 16 << 20;

/** The collections a build puts on a second thread (SPLIT), or null: none, nothing left for this one, one core. */
async function splitOf(dir: string, only: ReadonlySet<CollectionName> | null, threads: BuildThreads): Promise<CollectionName[] | null> {
  const want = only ?? new Set(RESOURCE_LIST.map((d) => d.name));
  const split = SPLIT.filter((n) => want.has(n));
  if (split.length === 0 || split.length === want.size) return null;
  if (threads === 'always') return split;
  if (availableParallelism() < 2) return null;
  const sizes = await Promise.all(split.map((n) => stat(join(dir, RESOURCES[n].file)).then((s) => s.size, () => 0)));
  return sizes.reduce((a, b) => a + b, 0) >= SPLIT_MIN_BYTES ? split : null;
}

/**
 * `only` built with `split` on a worker thread (build-split.ts); null when that cannot be done
 * (no thread, or either thread failed): the caller then builds on one thread, which also reports
 * invalid data exactly as a load on one thread always has (the thread's load stops at its first
 * invalid collection, and the main thread's never sees the thread's files).
 */
async function buildOnTwoThreads(
  dir: string,
  only: ReadonlySet<CollectionName> | null,
  have: Partial<Record<CollectionName, CollectionIndex>>,
  split: readonly CollectionName[],
  report: BuildReport,
): Promise<Partial<Record<CollectionName, CollectionIndex>> | null> {
  const thread = BuildThread.start(dir, split);
  if (thread === null) return null;
  for (const [name, ix] of Object.entries(have)) thread.offer(name as CollectionName, ix);
  const rest = new Set([...(only ?? RESOURCE_LIST.map((d) => d.name))].filter((n) => !split.includes(n)));
  const { known, indexer } = indexing(have, (name, ix) => thread.offer(name, ix)); // the thread waits for each
  let mine: Partial<Record<CollectionName, CollectionIndex>>;
  try {
    mine = await loadCollections(dir, indexer, { only: rest, known, onKept: (def) => thread.offerKept(def.name) });
    thread.mainIdle();
  } catch (err) {
    thread.stop();
    if (err instanceof DataError) return null;
    throw err;
  }
  const theirs = await thread.result;
  if ('built' in theirs && !thread.keptMatch(mine)) {
    // Read again to be linked, a collection sent early did not hold the same records: edited between the reads.
    report.threadFailed = 'a collection sent to the build thread as read was edited before it was indexed';
    return null;
  }
  if ('built' in theirs) {
    report.thread = split;
    if (thread.searched.length > 0) report.searchedHere = thread.searched;
    return { ...mine, ...theirs.built };
  }
  if (!theirs.data) report.threadFailed = theirs.error;
  return null;
}

/** The snapshot of `collections`, every embed pointed at the collection it reads. */
function complete(collections: Partial<Record<CollectionName, CollectionIndex>>): Record<CollectionName, CollectionIndex> {
  return linkEmbeds(collections) as Record<CollectionName, CollectionIndex>;
}

/** An edit that keeps coming back while loading: after this many tries the load takes what it read. */
const TRIES = 3;

/**
 * Reads, validates, links and indexes the data. Throws DataError listing every problem. For a data
 * directory, each collection is taken, in this order, from `previous` (a reload) or the boot cache
 * in `cacheDir` when the files it is made from are unchanged, and built otherwise; what is built is
 * saved to the cache. Files edited while loading make it start over, so the collections of one
 * snapshot always come from the same version of the files (never a mix).
 */
export async function loadSnapshot(input: DataInput, options: LoadOptions = {}): Promise<Snapshot> {
  const { log, previous } = options;
  if (typeof input !== 'string') return stamp(complete(await build(input, null)), null);
  const cacheDir = options.cacheDir === 'memory' ? undefined : options.cacheDir;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    // Stat before reading: a change while loading then shows, and the load starts over.
    const before: DataIdentity | null = await readDataIdentity(input).catch(() => null);
    if (before === null) return stamp(complete(await build(input, null)), null); // throws the loader's clear error
    const keys = {} as Record<CollectionName, string>;
    const collections: Partial<Record<CollectionName, CollectionIndex>> = {};
    const missing = new Set<CollectionName>();
    const kept: string[] = [];
    const cached: CollectionName[] = [];
    const misses: Record<string, string> = {};
    for (const def of RESOURCE_LIST) keys[def.name] = await collectionKey(def.name, input, before);
    // A live collection is kept when its files are unchanged, or changed in identity only (touched,
    // copied over: the same bytes, content-digest.ts).
    const was = previous?.keys;
    const reused = await Promise.all(RESOURCE_LIST.map((def) => was != null && sameData(input, was[def.name], keys[def.name])));
    const reuse = (name: CollectionName) => reused[RESOURCE_LIST.findIndex((d) => d.name === name)]!;
    // Each cache file's header is checked first; the sections of those that match are read side by
    // side (the reads overlap on the thread pool), and a build of what missed waits only for the
    // collections its links read (DEPENDS): after an edit of outfits.json at 100k, the news, movies and
    // reviews (630 MB of cache) are read while outfits is built.
    const opened = await Promise.all(
      RESOURCE_LIST.map((def) => (reuse(def.name) || cacheDir === undefined ? null : openCollectionCache(cacheDir, input, def, before, options.shared))),
    );
    /** Read from a cache file written for the same bytes under other identities: written again under the current key. */
    const stale = new Set<CollectionName>();
    const reading = new Map<CollectionName, Promise<CacheResult>>();
    for (const [i, def] of RESOURCE_LIST.entries()) {
      const name = def.name;
      if (reuse(name)) {
        collections[name] = previous!.collections[name];
        kept.push(name);
        continue;
      }
      const got = opened[i];
      if (got?.read) {
        reading.set(name, got.read());
        if (got.stale) stale.add(name);
      } else {
        missing.add(name);
        if (got) misses[name] = got.miss;
      }
    }
    /** The sections of `names` once read; one that missed after all (a damaged section) is built. */
    const take = async (names: readonly CollectionName[]): Promise<void> => {
      const got = await Promise.all(names.map((name) => reading.get(name)!));
      names.forEach((name, k) => {
        reading.delete(name);
        const r = got[k]!;
        if (r.index) {
          collections[name] = r.index;
          cached.push(name);
        } else {
          missing.add(name);
          stale.delete(name);
          misses[name] = r.miss;
        }
      });
    };
    /** Cache reads under way of the collections that the links of `names` read. */
    const linkTargets = (names: Iterable<CollectionName>) => [...reading.keys()].filter((n) => [...names].some((m) => DEPENDS[m].includes(n)));
    if (missing.size === 0) await take([...reading.keys()]);
    const inOrder = (names: Iterable<CollectionName>) => {
      const set = new Set(names);
      return RESOURCE_LIST.map((d) => d.name).filter((n) => set.has(n));
    };
    const rewrite = (names: Iterable<CollectionName>) => {
      if (cacheDir === undefined) return;
      const write = new CacheWrite(cacheDir, input, before, keys, new Map([...names].map((name) => [name, collections[name]!])), log);
      if (options.writeLater) options.writeLater(write);
      else return write.start();
    };
    if (missing.size === 0) {
      const fields = { ms: Math.round(performance.now() - started), kept, cached: inOrder(cached), ...(stale.size > 0 ? { sameBytes: inOrder(stale) } : {}) };
      log?.info(kept.length === 0 ? 'data loaded from the boot cache' : 'no data file changed; every collection kept', fields);
      if (stale.size > 0) await rewrite(stale);
      return stamp(complete(collections), keys);
    }
    for (let wait = linkTargets(missing); wait.length > 0; wait = linkTargets(missing)) await take(wait);
    /**
     * The index of `name` built before an edit of the files numbered `skip` among DEPENDS[name] (the
     * live one, or the boot cache's), with its key; null when there is none.
     */
    const baseOf = async (name: CollectionName, skip: readonly number[]): Promise<Base | null> => {
      const live = previous?.collections[name];
      if (was?.[name] !== undefined && live !== undefined && (await sameBut(input, was[name], keys[name], skip))) return { index: live, key: was[name] };
      if (cacheDir === undefined) return null;
      const own = skip.length === 1 && skip[0] === DEPENDS[name].indexOf(name);
      const opened = await openCollectionCache(cacheDir, input, RESOURCES[name], before, options.shared, own ? true : skip);
      if (opened.read === null) return null;
      const index = (await opened.read()).index;
      // (Read for this load alone: its memory is this load's to change.)
      return index === null ? null : { index, key: opened.key, owned: true, digests: opened.digests };
    };
    /**
     * Whether `base` (an index of `name`) was made from the same version of `d`'s file as `old` (an
     * index of `d`): the same identity, or the same bytes (the digests their cache headers hold: a
     * cache rewritten under a touched identity, while another's write was cut short, says the same).
     */
    const sameFileOf = (base: Base, name: CollectionName, old: Base, d: CollectionName): boolean => {
      const a = DEPENDS[name].indexOf(d);
      const b = DEPENDS[d].indexOf(d);
      const fa = splitKey(base.key)?.files[a];
      const fb = splitKey(old.key)?.files[b];
      if (fa === undefined || fb === undefined) return false;
      if (fa === fb) return true;
      const da = base.digests?.[a] ?? knownDigest(fa);
      return da != null && da === (old.digests?.[b] ?? knownDigest(fb));
    };
    /** The index each collection patched or built in this load was made from (or would have been): what an edit changed of it is told against that. */
    const bases = new Map<CollectionName, Promise<{ readonly index: CollectionIndex; readonly key: string } | null>>();
    const baseBefore = (name: CollectionName) => {
      let got = bases.get(name);
      if (got === undefined) bases.set(name, (got = baseOf(name, [DEPENDS[name].indexOf(name)])));
      return got;
    };
    /** The records a patch read again, and their sources (patch.ts PatchResult `changed`). */
    const patchedRecords = new Map<CollectionName, { readonly ids: Int32Array; readonly sources: readonly SourceRecord[] }>();
    /** Patches `name` (null), or says why not ('' when there is nothing to patch from). */
    const patchOne = async (name: CollectionName): Promise<string | null> => {
      const def = RESOURCES[name];
      const others = DEPENDS[name].filter((n) => n !== name);
      const embedsFrom = (n: CollectionName) => [...def.listFields, ...def.detailFields].some((f) => typeof f !== 'string' && f.from === n);
      const linkTarget = (n: CollectionName) => (missing.has(n) ? (standIns[n] ?? (embedsFrom(n) ? undefined : linkStandIns[n])) : collections[n]);
      if (options.patch === false || !patchable(def) || !others.every((n) => linkTarget(n) !== undefined)) return '';
      const base = (await baseBefore(name))?.index ?? null;
      if (base === null) return '';
      const known = Object.fromEntries(others.map((n) => [n, knownCollection(linkTarget(n)!)]));
      const got = await patchCollection(input, def, base, (t) => linkTarget(t), known, { identity: before.files[RESOURCE_LIST.indexOf(def)] });
      if (got.index === null) return got.why;
      collections[name] = got.index;
      if (got.changed !== undefined) patchedRecords.set(name, got.changed);
      return null;
    };
    /**
     * The index of `name`, whose own file did not change, built before the edit of the files of
     * `changed` (collections it links to, patched or built in this load), when what it holds of their
     * records (patch.ts bakedFields: slugs, names, pictures...) is the same in their new indexes as in
     * those they were made from before the edit, which it was built with (the same file identities in
     * both keys); else, after an edit of one file, with the records that hold what changed written
     * again (patch.ts relinked: `relinked` true); else null (it is built).
     */
    const diffs = new Map<CollectionName, ReturnType<typeof changedRecords>>();
    const moves = new Map<CollectionName, ReturnType<typeof movedRecords>>();
    const unaffectedOne = async (name: CollectionName, changed: readonly CollectionName[], base: { readonly index: CollectionIndex; readonly key: string; readonly owned?: boolean }): Promise<{ readonly index: CollectionIndex; readonly relinked: boolean } | null> => {
      const fields = changed.map((d) => bakedFields(RESOURCES[name], d, base.index));
      if (changed.length === 0 || fields.some((f) => f === null)) return null;
      let index = base.index;
      let relink = false;
      for (const [k, d] of changed.entries()) {
        const old = await baseBefore(d);
        if (old === null || !sameFileOf(base, name, old, d)) return null;
        // Which records of `d` changed, and in which fields, found once for every candidate (a scan of its records' bytes).
        if (!diffs.has(d)) diffs.set(d, changedRecords(old.index, collections[d]!, decodableFields(RESOURCES[d])));
        const all = diffs.get(d)!;
        if (all === null) {
          // Records of `d` inserted in the middle (every later one numbered anew), none of what this
          // holds of the others changed: what it numbers by them renumbered (patch-shift.ts).
          if (!moves.has(d)) moves.set(d, movedRecords(old.index, collections[d]!, decodableFields(RESOURCES[d])));
          const moved = moves.get(d)!;
          // (What it holds of a record changed as well: not patched, built.)
          if (moved === null || [...moved.changed.values()].some((f) => f.some((x) => fields[k]!.includes(x)))) return null;
          const renumbered = renumberedBy(index, d, moved, collections[d]!.size);
          if (renumbered === null) return null;
          index = renumbered;
          continue;
        }
        const differ = new Map<number, string[]>();
        for (const [id, f] of all) {
          const held = f.filter((x) => fields[k]!.includes(x));
          if (held.length > 0) differ.set(id, held);
        }
        if (differ.size === 0) continue;
        if (changed.length > 1 || options.patch === false) return null;
        const got = relinked(index, d, old.index, collections[d]!, differ, (t) => collections[t] ?? standIns[t], base.owned === true);
        if (got.index === null) {
          unpatched[name] = got.why;
          return null;
        }
        index = got.index;
        relink = true;
      }
      // (Records added at the end of those: an empty posting each where their ids number postings.)
      return { index: changed.reduce((ix, d) => grownBy(ix, d, collections[d]!.size), index), relinked: relink };
    };
    /**
     * The index of `name` (the celebrities), whose own file did not change, built before the edit of
     * the file of `d` (the movies, which it reads back: filmographies), when `d` was patched: as it
     * was when what `name` reads back of it is the same, else with the records whose filmographies
     * changed written again (filmography.ts); else null (it is built).
     */
    const readBackSame = async (name: CollectionName, d: CollectionName, base: Base): Promise<{ readonly index: CollectionIndex; readonly relinked: boolean } | null> => {
      const old = await baseBefore(d);
      const edit = patchedRecords.get(d);
      if (old === null || edit === undefined || !sameFileOf(base, name, old, d)) return null;
      const got = filmographiesPatched(base.index, old.index, collections[d]!, edit.ids, edit.sources, (t) => collections[t] ?? standIns[t], base.owned === true);
      if (got.index === null) {
        unpatched[name] = got.why;
        return null;
      }
      return { index: got.index, relinked: got.index !== base.index };
    };
    if (cacheDir !== undefined) log?.info('boot cache not used for some collections; loading them from the data files', { misses });
    // A collection whose own file did not change, rebuilt for an edit of a file it links to (a
    // candidate): kept when what it holds of that file's records did not change (an edit of a
    // celebrity's career keeps outfits, news and movies). What it links to is patched or built first.
    const report: BuildReport = {};
    const unaffected: CollectionName[] = [];
    /** Those kept with the records that hold what the edit changed written again (patch.ts relinked). */
    const relinkedNames: CollectionName[] = [];
    /** Those that may be kept: the collections they link to that are rebuilt, and the index each was built as before the edit. */
    const candidates = new Map<CollectionName, { readonly changed: readonly CollectionName[]; readonly base: { readonly index: CollectionIndex; readonly key: string; readonly owned?: boolean } }>();
    // Their indexes before the edit are read side by side, and while the edited file is patched (the
    // reads overlap it on the thread pool: after a celebrity's name edit at 100k, 0.9 GB of outfits,
    // news and movies); only a stand-in (below) is waited for before.
    const baseReads: { readonly name: CollectionName; readonly changed: readonly CollectionName[]; readonly base: Promise<{ readonly index: CollectionIndex; readonly key: string; readonly owned?: boolean } | null> }[] = [];
    // The index before the edit of each collection that may be patched is read beside those (it waited
    // for the stand-ins below: after a celebrity's name edit, its 128 MB read after movies' 110 MB).
    if (options.patch !== false) for (const name of inOrder(missing)) if (patchable(RESOURCES[name])) baseBefore(name).catch(() => {}); // (awaited where used)
    for (const name of inOrder(missing)) {
      const changed = DEPENDS[name].filter((d) => d !== name && missing.has(d));
      if (options.patch === false || changed.length === 0 || (changed.some((d) => bakedFields(RESOURCES[name], d) === null) && !readsBack(name, changed))) continue;
      const base = baseOf(name, changed.map((d) => DEPENDS[name].indexOf(d)));
      base.catch(() => {}); // (awaited below: a failure is thrown there)
      baseReads.push({ name, changed, base });
    }
    // A candidate's index before the edit stands in for it where what is patched or built first
    // embeds it, when its list items hold only its own source fields (celebrities embed the movies
    // of their filmographies by id, from the movies' list items: the same bytes whether movies are
    // kept or built).
    const ownList = (def: ResourceDefinition) => def.listFields.every((f) => typeof f === 'string' && !Object.hasOwn(def.derived.properties, f) && f !== def.late?.field);
    const standIns: Partial<Record<CollectionName, CollectionIndex>> = {};
    /**
     * A candidate's index before the edit as a link target alone (what a link reads of it, `readByLinks`,
     * is its own source fields: the celebrities' names for the movies' casts), for a collection that
     * does not embed its records: the celebrities' (their filmographies read the edited movies back).
     */
    const linkStandIns: Partial<Record<CollectionName, CollectionIndex>> = {};
    for (const { name, base, changed } of baseReads) {
      const linkOnly = readsBack(name, changed);
      if (!ownList(RESOURCES[name]) && !linkOnly) continue;
      const index = (await base)?.index;
      if (index !== undefined) (linkOnly ? linkStandIns : standIns)[name] = index;
    }
    // A collection whose own file alone changed: patched from its index before the edit (patch.ts).
    const patched: CollectionName[] = [];
    const unpatched: Record<string, string> = {};
    for (const name of inOrder(missing)) {
      const why = await patchOne(name);
      if (why === null) (patched.push(name), missing.delete(name), stale.delete(name));
      else if (why !== '') unpatched[name] = why;
    }
    for (const { name, changed, base } of baseReads) {
      const got = await base;
      if (got !== null) candidates.set(name, { changed, base: got });
    }
    baseReads.length = 0;
    const first = new Set([...candidates.values()].flatMap(({ changed }) => changed.filter((d) => missing.has(d) && !candidates.has(d))));
    // (Invalid data there: built with the rest, which reports every problem as a whole build does.)
    const early = first.size === 0 ? null : await build(input, first, { ...collections, ...standIns }, options.buildThreads, report).catch((err: unknown) => {
      if (err instanceof DataError) return null;
      throw err;
    });
    if (early === null) first.clear();
    else {
      Object.assign(collections, early);
      for (const name of first) missing.delete(name);
    }
    for (const [name, { changed, base }] of candidates) {
      if (changed.some((d) => missing.has(d))) continue;
      const got = readsBack(name, changed) ? await readBackSame(name, changed[0]!, base) : await unaffectedOne(name, changed, base);
      if (got === null) continue;
      collections[name] = got.index;
      missing.delete(name);
      stale.delete(name);
      (got.relinked ? relinkedNames : unaffected).push(name);
    }
    // The indexes before the edit of those not kept are let go before the rest is built (outfits: 0.5 GB at 100k).
    candidates.clear();
    bases.clear();
    for (const name of Object.keys(standIns) as CollectionName[]) if (!unaffected.includes(name)) delete standIns[name];
    for (const name of Object.keys(linkStandIns) as CollectionName[]) delete linkStandIns[name];
    // Only the files of what is rebuilt are read: the other collections are link targets as they are.
    const built = new Set(missing);
    if (built.size > 0) Object.assign(collections, await build(input, built, { ...collections }, options.buildThreads, report));
    for (const name of first) (missing.add(name), built.add(name));
    await take([...reading.keys()]);
    // A cache read that missed only once its sections were read (rare: a damaged one): built too.
    const late = [...missing].filter((n) => !built.has(n));
    if (late.length > 0) {
      log?.info('boot cache not used for some collections; loading them from the data files', { misses: Object.fromEntries(late.map((n) => [n, misses[n]])) });
      Object.assign(collections, await build(input, new Set(late), { ...collections }, options.buildThreads, report));
    }
    if (report.threadFailed !== undefined) log?.warn('the build thread failed; built on this thread', { error: report.threadFailed }); // throws on invalid data: nothing is saved
    const after = await readDataIdentity(input).catch(() => null);
    const stable = after !== null && after.files.join('\n') === before.files.join('\n');
    if (!stable && attempt < TRIES) {
      log?.info('data files changed while loading; loading again', { attempt });
      continue;
    }
    log?.info('data read and indexed', {
      ms: Math.round(performance.now() - started), built: inOrder(missing), kept, cached: inOrder(cached),
      ...(patched.length > 0 ? { patched } : {}), ...(Object.keys(unpatched).length > 0 ? { unpatched } : {}), ...(unaffected.length > 0 ? { unaffected } : {}), ...(relinkedNames.length > 0 ? { relinked: relinkedNames } : {}),
      ...(report.thread ? { thread: report.thread } : {}),
      ...(report.searchedHere ? { searchedHere: report.searchedHere } : {}),
    });
    if (stable) await rewrite([...missing, ...patched, ...unaffected, ...relinkedNames, ...stale]);
    // The load's garbage goes back now, so the RSS at ready is the snapshot's, not the load's peak.
    await releaseMemory();
    return stamp(complete(collections), stable ? keys : null);
  }
}
