// numberOrder gives the order the comparator sort of indexes.ts gave: keys ascending or descending,
// NaN last either way, ties (-0 and 0 alike) by _id rank (issue 19); textOrder the same for texts, null
// last, and idRanks, the _id ranks those ties go by.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { idRanks, numberOrder, numberOrders, prefixKey, textOrder } from '../../src/data/sort-order.ts';

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
      const idRank = shuffled(values.length, seed);
      for (const sign of [1, -1] as const) assert.deepEqual([...numberOrder(keys, sign, idRank)], [...reference(keys, sign, idRank)]);
    }),
    { numRuns: 500 },
  );
});

test('numberOrders (one sort of the keys, both directions: latest and oldest) -> the comparator orders ascending and descending', () => {
  fc.assert(
    fc.property(fc.array(key, { maxLength: 60 }), fc.integer(), (values, seed) => {
      const keys = Float64Array.from(values);
      const idRank = shuffled(values.length, seed);
      const [up, down] = numberOrders(keys, idRank);
      assert.deepEqual([...up!], [...reference(keys, 1, idRank)]);
      assert.deepEqual([...down!], [...reference(keys, -1, idRank)]);
    }),
    { numRuns: 500 },
  );
  assert.deepEqual(numberOrders(Float64Array.of(2, 1), Int32Array.of(0, 1), undefined, false, true)[0], null);
});

test('numberOrder: every key NaN, -0 beside 0, and none', () => {
  assert.deepEqual([...numberOrder(Float64Array.of(NaN, NaN, NaN), 1, Int32Array.of(2, 0, 1))], [1, 2, 0]);
  assert.deepEqual([...numberOrder(Float64Array.of(0, -0, 0, -1), 1, Int32Array.of(3, 2, 1, 0))], [3, 2, 1, 0]);
  assert.deepEqual([...numberOrder(Float64Array.of(0, -0, 0, -1), -1, Int32Array.of(3, 2, 1, 0))], [2, 1, 0, 3]);
  assert.deepEqual([...numberOrder(new Float64Array(0), -1, new Int32Array(0))], []);
});

/** The comparator sort textOrder stands in for (indexes.ts buildOrder's, for text keys). */
function textReference(keys: readonly (string | null)[], sign: 1 | -1, idRank: Int32Array): Int32Array {
  return Int32Array.from({ length: keys.length }, (_, i) => i).sort((a, b) => {
    const ka = keys[a]!, kb = keys[b]!;
    if (ka !== kb) {
      if (ka === null || kb === null) return ka === null ? 1 : -1;
      return ka < kb ? -sign : sign;
    }
    return idRank[a]! - idRank[b]!;
  });
}

/** A permutation of 0..n-1 (the _id ranks), shuffled by `seed`. */
function shuffled(n: number, seed: number): Int32Array {
  const p = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1, s = seed >>> 0; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

// Texts that share long starts, units at and past the prefix's limit (126: `~`, 127, accents, a
// surrogate), one text the start of another, and the empty text.
const unit = fc.constantFrom('a', 'b', ' ', '~', '\x7f', 'è', 'é', 'z', '\ud83d', '0', '\0');
const text = fc.oneof(fc.constantFrom('', 'inès bérard', 'inés castaño', 'inès delaunay', 'abcdefg', 'abcdefgh', 'abcdefg~', 'abcdef'), fc.array(unit, { maxLength: 18 }).map((u) => u.join('')), fc.string({ maxLength: 20 }));

test('textOrder -> the comparator order of texts: ascending and descending, null last, ties by _id rank', () => {
  fc.assert(
    fc.property(fc.array(fc.option(text, { freq: 6 }), { maxLength: 60 }), fc.integer(), (keys, seed) => {
      const idRank = shuffled(keys.length, seed);
      for (const sign of [1, -1] as const) assert.deepEqual([...textOrder(keys, sign, idRank)], [...textReference(keys, sign, idRank)]);
    }),
    { numRuns: 1000 },
  );
});

test('idRanks: each _id\'s place in the order of the _ids (prefixes past 126 do not decide it)', () => {
  fc.assert(
    fc.property(fc.uniqueArray(text, { maxLength: 60 }), (ids) => {
      const sorted = [...ids].sort((a, b) => (a < b ? -1 : 1));
      assert.deepEqual([...idRanks(ids)], ids.map((id) => sorted.indexOf(id)));
    }),
    { numRuns: 1000 },
  );
  // A unit past the limit first, then a lower one: the first place decides, not the rest.
  assert.deepEqual([...idRanks(['inés castaño', 'inès delaunay', 'inès bérard'])], [2, 1, 0]);
  assert.ok(prefixKey('inès bérard') <= prefixKey('inés castaño'));
  assert.deepEqual([...idRanks(['6aaaaf72667ebaf683000001', '5c2e975d457650e4e7000000', '6aaaaf72667ebaf683000000'])], [2, 0, 1]);
  assert.deepEqual([...idRanks([])], []);
});
