// The thread that builds some collections of a load beside the main thread (src/data/build-split.ts):
// it reads, validates, links and indexes its collections from the data directory as the main thread
// would, each once the collections it reads (DEPENDS) are sent to it, and hands their indexes back
// as the boot cache lays them out, every large buffer transferred (no copy). Any error is sent back
// as it is: the main thread then loads on one thread, which reports invalid data exactly as always.
import { parentPort, workerData } from 'node:worker_threads';
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import { DEPENDS } from './boot-cache-format.ts';
import { packIndex } from './boot-cache-write.ts';
import type { CollectionIndex } from './indexes.ts';
import { fromKnownParts } from './known.ts';
import { DataError } from './load.ts';
import { buildCollections } from './snapshot.ts';
import type { BuildSetup, FromBuildThread, ToBuildThread } from './build-split.ts';

const main = parentPort!;
const { dir, names } = workerData as BuildSetup;
const have: Partial<Record<CollectionName, CollectionIndex>> = {};
const waiting = new Map<CollectionName, () => void>();
main.on('message', (m: ToBuildThread) => {
  have[m.known] = fromKnownParts(RESOURCES[m.known], m.parts);
  waiting.get(m.known)?.();
});
const arrived = (name: CollectionName) => (have[name] ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(name, resolve)));

try {
  const packed: Extract<FromBuildThread, { built: unknown }>['built'] = [];
  for (const name of names) {
    const needs = DEPENDS[name].filter((d) => d !== name);
    await Promise.all(needs.map(arrived));
    const built = await buildCollections(dir, new Set([name]), Object.fromEntries(needs.map((d) => [d, have[d]!])));
    packed.push({ name, ...packIndex(built[name]!) });
  }
  // Buffers of the Buffer pool (8 KiB, shared by small Buffers) or empty ones are copied; the rest,
  // each collection's own, are moved (a resizable one must be: Node 20 cannot clone it). Nothing here
  // uses them once sent: the thread ends.
  const buffers = new Set(packed.flatMap((p) => p.views.map((v) => v.buffer)));
  const transfer = [...buffers].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer && (b.byteLength > 8192 || (b as { resizable?: boolean }).resizable === true));
  main.postMessage({ built: packed } satisfies FromBuildThread, transfer);
} catch (err) {
  main.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err), data: err instanceof DataError } satisfies FromBuildThread);
}
