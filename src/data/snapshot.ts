// One immutable, fully indexed version of the data. A reload builds a new one beside the old and the
// server swaps it in one step; requests in flight finish on the snapshot they started with.
import { RESOURCE_LIST } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import type { Logger } from '../log.ts';
import { readDataIdentity, type DataIdentity } from './boot-cache-format.ts';
import { readSnapshotCache } from './boot-cache-read.ts';
import { saveSnapshotCache } from './boot-cache-write.ts';
import { buildIndex, type CollectionIndex } from './indexes.ts';
import { loadLinked, type DataInput } from './load.ts';

export interface Snapshot {
  /** Identifies the data that is live, for logs and /metrics. */
  readonly version: string;
  readonly loadedAt: string;
  readonly collections: Readonly<Record<CollectionName, CollectionIndex>>;
}

export interface LoadOptions {
  /** State directory holding the boot cache (src/data/boot-cache-*.ts); only used for a data directory. */
  readonly cacheDir?: string;
  readonly log?: Logger;
}

let loads = 0;

function stamp(collections: Record<CollectionName, CollectionIndex>): Snapshot {
  const loadedAt = new Date().toISOString();
  loads += 1;
  return { version: `${loadedAt.replace(/[-:]/g, '').slice(0, 15)}-${loads}`, loadedAt, collections };
}

async function build(input: DataInput): Promise<Snapshot> {
  const linked = await loadLinked(input);
  const collections = {} as Record<CollectionName, CollectionIndex>;
  for (const def of RESOURCE_LIST) {
    collections[def.name] = buildIndex(def, linked[def.name]);
    // Only the indexes and JSON stay: let the records go before the next collection is built.
    linked[def.name] = [];
  }
  return stamp(collections);
}

/**
 * Reads, validates, links and indexes the data. Throws DataError listing every problem. With a
 * `cacheDir`, a data directory is first looked up in the boot cache, and a fresh load is saved to it.
 */
export async function loadSnapshot(input: DataInput, options: LoadOptions = {}): Promise<Snapshot> {
  const { cacheDir, log } = options;
  if (typeof input !== 'string' || cacheDir === undefined || cacheDir === 'memory') return build(input);
  const started = performance.now();
  const cached = await readSnapshotCache(cacheDir, input);
  if (cached.collections) {
    log?.info('data loaded from the boot cache', { ms: Math.round(performance.now() - started) });
    return stamp(cached.collections);
  }
  log?.info('boot cache not used; loading the data files', { reason: cached.miss });
  // Stat before reading: a change while loading then makes the saved cache a miss, never stale.
  const before: DataIdentity | null = await readDataIdentity(input).catch(() => null);
  const snapshot = await build(input); // throws on invalid data: nothing is saved
  if (before) {
    const saving = performance.now();
    try {
      const saved = await saveSnapshotCache(cacheDir, input, snapshot, before);
      const ms = Math.round(performance.now() - saving);
      log?.info(saved ? 'boot cache written' : 'boot cache not written: the data files changed during or just before loading', { ms });
    } catch (err) {
      log?.warn('boot cache not written', { error: (err as Error).message });
    }
  }
  return snapshot;
}
