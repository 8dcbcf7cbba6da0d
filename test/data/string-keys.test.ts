// src/data/string-keys.ts: distinct strings numbered 0, 1, 2... in the order added, found again by
// content (not by identity), across the table's growth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StringKeys, UnitKeys, zeros } from '../../src/data/string-keys.ts';

test('zeros: a packed array of exactly n zeros, across the block it copies from', () => {
  for (const n of [0, 1, 16, 16_383, 16_384, 16_385, 3 * 16_384 + 5, 1 << 20]) {
    const z = zeros(n);
    assert.equal(z.length, n, `length of zeros(${n})`);
    assert.equal(z.every((x) => x === 0), true, `zeros(${n}) all zero`);
    z[0] = 7; // a copy: the block it came from is not changed
  }
  assert.equal(zeros(20_000).every((x) => x === 0), true);
});

for (const Keys of [StringKeys, UnitKeys]) {
test(`${Keys.name}: add numbers new keys in order and gives a key seen before its id`, () => {
  const k = new Keys();
  assert.equal(k.size, 0);
  assert.equal(k.find('a'), -1);
  for (const [key, id] of [
    ['a', 0],
    ['b', 1],
    ['a', 0],
    ['', 2],
    ['', 2],
    ['__proto__', 3],
    ['Måns Sjöberg', 4],
    ['b', 1],
  ] as const) {
    assert.equal(k.add(key), id, `add ${JSON.stringify(key)}`);
  }
  assert.equal(k.size, 5);
  if (k instanceof StringKeys) assert.deepEqual(k.keys(), ['a', 'b', '', '__proto__', 'Måns Sjöberg']);
  assert.equal(k.has('Måns Sjöberg'), true);
  assert.equal(k.has('Mans Sjoberg'), false);
  assert.equal(k.find('__proto__'), 3);
});

test(`${Keys.name}: 100,000 keys, across growth and from a size hint: each found by an equal string made apart`, () => {
  for (const hint of [0, 100_000]) {
    const k = new Keys(hint);
    const n = 100_000;
    for (let i = 0; i < n; i++) assert.equal(k.add(`663cb4439890bf463d${i.toString(16).padStart(6, '0')}`), i);
    assert.equal(k.size, n);
    for (let i = 0; i < n; i += 7) assert.equal(k.find(Buffer.from(`663cb4439890bf463d${i.toString(16).padStart(6, '0')}`).toString()), i);
    for (let i = 0; i < 1000; i++) assert.equal(k.find(`663cb4439890bf463d${(n + i).toString(16).padStart(6, '0')}`), -1);
    assert.equal(k.add('663cb4439890bf463d000007'), 7);
    assert.equal(k.size, n);
  }
});
}

test('reserve: room made once keeps every key and id, keys() is exactly the keys, more than reserved still grow', () => {
  const k = new StringKeys();
  for (let i = 0; i < 20; i++) assert.equal(k.add(`k${i}`), i);
  k.reserve(1000);
  for (let i = 0; i < 20; i++) assert.equal(k.find(`k${i}`), i, `k${i} after reserve`);
  assert.equal(k.add('k3'), 3);
  for (let i = 20; i < 1500; i++) assert.equal(k.add(`k${i}`), i);
  assert.equal(k.size, 1500);
  for (let i = 0; i < 1500; i++) assert.equal(k.find(`k${i}`), i);
  assert.deepEqual(k.keys(), Array.from({ length: 1500 }, (_, i) => `k${i}`));
  const r = new StringKeys(50);
  for (const s of ['x', 'y', 'x']) r.add(s);
  assert.deepEqual(r.keys(), ['x', 'y']);
  assert.equal(r.add('z'), 2); // added after keys() trimmed the list
  assert.deepEqual(r.keys(), ['x', 'y', 'z']);
  assert.equal(r.find(''), -1);
});

test('UnitKeys: keys with units of 256 and more met late, keys longer than a chunk, keys equal but for one unit or their length', () => {
  const k = new UnitKeys();
  const keys: string[] = [];
  for (let i = 0; i < 3000; i++) keys.push(`id-${i}`);
  keys.push('Zoë', 'Zoe', 'Zo', 'Zoe\u0000', '🎬 film', '\u0100', '\u00ff', 'x'.repeat(70_000), 'x'.repeat(70_001), `${'x'.repeat(69_999)}y`);
  for (let i = 3000; i < 6000; i++) keys.push(`Ωid-${i}`);
  for (const [i, key] of keys.entries()) assert.equal(k.add(key), i, `add ${key.slice(0, 20)}`);
  assert.equal(k.size, keys.length);
  // Each found by an equal string made apart, after the chunks were widened and the table grew.
  for (const [i, key] of keys.entries()) assert.equal(k.find(Buffer.from(key).toString()), i, `find ${key.slice(0, 20)}`);
  for (const key of ['id-3000', 'Z', 'Zoé', '\u0101', 'x'.repeat(69_999), 'Ωid-6000', '']) assert.equal(k.find(key), -1, key.slice(0, 20));
  assert.equal(k.add('id-7'), 7);
  assert.equal(k.add(''), keys.length);
});

test('UnitKeys: two keys of one hash (FNV-1a) told apart by their units; keys that fill a chunk to its last unit', () => {
  // 'yaczfaa' and 'glbppaa' share their 32-bit FNV-1a hash, so their slots agree: only the units differ.
  const k = new UnitKeys();
  assert.equal(k.add('yaczfaa'), 0);
  assert.equal(k.find('glbppaa'), -1);
  assert.equal(k.add('glbppaa'), 1);
  assert.equal(k.find('glbppaa'), 1);
  assert.equal(k.find('yaczfaa'), 0);
  // Keys of 5 units: 1,024 units hold 204 of them and 4 units are left, one short of the next.
  const five = new UnitKeys();
  for (let i = 0; i < 5000; i++) assert.equal(five.add(`k${String(i).padStart(4, '0')}`), i);
  for (let i = 0; i < 5000; i++) assert.equal(five.find(`k${String(i).padStart(4, '0')}`), i);
});
