// API key format (CONTRACT 4): `cel_` + 32 CSPRNG base62 characters + a 6-character CRC-32 checksum.
import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'cel_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 32;
// 62^6 > 2^32, so six base62 digits hold any CRC-32 value; CRC-32 catches every single-character
// substitution and every adjacent transposition, which is what a typo is.
const CHECK_CHARS = 6;
export const KEY_LENGTH = KEY_PREFIX.length + RANDOM_CHARS + CHECK_CHARS;
/** Characters shown by `list` commands: enough to tell keys apart, far too few to use. */
const DISPLAY_CHARS = 6;

// 0 = not base62; otherwise value + 1 (a lookup table keeps the hot-path check allocation-free).
const DIGIT = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i + 1;

/** `count` base62 characters from crypto.randomBytes, by rejection sampling so each is uniform. */
export function randomBase62(count: number): string {
  let out = '';
  while (out.length < count) {
    for (const byte of randomBytes(count * 2)) {
      if (byte >= 248) continue; // 248 = 4 * 62: above it, `% 62` would favour the first digits
      out += ALPHABET[byte % 62];
      if (out.length === count) break;
    }
  }
  return out;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECK_CHARS; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A fresh key. Show it once; store only keyDigest() and the sealed copy (CONTRACT 4). */
export function generateKey(): string {
  const body = randomBase62(RANDOM_CHARS);
  return KEY_PREFIX + body + checksum(KEY_PREFIX + body);
}

/**
 * Format and checksum check, before any lookup: a mistyped key is rejected here. Cheap and
 * synchronous (the gate calls it on every request).
 */
export function isWellFormedKey(key: string): boolean {
  if (key.length !== KEY_LENGTH || !key.startsWith(KEY_PREFIX)) return false;
  for (let i = KEY_PREFIX.length; i < KEY_LENGTH; i++) {
    const c = key.charCodeAt(i);
    if (c >= 128 || DIGIT[c] === 0) return false;
  }
  const split = KEY_LENGTH - CHECK_CHARS;
  return checksum(key.slice(0, split)) === key.slice(split);
}

/**
 * True when `body` is what follows `cel_` in a key: base62 of the right length whose checksum holds.
 * The logs use it to find a key pasted without its prefix (CONTRACT 4: no key in clear, anywhere).
 */
export function isKeyBody(body: string): boolean {
  return body.length === KEY_LENGTH - KEY_PREFIX.length && isWellFormedKey(KEY_PREFIX + body);
}

// crypto.hash (node >= 20.12) is about 2.5x faster than createHash for a short input: it is on the hot path.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;

/** The lookup digest stored instead of the key: SHA-256, hex. */
export function keyDigest(key: string): string {
  return oneShot ? oneShot('sha256', key, 'hex') : createHash('sha256').update(key).digest('hex');
}

/** What `accounts list` / `keys list` show of a key. */
export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + DISPLAY_CHARS) + '…';
}

/** Random identifiers for accounts and keys ('acc_…', 'key_…'): never derived from the key. */
export function newId(kind: 'acc' | 'key'): string {
  return `${kind}_${randomBytes(8).toString('hex')}`;
}
