// src/http/compressed-bodies.ts: the first pages compressed ahead, one set per snapshot.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { setImmediate as tick } from 'node:timers/promises';
import { collectGarbage } from '../../src/data/gc.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { CompressedBodies } from '../../src/http/compressed-bodies.ts';

const DATA = fileURLToPath(new URL('../../data/', import.meta.url));

test('retire() while the first pages are being compressed -> the snapshot and each of its collections go at the next collection, not when the warm ends', async () => {
  let bodies: CompressedBodies | null = new CompressedBodies(await loadSnapshot(DATA));
  const refs = [bodies.snapshot!, ...Object.values(bodies.snapshot!.collections)].map((o) => new WeakRef(o));
  let ended = false;
  const warm = bodies.warm(20261127).then(() => (ended = true));
  await tick(); // the warm waits on the thread pool now, its first page in hand
  bodies.retire();
  bodies = null;
  collectGarbage();
  const held = refs.filter((r) => r.deref() !== undefined).length;
  await warm;
  assert.equal(ended, true);
  assert.equal(held, 0, 'the old snapshot or a collection of it was still held by the warm');
});
