// src/data/collect.ts expectedRecords: the records a file holds, from its first chunk's, for sizing
// the per-record key tables once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectedRecords } from '../../src/data/collect.ts';

test('expectedRecords: the file size over the first records\' bytes each, a little over, never under those seen', () => {
  // 1,000 records of 1,000 bytes (with their separator) in a file of 100 MB: 100k, and 5% over.
  const starts = Array.from({ length: 1000 }, (_, i) => 1 + i * 1000);
  const ends = starts.map((s) => s + 999);
  const n = expectedRecords(100_000_000, starts, ends);
  assert.ok(n >= 100_000 && n <= 106_000, `${n}`);
  // The whole file in the chunk: at least the records seen.
  assert.equal(expectedRecords(1_000_000, starts, ends) >= 1000, true);
  assert.equal(expectedRecords(10, starts, ends), 1000);
  assert.equal(expectedRecords(100, [], []), 0);
  // Tiny first records in a large file: no more than a record per 128 bytes.
  assert.ok(expectedRecords(128_000_000, [1, 4], [3, 6]) <= 1_050_000);
});
