// The usage log writer (CONTRACT 4): one writer, in-memory buffer, one write + fsync per file per tick.
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireLock, LockBusyError, type Release } from '../access/lock-file.ts';
import type { Logger } from '../log.ts';
import type { Counters } from './counters.ts';
import type { DayKey, MonthKey } from './month.ts';
import { compactUsage } from './usage-compact.ts';
import { PendingRecords } from './usage-records.ts';
import { logFileName, replayUsage, USAGE_DIR, type ReplayResult } from './usage-replay.ts';

/** Where request accounting goes: the log, or nowhere in 'memory' state. Both calls are synchronous. */
export interface UsageSink {
  add(id: string, day: DayKey, success: number, rejected: number): void;
  set(id: string, day: DayKey, used: number): void;
}

export const NULL_SINK: UsageSink = { add() {}, set() {} };

/** Writes `data` at `position`, completely, or throws. Injectable so tests can simulate ENOSPC. */
export type LogWrite = (fh: FileHandle, data: Buffer, position: number) => Promise<void>;

export const writeFully: LogWrite = async (fh, data, position) => {
  for (let done = 0; done < data.length; ) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position + done);
    done += bytesWritten;
  }
};

export interface UsageLogOptions {
  readonly flushIntervalMs: number;
  readonly log: Logger;
  readonly write?: LogWrite;
}

interface MonthFile {
  readonly fh: FileHandle;
  /** End of the durable, complete lines; writes go here (positional, not O_APPEND). */
  size: number;
  /** A write or fsync failed after `size`: cut back there before writing again, so no half line stays. */
  dirty: boolean;
}

export class UsageLog implements UsageSink {
  private readonly pending = new PendingRecords();
  /** Lines drained but not yet durable, per month: kept across failed ticks and retried. */
  private readonly unwritten = new Map<MonthKey, string>();
  private readonly files = new Map<MonthKey, MonthFile>();
  private chain: Promise<void> = Promise.resolve();
  private flushing = 0;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  readonly stats = { flushes: 0, failures: 0, bytes: 0, lastError: null as string | null };

  private constructor(
    private readonly dir: string,
    private readonly options: UsageLogOptions,
    private readonly release: Release,
  ) {
    this.timer = setInterval(() => this.tick(), options.flushIntervalMs);
    this.timer.unref();
  }

  /** Takes the writer lock, replays (cutting torn tails), and starts the group-commit timer. */
  static async open(stateDir: string, counters: Counters, options: UsageLogOptions): Promise<{ log: UsageLog; replay: ReplayResult }> {
    const dir = join(stateDir, USAGE_DIR);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let release: Release;
    try {
      // One writer: a second server on the same state would interleave lines and double-count. The
      // heartbeat lets a lock left by a crashed server on another host (new container) expire.
      release = await acquireLock(join(dir, 'writer.lock'), { timeoutMs: 0, staleMs: 15_000, heartbeatMs: 5_000 });
    } catch (err) {
      if (err instanceof LockBusyError) {
        throw new Error(`the usage log in ${dir} is in use: ${err.message}; one server per state directory (a lock left by a crash on another host expires 15 s after its last heartbeat)`);
      }
      throw err;
    }
    try {
      const replay = await replayUsage(stateDir, counters, { repair: true, log: options.log });
      // Optional: a full log replays the same counters, so a failed compaction only costs start time.
      await compactUsage(replay.months, counters, options.log).catch((err: Error) =>
        options.log.warn('usage log compaction failed; keeping the full files', { error: err.message }),
      );
      return { log: new UsageLog(dir, options, release), replay };
    } catch (err) {
      await release();
      throw err;
    }
  }

  add(id: string, day: DayKey, success: number, rejected: number): void {
    this.pending.add(id, day, success, rejected);
  }

  set(id: string, day: DayKey, used: number): void {
    this.pending.set(id, day, used);
  }

  private tick(): void {
    // A slow disk must not pile up flushes; what arrives meanwhile goes with the next tick.
    if (this.flushing > 0 || (this.pending.size === 0 && this.unwritten.size === 0)) return;
    this.flush().catch((err: NodeJS.ErrnoException) => {
      this.options.log.error('usage log write failed; still serving, keeping the records in memory and retrying', {
        error: err.message,
        code: err.code,
      });
    });
  }

  /** Makes everything recorded so far durable; rejects if the disk refuses (records are kept). */
  flush(): Promise<void> {
    const run = () => this.writePending();
    this.flushing++;
    const result = this.chain.then(run, run).finally(() => this.flushing--);
    this.chain = result.catch(() => {});
    return result;
  }

  private async writePending(): Promise<void> {
    for (const [month, text] of this.pending.drain()) this.unwritten.set(month, (this.unwritten.get(month) ?? '') + text);
    const months = [...this.unwritten.keys()].sort();
    try {
      for (const month of months) {
        const file = await this.file(month);
        if (file.dirty) await file.fh.truncate(file.size);
        const data = Buffer.from(this.unwritten.get(month)!, 'utf8');
        file.dirty = true;
        await (this.options.write ?? writeFully)(file.fh, data, file.size);
        await file.fh.sync();
        file.dirty = false;
        file.size += data.length;
        this.unwritten.delete(month);
        this.stats.bytes += data.length;
      }
      this.stats.flushes++;
    } catch (err) {
      this.stats.failures++;
      this.stats.lastError = (err as Error).message;
      throw err;
    }
  }

  private async file(month: MonthKey): Promise<MonthFile> {
    const known = this.files.get(month);
    if (known) return known;
    const path = join(this.dir, logFileName(month));
    let fh: FileHandle;
    let created = false;
    try {
      fh = await open(path, 'r+');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      fh = await open(path, 'wx', 0o600);
      created = true;
    }
    if (created) await syncDir(this.dir); // the new name must survive a crash, not just its bytes
    const file: MonthFile = { fh, size: (await fh.stat()).size, dirty: false };
    this.files.set(month, file);
    return file;
  }

  /** Flushes, stops the timer, closes files and releases the writer lock; rejects if the last flush failed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    let failure: unknown = null;
    await this.flush().catch((err) => (failure = err));
    for (const file of this.files.values()) await file.fh.close().catch(() => {});
    this.files.clear();
    await this.release();
    if (failure) {
      this.options.log.error('usage log: the last records could not be written at shutdown', { error: (failure as Error).message });
      throw failure;
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
