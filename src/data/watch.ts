// Hot reload (CONTRACT 7): one queue of reloads for SIGHUP and --watch, and a watcher on the data
// directory that debounces edits and survives files (or the directory itself) being renamed over.
import { statSync, watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from '../log.ts';
import { releaseMemory } from './gc.ts';
import { DataError } from './load.ts';
import { formatProblem } from './validate.ts';
import type { Snapshot } from './snapshot.ts';

export interface Reloadable {
  reload(): Promise<Snapshot>;
  snapshot(): Snapshot;
}

/**
 * Returns `reload(reason)`: loads beside the live data and swaps, or logs the loader's problems and
 * keeps the old data. Reloads never overlap; a request for one during another runs once afterwards,
 * so the last edit always wins. Resolves true when new data went live.
 */
export function createReloader(service: Reloadable, log: Logger, onResult: (ok: boolean, live: Snapshot) => void = () => {}): (reason: string) => Promise<boolean> {
  let running: Promise<boolean> | null = null;
  let queued: Promise<boolean> | null = null;
  const run = async (reason: string): Promise<boolean> => {
    try {
      const next = await service.reload();
      // The collections the new snapshot rebuilt are garbage in the old one now that it is out of
      // service: given back at once, where V8 kept their arrays (half a GB at 100k) until memory was
      // tight and every reload grew the process.
      await releaseMemory();
      log.info('data reloaded', { reason, version: next.version });
      onResult(true, next);
      return true;
    } catch (err) {
      const problems = err instanceof DataError ? err.problems.map(formatProblem) : [(err as Error).message];
      log.error('data reload rejected; still serving the previous data', { reason, version: service.snapshot().version, problems });
      onResult(false, service.snapshot());
      return false;
    }
  };
  const reload = (reason: string): Promise<boolean> => {
    if (running === null) {
      running = run(reason).finally(() => (running = null));
      return running;
    }
    queued ??= running.then(() => {
      queued = null;
      return reload(reason);
    });
    return queued;
  };
  return reload;
}

export interface DataWatcher {
  close(): void;
}

export interface WatchOptions {
  readonly debounceMs: number;
  readonly log: Logger;
  /** How often to check that the directory is still the one watched (a swapped-in directory); default 1000. */
  readonly recheckMs?: number;
}

/**
 * Watches the directory, not the files: an editor or deploy that writes a temporary file and renames
 * it over `celebrities.json` replaces the inode a file watch would hold. A directory renamed or
 * symlinked over is noticed by its inode changing, and the watch moves to the new one.
 */
export function watchData(dir: string, onChange: () => void, options: WatchOptions): DataWatcher {
  let watcher: FSWatcher | null = null;
  /** dev:ino of the directory being watched; null until first seen, 'lost' after a watch error. */
  let identity: string | null = null;
  let timer: NodeJS.Timeout | null = null;
  let firstEventAt = 0;
  let closed = false;

  const fire = () => {
    timer = null;
    if (!closed) onChange();
  };
  // Trailing debounce, but never put off past ten windows: a file written continuously still loads.
  const schedule = () => {
    const now = Date.now();
    if (timer === null) firstEventAt = now;
    else clearTimeout(timer);
    timer = setTimeout(fire, now - firstEventAt > options.debounceMs * 10 ? 0 : options.debounceMs);
  };
  const arm = () => {
    watcher?.close();
    watcher = null;
    try {
      watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || name.endsWith('.json')) schedule();
      });
      watcher.on('error', (err) => {
        options.log.warn('data watch failed; retrying', { dir, error: err.message });
        watcher?.close();
        watcher = null;
        identity = 'lost'; // the next recheck arms again, and reloads for what it may have missed
      });
    } catch (err) {
      options.log.warn('cannot watch the data directory; retrying', { dir, error: (err as Error).message });
    }
  };
  const recheck = async () => {
    let now = '';
    try {
      const s = await stat(dir);
      now = `${s.dev}:${s.ino}`;
    } catch {
      // Missing for a moment during a swap: keep the old watch and look again next time.
      return;
    }
    if (closed || now === identity) return;
    const first = identity === null;
    identity = now;
    if (first) return;
    arm();
    options.log.info('data directory replaced or watch lost; watching it again', { dir });
    schedule();
  };
  // The identity compared later is the directory's as the watch is set, taken at once: an async
  // first look could see a directory swapped in after the watch was set (a loaded machine, a busy
  // thread pool), take it for the first, and never move the watch off the old one.
  try {
    const s = statSync(dir);
    identity = `${s.dev}:${s.ino}`;
  } catch {
    // Missing at the start: the first recheck that finds it takes it.
  }
  arm();
  const poll = setInterval(() => void recheck(), options.recheckMs ?? 1000);
  poll.unref();
  return {
    close() {
      closed = true;
      clearInterval(poll);
      if (timer !== null) clearTimeout(timer);
      watcher?.close();
    },
  };
}
