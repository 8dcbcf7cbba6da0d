// A load over two cores (issue 19): collections nothing else reads at build time (SPLIT: outfits
// and news; no collection's DEPENDS names them) are built by a worker thread (build-thread.ts)
// while the main thread builds the others. The thread reads only its own files: the collections its
// collections read (DEPENDS: celebrities) are sent to it, as soon as the main thread has read them
// (their kept records, a structured clone) or, when they were not read in this load, from their
// index (slugs, list items and detail-only text, a copy); it hands its indexes back with their
// buffers transferred, not copied. Once the main thread has built its own collections it says so
// (`idle`, shared memory the thread reads without a message); a collection the thread finishes from
// then on has its search index built here instead (its texts sent, the index sent back), beside
// the rest of its finish there: the thread was the longer of the two in every measured start at
// 100k, and the main thread waited idle for it (news's search index was about half of that wait).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName, SourceRecord } from '../resources/types.ts';
import { DEPENDS, type CollectionRef, type Section, type View } from './boot-cache-format.ts';
import { unpackIndex } from './boot-cache-read.ts';
import type { CollectionIndex } from './indexes.ts';
import { keptSlugsMatch, knownBuffers, knownParts, type KnownParts } from './known.ts';
import { buildSearchIndex, type SearchIndex } from './search-index.ts';

/**
 * Built on the thread when a load builds them and something else too (each once what it reads has
 * come). Which ones: what balances the two threads' CPU at 100k. Outfits and news read only
 * celebrities, sent as soon as they are read (their kept records: offerKept), so the thread starts
 * at once (outfits 9-10 s of CPU, news 6-7 s) while the main thread reads celebrities, movies,
 * builds celebrities (they wait for movies) and reviews (about 17 s). Main thread / build thread
 * CPU s at 100k (load 7-12, one run each): reviews and news, the thread waiting for celebrities'
 * index, 22.4 / 14.1; reviews and outfits, with kept celebrities, 19.5 / 15.6; outfits and news 17.1 / 16.4.
 */
export const SPLIT: readonly CollectionName[] = ['outfits', 'news'];
/** Kept records per message to the thread. */
export const KEPT_SLICE = 1000;

export interface BuildSetup {
  readonly dir: string;
  readonly names: readonly CollectionName[];
  /** [0]: 1 once the main thread has built its own collections (a SharedArrayBuffer's). */
  readonly idle: Int32Array;
}
export type ToBuildThread =
  | { readonly known: CollectionName; readonly parts: KnownParts }
  | { readonly kept: CollectionName; readonly records: readonly SourceRecord[]; readonly first: boolean; readonly last: boolean }
  | { readonly searched: CollectionName; readonly search: SearchIndex }
  | { readonly searched: CollectionName; readonly error: string };
export type FromBuildThread =
  | { readonly built: { readonly name: CollectionName; readonly ref: CollectionRef; readonly sections: readonly Section[]; readonly views: readonly View[] }[] }
  | { readonly error: string; readonly data: boolean }
  | { readonly search: CollectionName; readonly texts: readonly string[]; readonly last: boolean };

/**
 * Texts per message for a search index built on the main thread: one message of news's 200k texts
 * at 100k was a block of about 25 MB malloc'd and freed on the main thread, resident at ready in
 * its heap (RSS at ready +25-35 MB, Node 20); a slice's is about 250 KB (scratch.ts says why).
 */
export const TEXT_SLICE = 4096;

/** The buffers of `views` to move in a message: a Buffer pool's (8 KiB, shared) or an empty one is copied. */
export function transferable(views: readonly ArrayBufferView[]): ArrayBuffer[] {
  const buffers = new Set(views.map((v) => v.buffer));
  return [...buffers].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer && (b.byteLength > 8192 || (b as { resizable?: boolean }).resizable === true));
}

/** The typed arrays of a search index. */
export function searchViews(s: SearchIndex): ArrayBufferView[] {
  return [s.unigrams, s.bigrams, s.trigrams].flatMap((g) => [g.keys, g.offsets, g.lows, g.blocks, g.at, g.bitsAt, g.bits, g.bitCounts]).concat([s.groups.starts, s.groups.ids]);
}

/** What the thread ended with: its indexes, or its error (`data`: invalid data, a DataError there). */
export type ThreadResult = { readonly built: Partial<Record<CollectionName, CollectionIndex>> } | { readonly error: string; readonly data: boolean };

/**
 * The thread: from a bundle (a checkout's .dev-bundle/ or the package's dist/), build-thread.js
 * beside it; from the sources, through tsx as src/threads/pool.ts starts its threads. Null where
 * there is no such file (the single executable): the load stays on one thread.
 */
function spawn(setup: BuildSetup): Worker | null {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) {
    const bundled = new URL('./build-thread.js', here);
    return existsSync(fileURLToPath(bundled)) ? new Worker(bundled, { workerData: setup }) : null;
  }
  const entry = new URL('./build-thread.ts', here).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => m.register()).then(() => import(${JSON.stringify(entry)}))`, { eval: true, workerData: setup });
}

export class BuildThread {
  readonly result: Promise<ThreadResult>;
  /** The thread's collections whose search index this thread built (search), in that order. */
  readonly searched: CollectionName[] = [];
  /** The texts of a search index to build, until their last slice. */
  private readonly texts = new Map<CollectionName, string[]>();
  private readonly offered = new Set<CollectionName>();
  /** The slugs of collections sent as their kept records (offerKept), in record order. */
  private readonly kept = new Map<CollectionName, readonly string[]>();

  private constructor(
    private readonly worker: Worker,
    readonly names: readonly CollectionName[],
    private readonly idle: Int32Array,
  ) {
    this.result = new Promise<ThreadResult>((resolve) => {
      worker.on('message', (m: FromBuildThread) => {
        if ('search' in m) return this.search(m.search, m.texts, m.last);
        if ('error' in m) return resolve(m);
        const built: Partial<Record<CollectionName, CollectionIndex>> = {};
        try {
          for (const b of m.built) built[b.name] = unpackIndex(RESOURCES[b.name], b.ref, b.sections, b.views);
        } catch (err) {
          return resolve({ error: (err as Error).message, data: false });
        }
        resolve({ built });
      });
      worker.once('error', (err) => resolve({ error: err.stack ?? err.message, data: false }));
      worker.once('exit', (code) => resolve({ error: `the build thread exited (${code})`, data: false }));
    }).finally(() => void worker.terminate());
  }

  static start(dir: string, names: readonly CollectionName[]): BuildThread | null {
    const idle = new Int32Array(new SharedArrayBuffer(4));
    const worker = spawn({ dir, names, idle });
    return worker && new BuildThread(worker, names, idle);
  }

  /** This thread has built its own collections: the thread may send it a search index to build (below). */
  mainIdle(): void {
    Atomics.store(this.idle, 0, 1);
  }

  /** The search index of the thread's collection `name` from its texts (`slice`, one of them), built here and sent back. */
  private search(name: CollectionName, slice: readonly string[], last: boolean): void {
    const texts = this.texts.get(name) ?? [];
    for (const t of slice) texts.push(t);
    this.texts.set(name, texts);
    if (!last) return;
    this.texts.delete(name);
    let search: SearchIndex;
    try {
      search = buildSearchIndex(texts);
    } catch (err) {
      this.worker.postMessage({ searched: name, error: (err as Error).stack ?? String(err) } satisfies ToBuildThread);
      return;
    }
    this.searched.push(name);
    this.worker.postMessage({ searched: name, search } satisfies ToBuildThread, transferable(searchViews(search)));
  }

  /** The collections the thread's collections read, other than their own. */
  get needs(): Set<CollectionName> {
    return new Set(this.names.flatMap((n) => DEPENDS[n]).filter((d) => !this.names.includes(d)));
  }

  /** `ix`, when the thread reads it (once). */
  offer(name: CollectionName, ix: CollectionIndex): void {
    if (this.offered.has(name) || !this.needs.has(name)) return;
    this.offered.add(name);
    const parts = knownParts(ix);
    this.worker.postMessage({ known: name, parts } satisfies ToBuildThread, knownBuffers(parts));
  }

  /**
   * `name` as it is read, before it can be indexed (load.ts OnKept), when the thread reads it: its
   * kept records (a structured clone) in slices as they are read, so the thread starts on what reads
   * it as soon as the file is read and without waiting for its index (outfits need only celebrities'
   * slugs and kept fields, not their filmography). A sink whose `finish` is never called (invalid
   * data, or files edited: a pass done again asks again) leaves the thread waiting for its last slice.
   */
  offerKept(name: CollectionName): { add(record: SourceRecord): void; finish(): void } | null {
    if (this.offered.has(name) || !this.needs.has(name)) return null;
    const slugs: string[] = [];
    let slice: SourceRecord[] = [];
    let first = true;
    // In slices: one message of 100k celebrities was a 17 MB block malloc'd and freed, which
    // raised glibc's mmap threshold for the rest of the process (scratch.ts); a slice's is ~200 KB.
    const post = (last: boolean) => {
      this.worker.postMessage({ kept: name, records: slice, first, last } satisfies ToBuildThread);
      slice = [];
      first = false;
    };
    return {
      add: (record) => {
        slugs.push(record.slug);
        if (slice.push(record) === KEPT_SLICE) post(false);
      },
      finish: () => {
        this.offered.add(name);
        this.kept.set(name, slugs);
        post(true);
      },
    };
  }

  /** Whether the collections sent as kept records were indexed with the same records (not edited between two reads). */
  keptMatch(indexed: Partial<Record<CollectionName, CollectionIndex>>): boolean {
    for (const [name, slugs] of this.kept) {
      const ix = indexed[name];
      if (ix === undefined || !keptSlugsMatch(ix, slugs)) return false;
    }
    return true;
  }

  /** The thread's work is not wanted (the main thread's load failed): it ends. */
  stop(): void {
    void this.worker.terminate();
  }
}
