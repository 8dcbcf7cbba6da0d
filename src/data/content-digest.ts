// What a data file holds, by its bytes (issue 19): a file whose stat identity changed but whose bytes
// did not (touched, copied over, checked out again, restored by a deploy) keeps the collections made
// from it, from the live snapshot or the boot cache, instead of rebuilding them (at 100k, outfits:
// about 13 s of CPU). A SHA-256 of the file is native code: 256 MB in about 0.15 s here (SHA-NI).
// Digests are kept per stat identity, so each version of a file is hashed once per process: when the
// boot cache is written (or read: its header carries them) and when its identity next changes.
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { racy, splitKey } from './boot-cache-format.ts';
import { scratchBuffer } from './scratch.ts';

/** Identity (boot-cache-format.ts readDataIdentity's `file:dev:ino:size:mtimeNs:ctimeNs`) -> SHA-256 hex. */
const digests = new Map<string, string>();
/** Hashes under way: collections made from one file ask for its digest side by side. */
const hashing = new Map<string, Promise<string | null>>();
/** Each identity ever seen is a few dozen bytes; past this many the oldest go. */
const KEEP = 1024;
/** Read chunk of a hash: resident while a boot cache is written (a first start's ready), so small. */
const CHUNK = 1 << 20;

/** Records that the file of `identity` held bytes of `digest` (read from a boot cache written for that identity). */
export function rememberDigest(identity: string, digest: string): void {
  digests.delete(identity);
  digests.set(identity, digest);
  if (digests.size > KEEP) digests.delete(digests.keys().next().value!);
}

/** Files this process has hashed (each read whole): tests count them. */
export const hashStats = { files: 0 };

/** Forgets every digest known (tests: a process that has just started). */
export function forgetDigests(): void {
  digests.clear();
}

/** The digest of the file of `identity` when this process knows it (never reads the file). */
export function knownDigest(identity: string): string | undefined {
  return digests.get(identity);
}

/** `file:dev:ino:size:mtimeNs:ctimeNs` of a file as it is now. */
async function identityOf(dataDir: string, file: string): Promise<string | null> {
  try {
    const s = await stat(join(dataDir, file), { bigint: true });
    return `${file}:${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return null;
  }
}

/**
 * The SHA-256 of data file `identity` names (its first field is the file's name in `dataDir`), or
 * null when the file is no longer that identity once read (changed while hashing, or gone), or was
 * changed so recently that a same-size rewrite within one timestamp tick could hide behind it.
 */
export function fileDigest(dataDir: string, identity: string): Promise<string | null> {
  const known = digests.get(identity);
  if (known !== undefined) return Promise.resolve(known);
  const key = `${dataDir}\0${identity}`;
  let running = hashing.get(key);
  if (running === undefined) {
    running = hashFile(dataDir, identity).finally(() => hashing.delete(key));
    hashing.set(key, running);
  }
  return running;
}

async function hashFile(dataDir: string, identity: string): Promise<string | null> {
  const file = identity.slice(0, identity.indexOf(':'));
  const at = Date.now();
  hashStats.files++;
  const hash = createHash('sha256');
  let fh;
  try {
    fh = await open(join(dataDir, file), 'r');
  } catch {
    return null;
  }
  try {
    // A scratch buffer: the free of an 8 MiB Buffer would raise glibc's mmap threshold (scratch.ts).
    const size = Number(identity.split(':')[3]);
    const buf = scratchBuffer(size >= 0 && size < CHUNK ? Math.max(size, 1) : CHUNK);
    for (let pos = 0; ; ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
  } catch {
    return null;
  } finally {
    await fh.close().catch(() => {});
  }
  // The same identity after the read: the bytes hashed are that version's (a write changes the
  // ctime, which nothing can set back), unless it was written within the racy window of the read.
  if ((await identityOf(dataDir, file)) !== identity || racy({ at, files: [identity] })) return null;
  const digest = hash.digest('hex');
  rememberDigest(identity, digest);
  return digest;
}

/**
 * A digest of the file of `identity` made from the bytes a reader reads anyway (patch.ts: the file
 * is then read once, not once more to be hashed), or null when it is known already. `update` takes
 * every byte of the file in order; `finish` (once the whole file was fed) remembers the digest under
 * the same conditions as a hash of its own (the same identity after the read, not racy).
 */
export function digestWhileReading(dataDir: string, identity: string): { update(bytes: Uint8Array): void; finish(): Promise<void> } | null {
  if (digests.has(identity)) return null;
  const at = Date.now();
  const hash = createHash('sha256');
  let fed = 0;
  return {
    update: (bytes) => {
      hash.update(bytes);
      fed += bytes.length;
    },
    finish: async () => {
      // (Every byte of that version: its size fed, and no write since.)
      const file = identity.slice(0, identity.indexOf(':'));
      if (fed !== Number(identity.split(':')[3])) return;
      if ((await identityOf(dataDir, file)) === identity && !racy({ at, files: [identity] })) rememberDigest(identity, hash.digest('hex'));
    },
  };
}

/**
 * Whether data files of identities `was` and `now` (the same files, in the same order) hold the same
 * bytes: each identity that changed has a known digest (`was`) equal to the digest of the file as it
 * is now (hashed if not known). `wasDigests`: the digests of `was`, when a boot cache header gives them.
 */
export async function sameBytes(dataDir: string, was: readonly string[], now: readonly string[], wasDigests?: readonly (string | null)[] | null): Promise<boolean> {
  if (was.length !== now.length) return false;
  for (let i = 0; i < was.length; i++) {
    if (was[i] === now[i]) continue;
    const file = now[i]!.slice(0, now[i]!.indexOf(':'));
    if (was[i]!.slice(0, was[i]!.indexOf(':')) !== file) return false;
    // Another size is other bytes: nothing to hash (after a record inserted, the patch reads the file).
    if (was[i]!.split(':')[3] !== now[i]!.split(':')[3]) return false;
    const old = wasDigests?.[i] ?? knownDigest(was[i]!);
    if (old === undefined || old === null) return false;
    if ((await fileDigest(dataDir, now[i]!)) !== old) return false;
  }
  return true;
}

/**
 * Whether a collection of key `was` (the live snapshot's, a boot cache's) is the one key `now` would
 * build: the same format, code, directory and collection, and files of the same bytes (sameBytes).
 */
export async function sameData(dataDir: string, was: string, now: string, wasDigests?: readonly (string | null)[] | null): Promise<boolean> {
  if (was === now) return true;
  const a = splitKey(was);
  const b = splitKey(now);
  return a !== null && b !== null && a.rest === b.rest && sameBytes(dataDir, a.files, b.files, wasDigests);
}

/**
 * Whether a collection of key `was` is the one key `now` would build but for its files numbered
 * `skip` (each maybe changed): the same format, code, directory and collection, and every other file
 * of the same bytes.
 */
export async function sameBut(dataDir: string, was: string, now: string, skip: readonly number[], wasDigests?: readonly (string | null)[] | null): Promise<boolean> {
  const a = splitKey(was);
  const b = splitKey(now);
  if (a === null || b === null || a.rest !== b.rest || a.files.length !== b.files.length || skip.some((i) => i < 0 || i >= a.files.length)) return false;
  const other = <T>(list: readonly T[]) => list.filter((_, i) => !skip.includes(i));
  return sameBytes(dataDir, other(a.files), other(b.files), wasDigests ? other(wasDigests) : null);
}
