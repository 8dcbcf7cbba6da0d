// Password hashing and the sealed key copy for `reveal` (CONTRACT 4): scrypt, then AES-256-GCM.
import { createCipheriv, createDecipheriv, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** N = 2^15, r = 8, p = 1: OWASP's minimum for scrypt, about 32 MiB and tens of ms per derivation. */
export const DEFAULT_SCRYPT: ScryptParams = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

/**
 * For 'memory' state (embedded test suites): the cost of scrypt is there to slow guessing from a
 * stolen store file, and in memory there is no file; an attacker reading process memory has the
 * keys anyway. 2^10 keeps account creation in a test suite at about a millisecond.
 */
export const MEMORY_SCRYPT: ScryptParams = Object.freeze({ N: 2 ** 10, r: 8, p: 1 });

/** Stored with its parameters and salt, so raising DEFAULT_SCRYPT later keeps old hashes valid. */
export interface PasswordHash extends ScryptParams {
  readonly alg: 'scrypt';
  readonly salt: string; // base64
  readonly hash: string; // base64, 32 bytes
}

export interface SealedKey extends ScryptParams {
  readonly alg: 'scrypt+aes-256-gcm';
  readonly salt: string; // base64, its own salt (never the password hash's)
  readonly iv: string; // base64, 12 bytes
  readonly tag: string; // base64, 16 bytes
  readonly data: string; // base64 ciphertext of the key
}

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  // maxmem must exceed 128 * N * r * p or node refuses; leave headroom.
  const maxmem = 256 * params.N * params.r * params.p + 1024 * 1024;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, { ...params, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<PasswordHash> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, params);
  return { alg: 'scrypt', N: params.N, r: params.r, p: params.p, salt: salt.toString('base64'), hash: hash.toString('base64') };
}

export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const expected = Buffer.from(stored.hash, 'base64');
  const actual = await derive(password, Buffer.from(stored.salt, 'base64'), stored);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Encrypts the key under a password-derived key; the key id is bound as associated data. */
export async function sealKey(key: string, password: string, keyId: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<SealedKey> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await derive(password, salt, params), iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const data = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()]);
  return {
    alg: 'scrypt+aes-256-gcm',
    N: params.N,
    r: params.r,
    p: params.p,
    salt: salt.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** Decrypts a sealed key; null when the password (or the key id, or the data) does not match. */
export async function openSealedKey(sealed: SealedKey, password: string, keyId: string): Promise<string | null> {
  const secret = await derive(password, Buffer.from(sealed.salt, 'base64'), sealed);
  const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(keyId, 'utf8'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return null; // GCM authentication failed
  }
}
