// src/data/watch.ts: what a reload leaves behind is given back at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { createReloader } from '../../src/data/watch.ts';
import type { Snapshot } from '../../src/data/snapshot.ts';

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, enabled: () => false } as never;

test('a reload that went live -> the snapshot it replaced is collected before "data reloaded"', async () => {
  let current = { version: 'old', payload: new Array(10_000).fill('x') } as unknown as Snapshot;
  const old = new WeakRef(current);
  await tick(); // a WeakRef keeps its target until the job that made it ends
  const service = { reload: async () => (current = { version: 'new' } as unknown as Snapshot), snapshot: () => current };
  let goneWhenLive: boolean | null = null;
  const reload = createReloader(service, quiet, () => (goneWhenLive = old.deref() === undefined));
  assert.equal(await reload('test'), true);
  assert.equal(goneWhenLive, true);
});
