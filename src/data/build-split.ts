// A load over two cores (issue 19): collections nothing else reads at build time (SPLIT: reviews
// and outfits; no collection's DEPENDS names them) are built by a worker thread (build-thread.ts)
// while the main thread builds the others. The thread reads only its own files: the collections its
// collections read (DEPENDS: movies for reviews, celebrities for outfits) are sent to it as the main
// thread finishes them (their slugs, list items and detail-only text, a copy), and it hands its
// indexes back with their buffers transferred, not copied.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import { DEPENDS, type CollectionRef, type Section, type View } from './boot-cache-format.ts';
import { unpackIndex } from './boot-cache-read.ts';
import type { CollectionIndex } from './indexes.ts';
import { knownBuffers, knownParts, type KnownParts } from './known.ts';

/**
 * Built on the thread when a load builds them and something else too, in this order. Which ones:
 * what balances the two threads' CPU at 100k (the main thread builds celebrities and movies, which
 * the others wait for: about 11 s of CPU, then news 6 s; the thread reviews 5 s once movies are
 * built, then outfits 10 s once celebrities are). With news instead of outfits the main thread had
 * 22 s of CPU and the thread 14.
 */
export const SPLIT: readonly CollectionName[] = ['reviews', 'outfits'];

export interface BuildSetup {
  readonly dir: string;
  readonly names: readonly CollectionName[];
}
export type ToBuildThread = { readonly known: CollectionName; readonly parts: KnownParts };
export type FromBuildThread =
  | { readonly built: { readonly name: CollectionName; readonly ref: CollectionRef; readonly sections: readonly Section[]; readonly views: readonly View[] }[] }
  | { readonly error: string; readonly data: boolean };

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
  private readonly offered = new Set<CollectionName>();

  private constructor(
    private readonly worker: Worker,
    readonly names: readonly CollectionName[],
  ) {
    this.result = new Promise<ThreadResult>((resolve) => {
      worker.once('message', (m: FromBuildThread) => {
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
    const worker = spawn({ dir, names });
    return worker && new BuildThread(worker, names);
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

  /** The thread's work is not wanted (the main thread's load failed): it ends. */
  stop(): void {
    void this.worker.terminate();
  }
}
