// src/data/indexes.ts Chunked: the builder's per-record JS arrays pushed in chunks and joined once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Chunked } from '../../src/data/indexes.ts';

test('Chunked: every value pushed, in order, across chunks, as one array; empty after finish', () => {
  for (const n of [0, 1, 8191, 8192, 8193, 3 * 8192 + 7]) {
    const c = new Chunked<string | null>();
    const want: (string | null)[] = [];
    for (let i = 0; i < n; i++) {
      const v = i % 5 === 0 ? null : `v${i}`;
      c.push(v);
      want.push(v);
    }
    assert.equal(c.length, n);
    assert.deepEqual(c.finish(), want, `${n} values`);
    assert.equal(c.length, 0);
  }
});
