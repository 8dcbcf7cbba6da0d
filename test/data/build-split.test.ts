// A load over two threads (src/data/build-split.ts: outfits and news built on a worker thread) builds
// every collection byte for byte as a load on one thread does, after an edit too, and invalid data in
// any file gives the very error a load on one thread gives.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { packIndex } from '../../src/data/boot-cache-write.ts';
import { BuildThread, KEPT_SLICE } from '../../src/data/build-split.ts';
import { slugOf } from '../../src/data/indexes.ts';
import { collecting, DataError, loadCollections } from '../../src/data/load.ts';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { COLLECTIONS, type SourceRecord } from '../../src/resources/types.ts';

let root: string;
let n = 0;
before(async () => (root = await mkdtemp(join(tmpdir(), 'build-split-'))));
after(() => rm(root, { recursive: true, force: true }));

async function dataset(): Promise<string> {
  const data = join(root, `data-${++n}`);
  await writeDataset(data, { scale: 60 });
  await sleep(150); // older than the boot cache's racy window
  return data;
}

/** Every collection of `b` has the layout and the bytes of every array of `a`'s. */
function assertSameIndexes(a: Snapshot, b: Snapshot, names: readonly string[] = COLLECTIONS): void {
  for (const name of names) {
    const x = packIndex(a.collections[name as keyof Snapshot['collections']]);
    const y = packIndex(b.collections[name as keyof Snapshot['collections']]);
    assert.deepEqual(y.ref, x.ref, `${name}: layout`);
    assert.deepEqual(y.sections, x.sections, `${name}: sections`);
    x.views.forEach((v, i) => assert.ok(Buffer.from(v.buffer, v.byteOffset, v.byteLength).equals(Buffer.from(y.views[i]!.buffer, y.views[i]!.byteOffset, y.views[i]!.byteLength)), `${name}: section ${i}`));
  }
}

async function errorOf(load: Promise<unknown>): Promise<string> {
  try {
    await load;
  } catch (err) {
    assert.ok(err instanceof DataError, String(err));
    return err.message;
  }
  assert.fail('loaded invalid data');
}

describe('a build over two threads', () => {
  it('every collection (celebrities sent to the thread as read), and after an edit of reviews.json and outfits.json with celebrities and movies kept (celebrities sent from their index) -> byte for byte the arrays of a build on one thread', async () => {
    const data = await dataset();
    const one = await loadSnapshot(data, { buildThreads: 'never' });
    const lines: [string, Record<string, unknown> | undefined][] = [];
    const log = { debug() {}, info: (m: string, f?: Record<string, unknown>) => void lines.push([m, f]), warn: (m: string, f?: Record<string, unknown>) => void lines.push([m, f]), error() {} };
    const two = await loadSnapshot(data, { buildThreads: 'always', log });
    assert.deepEqual(lines.find(([m]) => m === 'data read and indexed')?.[1]?.thread, ['outfits', 'news'], JSON.stringify(lines));
    assertSameIndexes(one, two);
    // reviews and outfits rebuilt (the outfits on the thread), celebrities and movies kept: celebrities sent to the thread from the live snapshot.
    const now = new Date();
    await utimes(join(data, 'reviews.json'), now, now);
    await utimes(join(data, 'outfits.json'), now, now);
    lines.length = 0;
    const reloaded = await loadSnapshot(data, { previous: two, buildThreads: 'always', log, patch: false });
    assert.deepEqual(lines.find(([m]) => m === 'data read and indexed')?.[1]?.thread, ['outfits'], JSON.stringify(lines));
    assert.equal(reloaded.collections.celebrities, two.collections.celebrities);
    assert.notEqual(reloaded.collections.reviews, two.collections.reviews);
    assert.equal(reloaded.collections.news, two.collections.news);
    assert.notEqual(reloaded.collections.outfits, two.collections.outfits);
    assertSameIndexes(one, reloaded);
  });

  for (const [file, edit] of [
    ['news.json', (r: Record<string, unknown>[]) => ((r[3]!.celebrity = 'nobody-at-all'), (r[5]!.title = 7))],
    ['reviews.json', (r: Record<string, unknown>[]) => (r[2]!.rating = 'ten')],
    ['outfits.json', (r: Record<string, unknown>[]) => ((r[4]!.celebrity = 'nobody-at-all'), (r[6]!.slug = 'Not A Slug'))],
    ['celebrities.json', (r: Record<string, unknown>[]) => (r[1]!.slug = r[0]!.slug)],
  ] as const) {
    it(`invalid ${file} -> the same DataError (file, record, field) as on one thread`, async () => {
      const data = await dataset();
      const path = join(data, file);
      const records = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>[];
      edit(records);
      await writeFile(path, JSON.stringify(records, null, 2));
      const one = await errorOf(loadSnapshot(data, { buildThreads: 'never' }));
      assert.match(one, new RegExp(file.replace('.', '\\.')));
      assert.equal(await errorOf(loadSnapshot(data, { buildThreads: 'always' })), one);
    });
  }

  it('celebrities sent to the thread as read, then indexed with other records (an edit between their two reads) -> keptMatch says so (the load is then built on one thread)', async () => {
    const data = await dataset();
    const one = await loadSnapshot(data, { buildThreads: 'never' });
    const celebrities = one.collections.celebrities;
    const slugs = Array.from({ length: celebrities.size }, (_, i) => slugOf(celebrities, i));
    const sent = (list: string[]) => {
      const thread = BuildThread.start(data, ['outfits'])!;
      const kept = thread.offerKept('celebrities')!;
      for (const slug of list) kept.add({ _id: slug, slug } as SourceRecord);
      kept.finish();
      const match = thread.keptMatch({ celebrities });
      thread.stop();
      return match;
    };
    assert.equal(sent(slugs), true);
    assert.equal(sent([slugs[1]!, slugs[0]!, ...slugs.slice(2)]), false, 'two records swapped');
    assert.equal(sent(slugs.slice(1)), false, 'one record fewer');
  });

  it('celebrities sent as read, a pass cut short and done again (files edited while read) -> the thread links outfits to the second pass\'s records alone: byte for byte a build on one thread', async () => {
    const data = await dataset();
    const one = await loadSnapshot(data, { buildThreads: 'never' });
    // The kept records as a load sends them.
    const records: SourceRecord[] = [];
    await loadCollections(data, collecting(() => 0), { only: new Set(['celebrities'] as const), known: {}, onKept: () => ({ add: (r) => void records.push(r), finish() {} }) });
    const thread = BuildThread.start(data, ['outfits'])!;
    const cut = thread.offerKept('celebrities')!;
    // A slice of them in reverse, over and over: sent, never finished.
    for (let k = 0; k < KEPT_SLICE; k++) cut.add(records[records.length - 1 - (k % records.length)]!);
    const again = thread.offerKept('celebrities')!;
    for (const r of records) again.add(r);
    again.finish();
    assert.equal(thread.offerKept('celebrities'), null, 'sent whole');
    const got = await thread.result;
    assert.ok('built' in got, JSON.stringify(got));
    assert.equal(thread.keptMatch({ celebrities: one.collections.celebrities }), true);
    assertSameIndexes(one, { ...one, collections: { ...one.collections, ...got.built } }, ['outfits']);
  });

  it('the main thread idle before the thread finishes (mainIdle) -> it builds the search index of each of the thread\'s collections from their texts, and they are byte for byte those of a build on one thread', async () => {
    const data = await dataset();
    const one = await loadSnapshot(data, { buildThreads: 'never' });
    const thread = BuildThread.start(data, ['outfits', 'news'])!;
    thread.mainIdle();
    thread.offer('celebrities', one.collections.celebrities);
    const got = await thread.result;
    assert.ok('built' in got, JSON.stringify(got));
    assert.deepEqual(thread.searched, ['outfits', 'news']);
    assertSameIndexes(one, { ...one, collections: { ...one.collections, ...got.built } }, ['outfits', 'news']);
    // Not idle: the thread builds them itself.
    const busy = BuildThread.start(data, ['news'])!;
    busy.offer('celebrities', one.collections.celebrities);
    const own = await busy.result;
    assert.ok('built' in own, JSON.stringify(own));
    assert.deepEqual(busy.searched, []);
    assertSameIndexes(one, { ...one, collections: { ...one.collections, ...own.built } }, ['news']);
  });

  it('a syntax error in reviews.json -> the same line and column as on one thread', async () => {
    const data = await dataset();
    const path = join(data, 'reviews.json');
    const text = await readFile(path, 'utf8');
    const at = text.indexOf('"rating"', text.length / 2);
    await writeFile(path, `${text.slice(0, at)}"rating" 5,${text.slice(at + '"rating":'.length + 2)}`);
    const one = await errorOf(loadSnapshot(data, { buildThreads: 'never' }));
    assert.match(one, /reviews\.json.*line \d+, column \d+/s);
    assert.equal(await errorOf(loadSnapshot(data, { buildThreads: 'always' })), one);
  });
});
