// Notices changes to a file made by other processes: fs.watch on its directory plus a periodic stat.
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../log.ts';

export interface WatchOptions {
  readonly dir: string;
  readonly file: string;
  /** Period of the fallback check; CONTRACT 4 allows 2 s in all, so keep this well under it. */
  readonly intervalMs: number;
  /** Called on every event and tick; must be cheap when nothing changed (compare a stamp). */
  readonly check: () => Promise<void>;
  readonly log: Logger;
}

/**
 * Watching the directory, not the file: the store is replaced by rename, and a watch on the file
 * follows the old inode. fs.watch can also miss events (network file systems, overflow, some
 * containers), so the interval check is what the 2 s guarantee rests on. Returns a stop function.
 */
export function watchStoreFile(options: WatchOptions): () => void {
  const { dir, file, intervalMs, check, log } = options;
  let running = false;
  let again = false;
  let stopped = false;

  const run = () => {
    if (stopped) return;
    if (running) {
      again = true; // coalesce bursts (temp file created, written, renamed) into one more check
      return;
    }
    running = true;
    check()
      .catch((err: Error) => log.warn('account store check failed; keeping the accounts in memory', { error: err.message }))
      .finally(() => {
        running = false;
        if (again && !stopped) {
          again = false;
          run();
        }
      });
  };

  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dir, { persistent: false }, (_event, name) => {
      if (name === null || name === file) run();
    });
    watcher.on('error', (err) => {
      log.warn('fs.watch on the state directory failed; relying on the periodic check', { error: err.message });
      watcher?.close();
      watcher = null;
    });
  } catch (err) {
    log.warn('fs.watch unavailable; relying on the periodic check', { error: (err as Error).message });
  }
  const timer = setInterval(run, intervalMs);
  timer.unref();

  return () => {
    stopped = true;
    clearInterval(timer);
    watcher?.close();
  };
}
