// Cross-process lock files (O_EXCL), with stale-lock recovery, for the account store and the usage writer.
import { randomBytes } from 'node:crypto';
import { open, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LockOptions {
  /** How long to wait for a live holder before giving up; 0 = fail at once. */
  readonly timeoutMs: number;
  /**
   * A lock untouched for this long is stale whatever its pid says (pid reuse, another host sharing
   * the directory); null = only a dead pid on this host makes it stale.
   */
  readonly staleMs: number | null;
  /** For long-held locks: the holder touches the file this often, so it never looks stale while alive. */
  readonly heartbeatMs?: number;
}

export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly time: number;
  readonly nonce: string;
}

export class LockBusyError extends Error {
  constructor(
    readonly path: string,
    readonly owner: LockOwner | null,
  ) {
    super(`${path} is held by ${owner ? `process ${owner.pid} on ${owner.host}` : 'another process'}`);
  }
}

/** A held lock: release() removes it, once. */
export type Release = () => Promise<void>;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

async function readOwner(path: string): Promise<LockOwner | null> {
  try {
    const owner = JSON.parse(await readFile(path, 'utf8')) as LockOwner;
    return typeof owner.pid === 'number' ? owner : null;
  } catch {
    return null; // vanished, or caught half-written: treated as busy, and stale by age below
  }
}

/**
 * Nonces of the locks this process is taking or holds: a lock naming our pid with another nonce was
 * left by an earlier process with the same pid (a container restarted as pid 1), so it is stale.
 */
const ours = new Set<string>();

async function isStale(path: string, owner: LockOwner | null, staleMs: number | null): Promise<boolean> {
  if (owner && owner.host === hostname()) {
    if (owner.pid === process.pid) return !ours.has(owner.nonce);
    if (!alive(owner.pid)) return true;
  }
  if (staleMs === null) return false;
  const st = await stat(path).catch(() => null);
  return st !== null && Date.now() - st.mtimeMs > staleMs; // mtime: the creation or the last heartbeat
}

async function tryCreate(path: string, owner: LockOwner): Promise<boolean> {
  try {
    const fh = await open(path, 'wx', 0o600);
    try {
      await fh.writeFile(JSON.stringify(owner));
      await fh.sync();
    } finally {
      await fh.close();
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Removes a stale lock. Two processes may judge the same lock stale; the second must not delete the
 * fresh lock the first one then takes. So breaking is itself done under `<path>.break` (O_EXCL),
 * and only if the lock still holds the very owner (nonce included) that was judged stale.
 */
async function breakStale(path: string, judged: LockOwner | null): Promise<void> {
  const breaker = path + '.break';
  const me: LockOwner = { pid: process.pid, host: hostname(), time: Date.now(), nonce: randomBytes(8).toString('hex') };
  if (!(await tryCreate(breaker, me))) {
    // A breaker that died mid-break leaves this file; breaking takes milliseconds, so 5 s is stale.
    const st = await stat(breaker).catch(() => null);
    if (st && Date.now() - st.mtimeMs > 5000) await unlink(breaker).catch(() => {});
    else await sleep(5);
    return;
  }
  try {
    const now = await readOwner(path);
    if (judged === null ? now === null : now?.nonce === judged.nonce) await unlink(path).catch(() => {});
  } finally {
    await unlink(breaker).catch(() => {});
  }
}

/** Takes the lock at `path`, waiting up to timeoutMs for a live holder; throws LockBusyError after. */
export async function acquireLock(path: string, options: LockOptions): Promise<Release> {
  const me: LockOwner = { pid: process.pid, host: hostname(), time: Date.now(), nonce: randomBytes(8).toString('hex') };
  const deadline = Date.now() + options.timeoutMs;
  ours.add(me.nonce); // before the file exists, so a waiter of this process never thinks it stale
  try {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (await tryCreate(path, { ...me, time: Date.now() })) break;
      const owner = await readOwner(path);
      if (await isStale(path, owner, options.staleMs)) {
        await breakStale(path, owner);
        continue;
      }
      if (Date.now() >= deadline) throw new LockBusyError(path, owner);
      await sleep(wait);
    }
  } catch (err) {
    ours.delete(me.nonce);
    throw err;
  }
  let heartbeat: NodeJS.Timeout | null = null;
  if (options.heartbeatMs) {
    heartbeat = setInterval(() => {
      const now = new Date();
      utimes(path, now, now).catch(() => {}); // a missed beat only brings staleness closer
    }, options.heartbeatMs);
    heartbeat.unref();
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (heartbeat) clearInterval(heartbeat);
    const owner = await readOwner(path);
    if (owner?.nonce === me.nonce) await unlink(path).catch(() => {});
    ours.delete(me.nonce);
  };
}
