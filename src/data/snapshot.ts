// One immutable, fully indexed version of the data. A reload builds a new one beside the old and the
// server swaps it in one step; requests in flight finish on the snapshot they started with.
import { RESOURCE_LIST } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';
import { buildIndex, serialize, type CollectionIndex } from './indexes.ts';
import { linkAll, linkContext, readSources, type DataInput } from './load.ts';

const DAY_MS = 86_400_000;

export interface Snapshot {
  /** Identifies the data that is live, for logs and /metrics. */
  readonly version: string;
  readonly loadedAt: string;
  readonly collections: Readonly<Record<CollectionName, CollectionIndex>>;
  /** Re-links the collections that depend on the day (celebrity `age`) when `nowMs` is on another UTC day. */
  ensureDay(nowMs: number): void;
}

let loads = 0;

/** Reads, validates, links and indexes the data. Throws DataError listing every problem. */
export async function loadSnapshot(input: DataInput, nowMs: number): Promise<Snapshot> {
  const { sources, refs } = await readSources(input);
  const contextFor = linkContext(sources, refs);
  let today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const linked = linkAll(sources, contextFor(today));
  const collections = {} as Record<CollectionName, CollectionIndex>;
  for (const def of RESOURCE_LIST) collections[def.name] = buildIndex(def, linked[def.name]);
  const loadedAt = new Date().toISOString();
  loads += 1;
  return {
    version: `${loadedAt.replace(/[-:]/g, '').slice(0, 15)}-${loads}`,
    loadedAt,
    collections,
    ensureDay(now: number) {
      if (now >= today && now < today + DAY_MS) return;
      today = Math.floor(now / DAY_MS) * DAY_MS;
      const ctx = contextFor(today);
      for (const def of RESOURCE_LIST) {
        if (!def.dependsOnToday) continue;
        const index = collections[def.name];
        const records = sources[def.name].map((r) => def.link(r, ctx));
        const { list, detail } = serialize(def, records);
        // Three assignments, no await between them: a request sees the old day or the new one.
        index.records = records;
        index.list = list;
        index.detail = detail;
      }
    },
  };
}
