// One immutable, fully indexed version of the data. A reload builds a new one beside the old and the
// server swaps it in one step; requests in flight finish on the snapshot they started with.
import { RESOURCE_LIST } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import { buildIndex, type CollectionIndex } from './indexes.ts';
import { loadLinked, type DataInput } from './load.ts';

export interface Snapshot {
  /** Identifies the data that is live, for logs and /metrics. */
  readonly version: string;
  readonly loadedAt: string;
  readonly collections: Readonly<Record<CollectionName, CollectionIndex>>;
}

let loads = 0;

/** Reads, validates, links and indexes the data. Throws DataError listing every problem. */
export async function loadSnapshot(input: DataInput): Promise<Snapshot> {
  const linked = await loadLinked(input);
  const collections = {} as Record<CollectionName, CollectionIndex>;
  for (const def of RESOURCE_LIST) {
    collections[def.name] = buildIndex(def, linked[def.name]);
    // Only the indexes and JSON stay: let the records go before the next collection is built.
    linked[def.name] = [];
  }
  const loadedAt = new Date().toISOString();
  loads += 1;
  return { version: `${loadedAt.replace(/[-:]/g, '').slice(0, 15)}-${loads}`, loadedAt, collections };
}
