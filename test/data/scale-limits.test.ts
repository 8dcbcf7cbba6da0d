// Limits that scale 1M (about 10M records, 8.5 GB of JSON) reaches, each checked on a small fixture
// here; the 1M load itself runs in `npm run bench:boot -- --scales 1M`, never in npm test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { align8 } from '../../src/data/boot-cache-format.ts';

describe('scale limits', () => {
  it('align8 rounds sizes and offsets past 2 GiB and 4 GiB (the outfits list arena is 2.4 GB at 1M)', () => {
    for (const [n, want] of [
      [0, 0], [1, 8], [8, 8], [13, 16],
      [2 ** 31 - 1, 2 ** 31], [2 ** 31 + 1, 2 ** 31 + 8], [2 ** 32 + 3, 2 ** 32 + 8], [5 * 2 ** 30 + 8, 5 * 2 ** 30 + 8],
    ] as const) assert.equal(align8(n), want, `align8(${n})`);
  });
});
