// src/data/scratch.ts: a scratch buffer of 1 MiB up to 32 MiB is a view of a 32 MiB block (its free
// then never moves glibc's mmap threshold); smaller and larger ones are exactly their size.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SCRATCH_FROM, SCRATCH_VIEWS_FROM, Scratch, UNMOVING_BYTES, scratchBuffer, scratchInt32 } from '../../src/data/scratch.ts';

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

test('Scratch: zeroed arrays of the lengths asked for; from 1 MiB, views of shared 32 MiB blocks that never overlap', () => {
  const s = new Scratch();
  const small = s.int32(10);
  assert.equal(small.buffer.byteLength, 40, 'under 1 MiB: exactly its size');
  const a = s.float64(SCRATCH_FROM / 8);
  const b = s.int32((SCRATCH_FROM >> 2) + 1);
  const c = s.float64(3 << 20);
  assert.equal(a.buffer.byteLength, UNMOVING_BYTES);
  assert.equal(b.buffer, a.buffer, 'the same block');
  assert.equal(a.byteOffset, 0);
  assert.equal(b.byteOffset, a.byteLength);
  assert.equal(c.byteOffset % 8, 0);
  assert.ok(c.byteOffset >= b.byteOffset + b.byteLength);
  const d = s.int32(6 << 20);
  assert.notEqual(d.buffer, a.buffer, 'a block full: the next one');
  assert.equal(d.byteOffset, 0);
  const huge = s.float64((UNMOVING_BYTES >> 3) + 1);
  assert.equal(huge.buffer.byteLength, UNMOVING_BYTES + 8, 'larger than a block: exactly its size');
  for (const x of [small, a, b, c, d, huge]) {
    assert.equal(x.every((v) => v === 0), true);
    x.fill(1);
  }
  assert.equal(a.length, SCRATCH_FROM / 8);
  assert.equal(b.length, (SCRATCH_FROM >> 2) + 1);
  assert.equal(c.length, 3 << 20);
  assert.equal(d.length, 6 << 20);
  assert.equal(b[0], 1);
  assert.equal(a[a.length - 1], 1);
});

test('Scratch: from 64 KiB, under SCRATCH_FROM too, views of its block (the 800 KB working arrays of 200k records never come from the C heap)', () => {
  const s = new Scratch();
  assert.equal(SCRATCH_VIEWS_FROM, 64 << 10);
  const under = s.int32((64 << 10) / 4 - 1);
  assert.equal(under.buffer.byteLength, (64 << 10) - 4, 'under 64 KiB: exactly its size');
  const news = s.int32(200_000);
  const keys = s.float64(100_000);
  const from = s.float64((64 << 10) / 8);
  assert.equal(news.buffer.byteLength, UNMOVING_BYTES);
  assert.equal(keys.buffer, news.buffer, 'the same block');
  assert.equal(from.buffer, news.buffer);
  assert.equal(keys.byteOffset, news.byteOffset + news.byteLength);
  assert.equal(from.byteOffset, keys.byteOffset + keys.byteLength);
  for (const x of [news, keys, from]) {
    assert.equal(x.every((v) => v === 0), true);
    x.fill(3);
  }
  assert.equal(news[news.length - 1], 3);
  assert.equal(keys[0], 3);
});
