// The account store file: read and validate, write atomically (temp, fsync, rename, fsync dir), mode 0600.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isPlan } from '../../access/plans.ts';
import { AccountError, type StoreData } from '../../access/types.ts';

export const STORE_FILE = 'accounts.json';
export const LOCK_FILE = 'accounts.lock';

/** Identity of one version of the file: a rename gives a new inode, an edit a new mtime or size. */
export interface Stamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export const NO_STAMP: Stamp = Object.freeze({ ino: -1, size: -1, mtimeMs: -1 });

export function sameStamp(a: Stamp, b: Stamp): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

export function emptyStore(): StoreData {
  return { version: 1, accounts: [] };
}

function corrupt(path: string, why: string): AccountError {
  return new AccountError('STORE_CORRUPT', `${path}: ${why}`);
}

const DIGEST_RE = /^[0-9a-f]{64}$/;

function parseStore(text: string, path: string): StoreData {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw corrupt(path, `not valid JSON (${(err as Error).message})`);
  }
  return checkStore(data, path);
}

/** Shape checks: enough that a hand-edited or foreign file (or a state export) fails here, not on a request. */
export function checkStore(data: unknown, path: string): StoreData {
  const store = data as StoreData;
  if (!store || typeof store !== 'object' || store.version !== 1 || !Array.isArray(store.accounts)) {
    throw corrupt(path, 'expected {"version": 1, "accounts": [...]}');
  }
  const emails = new Set<string>();
  store.accounts.forEach((a, i) => {
    const where = `accounts[${i}]`;
    if (!a || typeof a.id !== 'string' || typeof a.email !== 'string') throw corrupt(path, `${where}: missing id or email`);
    if (!isPlan(a.plan)) throw corrupt(path, `${where}.plan: unknown plan ${JSON.stringify(a.plan)}`);
    if (!a.password || a.password.alg !== 'scrypt') throw corrupt(path, `${where}.password: not a scrypt hash`);
    if (a.key !== null && (typeof a.key?.digest !== 'string' || a.key.sealed?.alg !== 'scrypt+aes-256-gcm')) {
      throw corrupt(path, `${where}.key: expected null or a key record`);
    }
    // A digest that is not SHA-256 hex can never match a key: the file was damaged or edited by hand.
    if (a.key !== null && !DIGEST_RE.test(a.key.digest)) throw corrupt(path, `${where}.key.digest: not a SHA-256 hex digest`);
    if (!Array.isArray(a.revokedKeys)) throw corrupt(path, `${where}.revokedKeys: expected an array`);
    if (emails.has(a.email)) throw corrupt(path, `${where}.email: duplicate ${a.email}`);
    emails.add(a.email);
  });
  return store;
}

/** Reads the store with the stamp of the very inode read (fstat on the open handle, not a later stat). */
export async function readStore(path: string): Promise<{ data: StoreData; stamp: Stamp; mode: number | null }> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { data: emptyStore(), stamp: NO_STAMP, mode: null };
    throw err;
  }
  try {
    const st = await fh.stat();
    const text = await fh.readFile('utf8');
    return { data: parseStore(text, path), stamp: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }, mode: st.mode };
  } finally {
    await fh.close();
  }
}

/** fsync of a directory: what makes a rename in it durable. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces the file atomically: a reader (the server's reload) sees the old or the new version, never
 * half of one, and a crash leaves one of them. Returns the stamp of what was written.
 */
export async function writeStore(path: string, data: StoreData): Promise<Stamp> {
  return writeFileAtomic(path, JSON.stringify(data, null, 2) + '\n');
}

/** Temp file (mode 0600), fsync, rename, fsync of the directory: the old or the new text, never half. */
export async function writeFileAtomic(path: string, text: string): Promise<Stamp> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  let st;
  try {
    await fh.chmod(0o600); // open's mode is filtered by the umask; this is not
    await fh.writeFile(text);
    await fh.sync();
    st = await fh.stat();
  } catch (err) {
    await fh.close();
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fh.close();
  await rename(tmp, path);
  await syncDir(dirname(path)); // makes the rename itself durable
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}
