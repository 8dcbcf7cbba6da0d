// src/threads/share.ts: a snapshot crosses to another thread as one copy in shared memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'node:worker_threads';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import { RESOURCES } from '../../src/resources/index.ts';
import { revive, share, sharedBytes } from '../../src/threads/share.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { fixture } from '../helpers/fixture.ts';

/** Every typed array reachable from `v`, with its path. */
function views(v: unknown, path = 'snapshot', out: [string, ArrayBufferView][] = [], seen = new Set<object>()): [string, ArrayBufferView][] {
  if (typeof v !== 'object' || v === null || seen.has(v)) return out;
  seen.add(v);
  if (ArrayBuffer.isView(v)) out.push([path, v]);
  else if (v instanceof Map) for (const [k, x] of v) views(x, `${path}.get(${String(k)})`, out, seen);
  else if (!Object.values(RESOURCES).includes(v as never)) for (const [k, x] of Object.entries(v)) views(x, `${path}.${k}`, out, seen);
  return out;
}

test('a loaded snapshot -> every typed array and Buffer in shared memory, the same bytes, Buffers still Buffers', async () => {
  const snapshot = await loadSnapshot(fixture());
  const shared = revive<Snapshot>(share(snapshot));
  const before = views(snapshot);
  const after = views(shared);
  assert.ok(before.length > 20, `found ${before.length} views`);
  assert.deepEqual(after.map(([p]) => p), before.map(([p]) => p));
  for (const [i, [path, view]] of after.entries()) {
    assert.ok(view.buffer instanceof SharedArrayBuffer, `${path} is not in shared memory`);
    assert.equal(view.constructor, before[i]![1].constructor, path);
    assert.equal(Buffer.isBuffer(view), Buffer.isBuffer(before[i]![1]), path);
    assert.ok(Buffer.from(view.buffer, view.byteOffset, view.byteLength).equals(Buffer.from(before[i]![1].buffer, before[i]![1].byteOffset, before[i]![1].byteLength)), path);
  }
  assert.ok(isDeepStrictEqual(shared, snapshot), 'the same structure and values');
  assert.equal(shared.collections.movies.def, RESOURCES.movies, 'the definitions are this thread\'s own');
  assert.ok(sharedBytes(share(snapshot)) > 0);
});

test('sharing a shared snapshot again -> no new copy (views already in shared memory are kept)', async () => {
  const once = share(await loadSnapshot(fixture()));
  const twice = share(revive(once));
  const a = views(revive(once)).map(([, v]) => v.buffer);
  const b = views(revive(twice)).map(([, v]) => v.buffer);
  assert.deepEqual(b, a);
});

test('read from the boot cache with `shared` -> its sections are in shared memory already and share() copies none; without it, none is shared', async () => {
  const root = await mkdtemp(join(tmpdir(), 'share-on-read-'));
  try {
    const data = join(root, 'data');
    const state = join(root, 'state');
    await writeDataset(data, { scale: 40 });
    await sleep(150); // files written just before a load are not cached (boot-cache-write.ts)
    await loadSnapshot(data, { cacheDir: state }); // builds and writes the cache
    const lines: string[] = [];
    const log = { info: (msg: string) => lines.push(msg), debug() {}, warn() {}, error() {} };
    const plain = await loadSnapshot(data, { cacheDir: state, log });
    const read = await loadSnapshot(data, { cacheDir: state, log, shared: true });
    assert.deepEqual(lines, ['data loaded from the boot cache', 'data loaded from the boot cache']);
    // One thread keeps plain memory: a SharedArrayBuffer is zero-filled, the read's buffer is not.
    assert.deepEqual(views(plain).filter(([, v]) => v.buffer instanceof SharedArrayBuffer).map(([p]) => p), []);
    // The detail plan and a list item's embedded field's key (fragments.ts ListEmbed `head`) are made
    // from the definitions at each load (a few bytes), not read from the cache.
    const before = views(read).filter(([p, v]) => v.byteLength > 0 && !p.includes('.detail.plan.') && !p.endsWith('.list.embed.head'));
    assert.ok(before.length > 20, `found ${before.length} views`);
    assert.deepEqual(before.filter(([, v]) => !(v.buffer instanceof SharedArrayBuffer)).map(([p]) => p), [], 'read outside shared memory');
    const after = new Map(views(revive(share(read))));
    for (const [path, v] of before) assert.equal(after.get(path)!.buffer, v.buffer, `${path} was copied`);
    assert.ok(isDeepStrictEqual(revive<Snapshot>(share(read)).collections, plain.collections), 'the same structure and values as read into plain memory');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a class instance in the data -> TypeError naming its path (a layout change that cannot cross threads fails here)', () => {
  class Table {}
  assert.throws(() => share({ collections: { movies: { table: new Table() } } }), /cannot share snapshot\.collections\.movies\.table between threads: a Table instance/);
  assert.throws(() => share({ f: () => 1 }), /snapshot\.f between threads: a function/);
});

test('posted to a worker thread -> it reads the same bytes, and a write on one side is seen on the other (one copy)', async () => {
  const shared = share({ bytes: Buffer.from('one copy'), ids: Int32Array.from([1, 2, 3]) });
  const worker = new Worker(`const { parentPort, workerData } = require('node:worker_threads'); workerData.ids[0] = 42; parentPort.postMessage(Buffer.from(workerData.bytes['\\u0000buffer']).toString());`, { eval: true, workerData: shared });
  const text = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  await worker.terminate();
  assert.equal(text, 'one copy');
  assert.equal(revive<{ ids: Int32Array }>(shared).ids[0], 42);
});
