// Filter postings (src/data/indexes.ts): a posting of more than SMALL_POSTING ids is kept in every
// sort order, a shorter one is put in order by the sort's ranks when asked; either way a posting in
// the order of a sort is the sort order's ids that the posting holds, fresh and from the boot cache.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { postingIds, postingInOrder, postingKeys, SMALL_POSTING, sortOrder, type CollectionIndex } from '../../src/data/indexes.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

/** Every posting of every filter, in every sort: checked against a walk of the sort order. */
function checkPostings(ix: CollectionIndex, seen: { small: number; large: number }): void {
  for (const table of ix.postings) {
    const kept = new Set(table.sortedKeys);
    postingKeys(ix, table.param).forEach((key, k) => {
      const ids = postingIds(ix, table.param, key);
      assert.equal(kept.has(k), ids.length > SMALL_POSTING, `${ix.def.name} ${table.param}=${key}: kept in order iff large`);
      if (ids.length > SMALL_POSTING) seen.large++;
      else seen.small++;
      const members = new Set(ids);
      for (const sort of ix.def.sorts) {
        const want = sortOrder(ix, sort.name).filter((id) => members.has(id));
        assert.deepEqual([...postingInOrder(ix, ids, sort.name)!], [...want], `${ix.def.name} ${table.param}=${key} sort=${sort.name}`);
      }
    });
  }
}

test('a posting in sort order is the sort order filtered, kept or put in order when asked, fresh and from the boot cache', async () => {
  const root = await mkdtemp(join(tmpdir(), 'postings-'));
  try {
    const data = join(root, 'data');
    await writeDataset(data, { scale: 300 });
    await sleep(150); // past the boot cache's racy window
    const state = join(root, 'state');
    for (const from of ['data files', 'boot cache']) {
      const lines: string[] = [];
      const log = { info: (m: string) => lines.push(m), warn: () => {}, error: () => {}, debug: () => {}, enabled: () => true } as never;
      const snapshot = await loadSnapshot(data, { cacheDir: state, log });
      assert.equal(lines.includes('data loaded from the boot cache'), from === 'boot cache', `${from}: ${lines.join('; ')}`);
      const seen = { small: 0, large: 0 };
      for (const def of RESOURCE_LIST) checkPostings(snapshot.collections[def.name], seen);
      // Both kinds are there to check (a celebrity's outfits are few, a category's many).
      assert.ok(seen.small > 100 && seen.large > 10, `${from}: ${JSON.stringify(seen)}`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
