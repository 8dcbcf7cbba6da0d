// The thread that builds some collections of a load beside the main thread (src/data/build-split.ts):
// it reads, validates, links and indexes its collections from the data directory as the main thread
// would, each once the collections it reads (DEPENDS) are sent to it, and hands their indexes back
// as the boot cache lays them out, every large buffer transferred (no copy). Any error is sent back
// as it is: the main thread then loads on one thread, which reports invalid data exactly as always.
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import { DEPENDS } from './boot-cache-format.ts';
import { packIndex } from './boot-cache-write.ts';
import { SEARCH_ELSEWHERE, type CollectionIndex, type SearchElsewhere } from './indexes.ts';
import { fromKnownParts, KeptRecords } from './known.ts';
import { DataError, type KnownCollection } from './load.ts';
import { buildCollections } from './snapshot.ts';
import { cutAhead } from './collect.ts';
import { releaseThreadHeap } from './gc.ts';
import { TEXT_SLICE, transferable, type BuildSetup, type FromBuildThread, type ToBuildThread } from './build-split.ts';
import type { SearchIndex } from './search-index.ts';

const main = parentPort!;
const { dir, names, idle } = workerData as BuildSetup;
const have: Partial<Record<CollectionName, CollectionIndex>> = {};
/** Link targets sent as their kept records (not yet indexed on the main thread). */
const kept: Partial<Record<CollectionName, KnownCollection>> = {};
/** Per link target, a promise that it has come (either way) and its resolve. */
const arrivals = new Map<CollectionName, { readonly promise: Promise<void>; readonly resolve: () => void }>();
function arrival(name: CollectionName): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let a = arrivals.get(name);
  if (a === undefined) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    arrivals.set(name, (a = { promise, resolve }));
  }
  return a;
}
/** Kept records of a collection sent in slices, built into its link target as they come, until the last one. */
const slices: Partial<Record<CollectionName, KeptRecords>> = {};
/** Search indexes the main thread builds (build-split.ts), by collection, until they come back. */
const searches = new Map<CollectionName, { readonly promise: Promise<SearchIndex>; readonly resolve: (s: SearchIndex) => void; readonly reject: (err: Error) => void }>();
main.on('message', (m: ToBuildThread) => {
  if ('searched' in m) {
    const s = searches.get(m.searched)!;
    return 'search' in m ? s.resolve(m.search) : s.reject(new Error(`the main thread's search index of ${m.searched}: ${m.error}`));
  }
  const name = 'kept' in m ? m.kept : m.known;
  if (have[name]) return;
  if ('kept' in m) {
    // A first slice again: the main thread reads the file again (edited while it was read).
    if (m.first) slices[name] = new KeptRecords(RESOURCES[name]);
    slices[name]!.add(m.records);
    if (!m.last) return;
    const got = slices[name]!.finish();
    delete slices[name];
    have[name] = got.index;
    kept[name] = got.known;
  } else {
    have[name] = fromKnownParts(RESOURCES[name], m.parts);
  }
  arrival(name).resolve();
});
const needsOf = (name: CollectionName) => DEPENDS[name].filter((d) => d !== name);
/** A collection's build has begun: no more files are cut ahead. */
let building = false;
// Until what its first collection links to has come (celebrities, read on the main thread: 1-2.5 s
// at 100k), the thread cuts its files into records, one after the other, holding byte ranges and
// source digests only (collect.ts cutAhead): each read then neither scans nor hashes its bytes.
// Parsed records held through that wait cost more in scavenges than the wait (session 15, split15).
void (async () => {
  for (const name of names) {
    if (building) break;
    await cutAhead(join(dir, RESOURCES[name].file));
  }
})();

try {
  const packed: Extract<FromBuildThread, { built: unknown }>['built'] = [];
  // Each collection once what it reads has come, the first of `names` that can start: outfits as
  // soon as celebrities are read (their kept records), before reviews, which wait for movies built.
  const left = [...names];
  while (left.length > 0) {
    const name = await Promise.race(left.map((n) => Promise.all(needsOf(n).map((d) => arrival(d).promise)).then(() => n)));
    left.splice(left.indexOf(name), 1);
    building = true;
    const needs = needsOf(name);
    // Once the main thread is idle, the search index of the collection being finished is built there
    // (the texts sent as they are when asked, between the steps of its finish: indexes.ts).
    const searchElsewhere: SearchElsewhere = (texts) => {
      if (Atomics.load(idle, 0) !== 1 || searches.has(name)) return false;
      let resolve!: (s: SearchIndex) => void;
      let reject!: (err: Error) => void;
      const promise = new Promise<SearchIndex>((res, rej) => ((resolve = res), (reject = rej)));
      searches.set(name, { promise, resolve, reject });
      for (let i = 0; i < texts.length || i === 0; i += TEXT_SLICE) {
        main.postMessage({ search: name, texts: texts.slice(i, i + TEXT_SLICE), last: i + TEXT_SLICE >= texts.length } satisfies FromBuildThread);
      }
      return true;
    };
    const built = await buildCollections(dir, new Set([name]), Object.fromEntries(needs.map((d) => [d, have[d]!])), Object.fromEntries(needs.flatMap((d) => (kept[d] ? [[d, kept[d]]] : []))), searchElsewhere);
    let ix = built[name]!;
    if (ix.search === SEARCH_ELSEWHERE) ix = { ...ix, search: await searches.get(name)!.promise };
    packed.push({ name, ...packIndex(ix) });
  }
  // Buffers of the Buffer pool (8 KiB, shared by small Buffers) or empty ones are copied; the rest,
  // each collection's own, are moved (a resizable one must be: Node 20 cannot clone it). Nothing here
  // uses them once sent: the thread ends.
  const transfer = transferable(packed.flatMap((p) => p.views));
  // What the builds read goes, then this thread's heap, while the results are all it holds (gc.ts).
  for (const name of Object.keys(have) as CollectionName[]) delete have[name];
  for (const name of Object.keys(kept) as CollectionName[]) delete kept[name];
  releaseThreadHeap();
  main.postMessage({ built: packed } satisfies FromBuildThread, transfer);
} catch (err) {
  main.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err), data: err instanceof DataError } satisfies FromBuildThread);
}
