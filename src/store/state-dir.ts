// The state directory (CONTRACT 4, issue 15): accounts, the usage log, sessions, the TLS key and the
// boot cache. Owner-only whoever creates it first: 0700 for folders, 0600 for files.
import { mkdir, stat } from 'node:fs/promises';
import type { Logger } from '../log.ts';

/** Creates `dir` (and missing parents) 0700; warns when an existing one lets others in. */
export async function ensureStateDir(dir: string, log?: Logger): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (log) warnIfOpen(dir, (await stat(dir)).mode, log);
}

/** Warns, naming the path, when group or others may read what holds password hashes and keys. */
export function warnIfOpen(path: string, mode: number, log: Logger): void {
  if ((mode & 0o077) === 0) return;
  const perms = (mode & 0o777).toString(8).padStart(4, '0');
  log.warn('state file or folder readable by other users; run chmod go-rwx on it', { path, mode: perms });
}
