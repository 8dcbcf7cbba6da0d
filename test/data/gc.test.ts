// src/data/gc.ts: a full collection on demand (after a load from the data files, so the RSS at ready
// is the snapshot's and not the load's garbage).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import v8 from 'node:v8';
import { createHook } from 'node:async_hooks';
import { collectGarbage, heldTick, holdTickShape, releaseMemory } from '../../src/data/gc.ts';

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

/** The object process.nextTick makes for one tick, taken through an async hook. */
function tickObject(): object {
  let made: object | null = null;
  const hook = createHook({ init: (_id, type, _trigger, resource) => void (type === 'TickObject' && (made ??= resource)) });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
  assert.ok(made !== null);
  return made;
}

test('holdTickShape -> one tick object held for good, and tick objects made after a collection that reduces memory keep its map', async () => {
  holdTickShape();
  const held = heldTick();
  assert.ok(held !== null);
  assert.ok('callback' in held && Object.getOwnPropertySymbols(held).length >= 2); // its callback, async id and trigger id
  holdTickShape();
  assert.equal(heldTick(), held); // taken once
  for (let i = 0; i < 1000; i++) process.nextTick(() => {});
  await tick();
  await releaseMemory(); // the inspector's collection on Node 26; without a held tick object, its maps went with it
  v8.setFlagsFromString('--allow-natives-syntax');
  const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
  v8.setFlagsFromString('--no-allow-natives-syntax');
  assert.equal(sameMap(held, tickObject()), true);
});
