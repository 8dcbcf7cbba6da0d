// src/data/scratch.ts: a scratch buffer of 1 MiB up to 32 MiB is a view of a 32 MiB block (its free
// then never moves glibc's mmap threshold); smaller and larger ones are exactly their size.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SCRATCH_FROM, UNMOVING_BYTES, scratchBuffer, scratchInt32 } from '../../src/data/scratch.ts';

test('scratchBuffer: the length asked for, its block 32 MiB from 1 MiB up to 32 MiB', () => {
  for (const [bytes, block] of [
    [0, 0],
    [1000, 1000],
    [128 << 10, 128 << 10],
    [SCRATCH_FROM - 1, SCRATCH_FROM - 1],
    [SCRATCH_FROM, UNMOVING_BYTES],
    [8 << 20, UNMOVING_BYTES],
    [UNMOVING_BYTES - 1, UNMOVING_BYTES],
    [UNMOVING_BYTES, UNMOVING_BYTES],
    [UNMOVING_BYTES + 1, UNMOVING_BYTES + 1],
  ]) {
    const b = scratchBuffer(bytes!);
    assert.equal(b.length, bytes);
    assert.equal(b.byteOffset, 0);
    assert.equal(b.buffer.byteLength, block, `${bytes} bytes`);
    b.fill(7);
    assert.equal(b.every((x) => x === 7), true);
  }
});

test('scratchInt32: `length` zeros, its block 32 MiB from 1 MiB up to 32 MiB', () => {
  for (const [length, block] of [
    [10, 40],
    [(SCRATCH_FROM >> 2) - 1, SCRATCH_FROM - 4],
    [2 << 20, UNMOVING_BYTES],
    [(UNMOVING_BYTES >> 2) + 1, UNMOVING_BYTES + 4],
  ]) {
    const a = scratchInt32(length!);
    assert.equal(a.length, length);
    assert.equal(a.buffer.byteLength, block);
    assert.equal(a.every((x) => x === 0), true);
    a[length! - 1] = -1;
    assert.equal(a[length! - 1], -1);
  }
});
