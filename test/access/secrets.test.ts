// scrypt password hashes and the AES-256-GCM sealed key: right password opens, anything else does not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKey } from '../../src/access/key-format.ts';
import { DEFAULT_SCRYPT, hashPassword, openSealedKey, sealKey, verifyPassword } from '../../src/access/secrets.ts';
import { FAST_SCRYPT } from '../helpers/state.ts';

test('password hash -> stores its parameters and salt, verifies the right password only', async () => {
  const hash = await hashPassword('correct horse', FAST_SCRYPT);
  assert.deepEqual([hash.alg, hash.N, hash.r, hash.p], ['scrypt', 1024, 8, 1]);
  assert.equal(Buffer.from(hash.salt, 'base64').length, 16);
  assert.equal(await verifyPassword('correct horse', hash), true);
  assert.equal(await verifyPassword('correct horsf', hash), false);
  assert.equal(await verifyPassword('', hash), false);
});

test('same password twice -> different salts and hashes', async () => {
  const [a, b] = await Promise.all([hashPassword('pw', FAST_SCRYPT), hashPassword('pw', FAST_SCRYPT)]);
  assert.notEqual(a.salt, b.salt);
  assert.notEqual(a.hash, b.hash);
});

test('default cost -> N = 2^15 and it still verifies', async () => {
  const hash = await hashPassword('pw');
  assert.equal(hash.N, DEFAULT_SCRYPT.N);
  assert.equal(await verifyPassword('pw', hash), true);
});

test('sealed key -> opens with the right password and key id; wrong password or id -> null', async () => {
  const key = generateKey();
  const sealed = await sealKey(key, 'pw', 'key_1', FAST_SCRYPT);
  assert.ok(!JSON.stringify(sealed).includes(key));
  assert.equal(await openSealedKey(sealed, 'pw', 'key_1'), key);
  assert.equal(await openSealedKey(sealed, 'pw2', 'key_1'), null);
  assert.equal(await openSealedKey(sealed, 'pw', 'key_2'), null, 'the key id is associated data');
  const tampered = { ...sealed, data: Buffer.from(Buffer.from(sealed.data, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64') };
  assert.equal(await openSealedKey(tampered, 'pw', 'key_1'), null);
});
