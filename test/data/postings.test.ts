// Filter postings (src/data/indexes.ts): a posting of more than SMALL_POSTING ids is kept in every
// sort order, a shorter one is put in order by the sort's ranks when asked; either way a posting in
// the order of a sort is the sort order's ids that the posting holds, fresh and from the boot cache.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildIndex, postingIds, postingInOrder, postingKeys, slugOf, SMALL_POSTING, sortOrder, type CollectionIndex } from '../../src/data/indexes.ts';
import { loadLinked } from '../../src/data/load.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { RESOURCES } from '../../src/resources/index.ts';
import type { FilterDef, LinkedRecord, ResourceDefinition } from '../../src/resources/types.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

/** Every posting of every filter, in every sort: checked against a walk of the sort order. */
function checkPostings(ix: CollectionIndex, seen: { small: number; large: number }): void {
  for (const table of ix.postings) {
    const kept = new Set(table.sortedKeys);
    // A number per posting for its bitmap only where some posting has one (1/64 of the records).
    let dense = false;
    for (let k = 0; k + 1 < table.offsets.length; k++) if ((table.offsets[k + 1]! - table.offsets[k]!) * 64 >= ix.size) dense = true;
    assert.equal(table.bitsAt.length, dense ? table.offsets.length - 1 : 0, `${ix.def.name} ${table.param}: bitsAt`);
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

/**
 * The celebrity filter of outfits and news is numbered by the celebrity's id (no key kept, no
 * bitmap number per posting): every celebrity, those with no record too, and a slug of none.
 */
function checkByCelebrity(collections: Record<string, CollectionIndex>, linked: Record<string, LinkedRecord[]>, from: string): void {
  const celebrities = collections.celebrities!;
  let none = 0;
  for (const name of ['outfits', 'news']) {
    const ix = collections[name]!;
    const t = ix.postings.find((p) => p.param === 'celebrity')!;
    assert.equal(t.keys, null, `${from}: ${name} keeps no celebrity keys`);
    assert.equal(ix.embeds[t.embed]!.target, 'celebrities');
    assert.equal(t.offsets.length, celebrities.size + 1);
    for (let c = 0; c < celebrities.size; c++) {
      const slug = slugOf(celebrities, c);
      const want = linked[name]!.flatMap((r, id) => ((r.celebrity as { slug: string }).slug === slug ? [id] : []));
      if (want.length === 0) none++;
      assert.deepEqual([...postingIds(ix, 'celebrity', slug)], want, `${from}: ${name}?celebrity=${slug}`);
    }
    assert.equal(postingIds(ix, 'celebrity', 'no-such-celebrity').length, 0);
  }
  assert.ok(none > 0, `${from}: some celebrity has no outfit or no news`);
}

test('a slug filter declared as an embed whose values are not the embedded slug -> the build says so', async () => {
  const data = generateRecords({ scale: 50, seed: 'postings' });
  const snapshot = await loadSnapshot(data);
  const linked = await loadLinked(data);
  const filters = RESOURCES.outfits.filters.map((f): FilterDef => (f.kind === 'slug' ? { ...f, get: () => 'someone-else' } : f));
  const def: ResourceDefinition = { ...RESOURCES.outfits, filters };
  assert.throws(() => buildIndex(def, linked.outfits, (n) => snapshot.collections[n]), /outfits record 0: filter celebrity is not the slug of the celebrities record it embeds/);
});

test('a posting in sort order is the sort order filtered, kept or put in order when asked, fresh and from the boot cache', async () => {
  const root = await mkdtemp(join(tmpdir(), 'postings-'));
  try {
    // Generated data, less the outfits and news of runs of celebrities (the first, some in the middle,
    // the last): postings numbered by celebrity id then have empty ones, at each end and within,
    // which share their offset with the next posting.
    const data = join(root, 'data');
    await mkdir(data);
    const records = generateRecords({ scale: 300, seed: 'postings' });
    const n = records.celebrities.length;
    const runs = [0, 1, 2, ...Array.from({ length: 9 }, (_, i) => (n >> 1) - 4 + i), n - 3, n - 2, n - 1];
    const gone = new Set(runs.map((i) => records.celebrities[i]!.slug));
    for (const name of ['outfits', 'news'] as const) records[name] = records[name].filter((r) => !gone.has(r.celebrity as string));
    for (const [name, list] of Object.entries(records)) await writeFile(join(data, `${name}.json`), JSON.stringify(list));
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
      checkByCelebrity(snapshot.collections, await loadLinked(data), from);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
