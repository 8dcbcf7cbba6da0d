// src/data/string-keys.ts: distinct strings numbered 0, 1, 2... in the order added, found again by
// content (not by identity), across the table's growth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StringKeys, zeros } from '../../src/data/string-keys.ts';

test('zeros: a packed array of exactly n zeros, across the block it copies from', () => {
  for (const n of [0, 1, 16, 16_383, 16_384, 16_385, 3 * 16_384 + 5, 1 << 20]) {
    const z = zeros(n);
    assert.equal(z.length, n, `length of zeros(${n})`);
    assert.equal(z.every((x) => x === 0), true, `zeros(${n}) all zero`);
    z[0] = 7; // a copy: the block it came from is not changed
  }
  assert.equal(zeros(20_000).every((x) => x === 0), true);
});

test('add numbers new keys in order and gives a key seen before its id', () => {
  const k = new StringKeys();
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
  assert.deepEqual(k.keys(), ['a', 'b', '', '__proto__', 'Måns Sjöberg']);
  assert.equal(k.has('Måns Sjöberg'), true);
  assert.equal(k.has('Mans Sjoberg'), false);
  assert.equal(k.find('__proto__'), 3);
});

test('100,000 keys, across growth and from a size hint: each found by an equal string made apart', () => {
  for (const hint of [0, 100_000]) {
    const k = new StringKeys(hint);
    const n = 100_000;
    for (let i = 0; i < n; i++) assert.equal(k.add(`663cb4439890bf463d${i.toString(16).padStart(6, '0')}`), i);
    assert.equal(k.size, n);
    for (let i = 0; i < n; i += 7) assert.equal(k.find(Buffer.from(`663cb4439890bf463d${i.toString(16).padStart(6, '0')}`).toString()), i);
    for (let i = 0; i < 1000; i++) assert.equal(k.find(`663cb4439890bf463d${(n + i).toString(16).padStart(6, '0')}`), -1);
    assert.equal(k.add('663cb4439890bf463d000007'), 7);
    assert.equal(k.size, n);
  }
});

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
