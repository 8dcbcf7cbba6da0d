// src/data/gc.ts: a full collection on demand (after a load from the data files, so the RSS at ready
// is the snapshot's and not the load's garbage).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { collectGarbage } from '../../src/data/gc.ts';

test('collectGarbage -> an object only a WeakRef holds is collected, and gc stays off the global object', async () => {
  const ref = new WeakRef({ payload: new Array(1000).fill('x') });
  await tick(); // a WeakRef keeps its target until the job that made it ends
  assert.equal(collectGarbage(), true);
  assert.equal(ref.deref(), undefined);
  assert.equal((globalThis as { gc?: unknown }).gc, undefined);
});

test('collectGarbage -> contexts made afterwards get no gc global', async () => {
  collectGarbage();
  const { runInNewContext } = await import('node:vm');
  assert.equal(runInNewContext('typeof gc'), 'undefined');
});
