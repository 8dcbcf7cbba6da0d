// src/data/string-table.ts: strings as typed arrays; lookups and `includes` compare UTF-16 units as
// Map and String.prototype.includes do.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consistent, count, includes, includesAt, lookup, lookupSlug, slugAt, slugSlots, slugTable, stringAt, stringTable, stringTableOfUnits } from '../../src/data/string-table.ts';
import { Scratch } from '../../src/data/scratch.ts';
import { unitTextsOf } from '../../src/data/unit-texts.ts';

const ASCII = ['ada-lovelace', 'b', '', 'grace-hopper', 'x-1', 'x-2'];
const WIDE = ['zoë martín', 'björk', '東京', 'a\u{1F600}b', 'plain'];

for (const [name, list] of [['latin1 -> one byte a unit', ASCII], ['wider units -> two bytes a unit', WIDE]] as const) {
  test(`${name}: every string is found at its number, decoded back, and absent ones are -1`, () => {
    const t = stringTable(list);
    assert.equal(t.units instanceof Uint8Array, list === ASCII);
    assert.equal(count(t), list.length);
    list.forEach((s, k) => {
      assert.equal(lookup(t, s), k, s);
      assert.equal(stringAt(t, k), s);
    });
    for (const absent of ['ada', 'ada-lovelacex', 'Ada-lovelace', 'zoe martin', '東', ' ']) assert.equal(lookup(t, absent), -1, absent);
    assert.ok(consistent(t));
  });
}

test('includes -> the same as String.prototype.includes, over every substring and a few misses', () => {
  const t = stringTable([...ASCII, ...WIDE], false);
  assert.equal(t.slots.length, 0, 'no hash table asked for');
  assert.equal(lookup(t, 'b'), -1, 'without a hash table nothing is found');
  [...ASCII, ...WIDE].forEach((s, k) => {
    const needles = new Set(['', 'zz', 'é', '\u{1F600}', s + 'x']);
    for (let i = 0; i < s.length; i++) for (let j = i + 1; j <= s.length; j++) needles.add(s.slice(i, j));
    for (const n of needles) assert.equal(includes(t, k, n), s.includes(n), `${JSON.stringify(s)} includes ${JSON.stringify(n)}`);
  });
});

test('includesAt -> whether the string holds the needle at exactly that unit (false before its start or past its end)', () => {
  const list = [...ASCII, ...WIDE];
  const t = stringTable(list, false);
  list.forEach((s, k) => {
    const needles = new Set(['', 'zz', 'é', s + 'x']);
    for (let i = 0; i < s.length; i++) for (let j = i + 1; j <= s.length; j++) needles.add(s.slice(i, j));
    for (const n of needles) {
      for (let at = -2; at <= s.length + 1; at++) {
        const want = at >= 0 && at + n.length <= s.length && s.startsWith(n, at);
        assert.equal(includesAt(t, k, n, at), want, `${JSON.stringify(s)} at ${at} holds ${JSON.stringify(n)}`);
      }
    }
  });
});

test('many strings -> the hash table stays at most half full and finds each', () => {
  const list = Array.from({ length: 5000 }, (_, i) => `slug-${i * 7919}`);
  const t = stringTable(list);
  assert.ok(t.slots.length >= list.length * 2);
  for (let k = 0; k < list.length; k += 97) assert.equal(lookup(t, list[k]!), k);
});

test('consistent -> false for a table whose offsets or slots do not match its strings', () => {
  const t = stringTable(ASCII);
  assert.equal(consistent({ ...t, starts: t.starts.slice(0, -1) }), false, 'offsets short of the units');
  const slots = t.slots.slice();
  slots[slots.indexOf(-1)] = 0;
  assert.equal(consistent({ ...t, slots }), false, 'a string in two slots');
  assert.equal(consistent({ ...t, slots: t.slots.subarray(0, 6) }), false, 'not a power of two');
});

/** A list arena of `items` back to back, as Fragments hold it. */
function arena(items: readonly string[]): { bytes: Buffer; starts: Float64Array } {
  const bytes = Buffer.from(items.join(''), 'utf8');
  const starts = new Float64Array(items.length + 1);
  let at = 0;
  items.forEach((item, k) => {
    starts[k] = at;
    at += Buffer.byteLength(item);
  });
  starts[items.length] = at;
  return { bytes, starts };
}

test('slugs read from the list arena: each found at its record, decoded back; a prefix, an extension or another field is -1', () => {
  const slugs = Array.from({ length: 300 }, (_, i) => `s${i}-x`);
  const items = slugs.map((slug, i) =>
    i % 3 === 0
      ? JSON.stringify({ _id: `${i}`, title: `"slug":"${slug}" in a title`, slug, n: 1 })
      : i % 3 === 1
        ? JSON.stringify({ _id: `${i}`, meta: { slug: `other-${i}` }, slug })
        : JSON.stringify({ slug, name: 'Zoë' }),
  );
  const { bytes, starts } = arena(items);
  const t = slugTable(bytes, starts, slugs);
  slugs.forEach((slug, k) => {
    assert.equal(lookupSlug(t, bytes, starts, slug), k, slug);
    assert.equal(slugAt(t, bytes, starts, k), slug);
  });
  for (let i = 0; i < 300; i++) {
    for (const absent of [`s${i}`, `s${i}-`, `s${i}-x-y`, `s${i}-xx`, `other-${i}`, `${i}`]) assert.equal(lookupSlug(t, bytes, starts, absent), -1, absent);
  }
  assert.equal(lookupSlug(t, bytes, starts, ''), -1);
});

test('slug table: slots 4/3 of the records with hash bits beside each record number, `at` in 2 bytes; every size finds each slug and no other', () => {
  for (const n of [0, 1, 2, 3, 4, 7, 8, 255, 256, 257, 1000, 4096]) {
    const slugs = Array.from({ length: n }, (_, i) => `c${i.toString(36)}-${(i * 7919) % 1000}`);
    const { bytes, starts } = arena(slugs.map((slug) => JSON.stringify({ slug, n: 1 })));
    const t = slugTable(bytes, starts, slugs);
    assert.equal(t.slots.length, slugSlots(n), `${n}: slots`);
    assert.ok(n === 0 || t.slots.length * 3 >= n * 4, `${n}: at most 3/4 full`);
    assert.ok(t.at instanceof Uint16Array);
    const filled = t.slots.filter((v) => v !== -1);
    assert.equal(filled.length, n);
    assert.deepEqual([...filled.map((v) => v & ((1 << t.bits) - 1))].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    slugs.forEach((slug, k) => assert.equal(lookupSlug(t, bytes, starts, slug), k, slug));
    for (let i = 0; i < 2 * n + 5; i++) assert.equal(lookupSlug(t, bytes, starts, `c${i.toString(36)}-${(i * 7919) % 1000}x`), -1);
  }
});

test('a list item that does not show its slug -> an error naming the record, not a table that answers wrongly', () => {
  const { bytes, starts } = arena(['{"slug":"a"}', '{"name":"c","other":{"slug":"c-2"}}', '{"slug":"c"}']);
  assert.throws(() => slugTable(bytes, starts, ['a', 'c', 'c']), /list item 1 does not show its slug "c"/);
  assert.equal(lookupSlug(slugTable(bytes, starts.subarray(0, 2), ['a']), bytes, starts, 'a'), 0);
});

test('stringTableOfUnits -> stringTable of the same texts, those skipped empty (one byte a unit when only a skipped text is wide)', () => {
  const list = [...ASCII, ...WIDE];
  for (const skipped of [[], [8, 9], [0, 2, 9], list.map((_, k) => k)]) {
    const skip = new Uint32Array(1);
    for (const k of skipped) skip[0]! |= 1 << k;
    const want = stringTable(list.map((s, k) => (skipped.includes(k) ? '' : s)), false);
    const got = stringTableOfUnits(unitTextsOf(list, new Scratch()).units, unitTextsOf(list, new Scratch()).starts, skip);
    assert.equal(got.units.constructor, want.units.constructor, `${skipped}`);
    assert.deepEqual([...got.units], [...want.units]);
    assert.deepEqual(got.starts, want.starts);
    assert.deepEqual(got.slots, want.slots);
  }
  const plain = stringTableOfUnits(unitTextsOf(ASCII, new Scratch()).units, unitTextsOf(ASCII, new Scratch()).starts, null);
  assert.deepEqual(plain, stringTable(ASCII, false));
});
