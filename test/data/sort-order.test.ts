// numberOrder gives the order the comparator sort of indexes.ts gave: keys ascending or descending,
// NaN last either way, ties (-0 and 0 alike) by _id rank (issue 19).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { numberOrder } from '../../src/data/sort-order.ts';

/** The comparator sort numberOrder stands in for (indexes.ts buildOrder before). */
function reference(keys: Float64Array, sign: 1 | -1, idRank: Int32Array): Int32Array {
  const none = (k: number) => k !== k;
  return Int32Array.from({ length: keys.length }, (_, i) => i).sort((a, b) => {
    const ka = keys[a]!, kb = keys[b]!;
    if (ka !== kb) {
      const na = none(ka), nb = none(kb);
      if (na || nb) return na && nb ? idRank[a]! - idRank[b]! : na ? 1 : -1;
      return ka < kb ? -sign : sign;
    }
    return idRank[a]! - idRank[b]!;
  });
}

const key = fc.oneof(fc.constantFrom(NaN, 0, -0, 1, -1, Infinity, -Infinity, 1.5), fc.integer({ min: -5, max: 5 }), fc.double());

test('numberOrder -> the comparator order: ascending and descending, NaN last, ties by _id rank', () => {
  fc.assert(
    fc.property(fc.array(key, { maxLength: 60 }), fc.integer(), (values, seed) => {
      const keys = Float64Array.from(values);
      // A permutation for the _id ranks, shuffled by the seed.
      const idRank = Int32Array.from(values.keys());
      for (let i = idRank.length - 1, s = seed >>> 0; i > 0; i--) {
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        const j = s % (i + 1);
        [idRank[i], idRank[j]] = [idRank[j]!, idRank[i]!];
      }
      for (const sign of [1, -1] as const) assert.deepEqual([...numberOrder(keys, sign, idRank)], [...reference(keys, sign, idRank)]);
    }),
    { numRuns: 500 },
  );
});

test('numberOrder: every key NaN, -0 beside 0, and none', () => {
  assert.deepEqual([...numberOrder(Float64Array.of(NaN, NaN, NaN), 1, Int32Array.of(2, 0, 1))], [1, 2, 0]);
  assert.deepEqual([...numberOrder(Float64Array.of(0, -0, 0, -1), 1, Int32Array.of(3, 2, 1, 0))], [3, 2, 1, 0]);
  assert.deepEqual([...numberOrder(Float64Array.of(0, -0, 0, -1), -1, Int32Array.of(3, 2, 1, 0))], [2, 1, 0, 3]);
  assert.deepEqual([...numberOrder(new Float64Array(0), -1, new Int32Array(0))], []);
});
