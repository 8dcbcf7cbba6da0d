// Key format: prefix, length, base62 body, and a checksum that rejects typos before any lookup.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKey, isWellFormedKey, KEY_LENGTH, KEY_PREFIX, keyDigest, keyPrefix, randomBase62 } from '../../src/access/key-format.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

test('generated key -> cel_ + at least 32 base62 characters, well formed', () => {
  for (let i = 0; i < 200; i++) {
    const key = generateKey();
    assert.match(key, /^cel_[0-9A-Za-z]{32,}$/);
    assert.equal(key.length, KEY_LENGTH);
    assert.ok(isWellFormedKey(key), key);
  }
});

test('keys are unique and their characters roughly uniform', () => {
  const keys = new Set(Array.from({ length: 1000 }, generateKey));
  assert.equal(keys.size, 1000);
  const counts = new Map<string, number>();
  for (const c of randomBase62(62_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  for (const n of counts.values()) assert.ok(n > 700 && n < 1300, `count ${n} far from 1000`);
});

test('every single-character typo -> rejected by the checksum', () => {
  const key = generateKey();
  let checked = 0;
  for (let i = KEY_PREFIX.length; i < key.length; i++) {
    for (const c of ALPHABET) {
      if (c === key[i]) continue;
      const typo = key.slice(0, i) + c + key.slice(i + 1);
      assert.equal(isWellFormedKey(typo), false, `position ${i} -> ${c}`);
      checked++;
    }
  }
  assert.equal(checked, (KEY_LENGTH - KEY_PREFIX.length) * 61);
});

test('every adjacent transposition -> rejected', () => {
  const key = generateKey();
  for (let i = KEY_PREFIX.length; i < key.length - 1; i++) {
    if (key[i] === key[i + 1]) continue;
    const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
    assert.equal(isWellFormedKey(swapped), false, `swap at ${i}`);
  }
});

const malformed: [string, string][] = [
  ['empty', ''],
  ['prefix only', 'cel_'],
  ['wrong prefix', 'key_' + generateKey().slice(4)],
  ['upper-case prefix', 'CEL_' + generateKey().slice(4)],
  ['one character short', generateKey().slice(0, -1)],
  ['one character long', generateKey() + 'a'],
  ['non-base62 character', generateKey().slice(0, 10) + '-' + generateKey().slice(11)],
  ['non-ASCII character', generateKey().slice(0, 10) + 'é' + generateKey().slice(11)],
  ['surrounding space', ' ' + generateKey().slice(1)],
];
for (const [name, key] of malformed) {
  test(`${name} -> not well formed`, () => assert.equal(isWellFormedKey(key), false));
}

test('digest -> SHA-256 hex, prefix -> 10 characters and an ellipsis, never the key', () => {
  const key = generateKey();
  assert.match(keyDigest(key), /^[0-9a-f]{64}$/);
  assert.equal(keyPrefix(key), key.slice(0, 10) + '…');
  assert.ok(!keyPrefix(key).includes(key.slice(10)));
});
