// src/data/gc.ts: a full collection on demand (after a load from the data files, so the RSS at ready
// is the snapshot's and not the load's garbage).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import v8 from 'node:v8';
import { collectGarbage, releaseMemory } from '../../src/data/gc.ts';

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

const newSpace = () => (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0) / 2 ** 20;
/** Short-lived garbage in plenty, as a load makes: V8 grows its young generation to hold it. */
function growYoung(): void {
  let keep: object[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    keep.push({ i, s: `x${i}` });
    if (keep.length > 100_000) keep = [];
  }
}

test('collectGarbage -> the young generation a load grew goes back to its smallest where V8 has the last-resort flavor (Node 26), and Node 20 takes the call', () => {
  growYoung();
  const grown = newSpace();
  assert.equal(collectGarbage(), true);
  const after = newSpace();
  if (Number(process.versions.node.split('.')[0]) >= 26) assert.ok(after <= 2, `new space ${grown} -> ${after} MB`);
  else assert.ok(after <= grown, `new space ${grown} -> ${after} MB`);
});

test('releaseMemory -> an object only a WeakRef holds is collected', async () => {
  const ref = new WeakRef({ payload: new Array(1000).fill('x') });
  await tick();
  await releaseMemory();
  assert.equal(ref.deref(), undefined);
});

test('releaseMemory -> the young generation a load grew goes back to its smallest (Node 20: young collections at a quiet rate, gc.ts shrinkYoung), and a second call works as well', async () => {
  for (const round of [1, 2]) {
    growYoung();
    const grown = newSpace();
    assert.ok(grown > 4, `round ${round}: the young generation grew (${grown} MB)`);
    await releaseMemory();
    const after = newSpace();
    assert.ok(after <= 2, `round ${round}: new space ${grown} -> ${after} MB`);
  }
});
