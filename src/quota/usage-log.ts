// The usage log writer (CONTRACT 4): one writer, in-memory buffer, one write + fsync per file per tick, online compaction.
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireLock, LockBusyError, type Release } from '../access/lock-file.ts';
import type { Logger } from '../log.ts';
import type { Counters } from './counters.ts';
import type { DayKey, MonthKey } from './month.ts';
import { syncDir } from '../access/store-file.ts';
import { compactMonthYielding, compactUsage, replaceFile, type CompactHook } from './usage-compact.ts';
import { PendingRecords, type UsageRecord } from './usage-records.ts';
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
  /** A month file is compacted online once it exceeds max(4 x its size after the last compaction, this); default 1 MiB. */
  readonly compactFloorBytes?: number;
  /** Test hook into online compaction (see CompactHook). */
  readonly compactHook?: CompactHook;
}

/** What `/metrics` shows of the log (structurally http/metrics.ts UsageLogStatus). */
export interface UsageLogStatus {
  /** Lines accepted but not yet written and fsynced. */
  readonly pendingRecords: number;
  /** ms since epoch (wall clock) of the last successful flush, or null before the first. */
  readonly lastFlushMs: number | null;
  readonly flushFailures: number;
}

const COMPACT_FLOOR_BYTES = 1 << 20;

interface MonthFile {
  fh: FileHandle;
  /** End of the durable, complete lines; writes go here (positional, not O_APPEND). */
  size: number;
  /** A write or fsync failed after `size`: cut back there before writing again, so no half line stays. */
  dirty: boolean;
  /** Compact online past this size: a few times the compact form, so rewriting costs O(1) per appended byte. */
  compactAt: number;
  /** The file was renamed into place but the directory fsync failed: redo it before appending. */
  nameUnsynced: boolean;
}

export class UsageLog implements UsageSink {
  private readonly pending = new PendingRecords();
  /** Lines drained but not yet durable, per month: kept across failed ticks and retried. */
  private readonly unwritten = new Map<MonthKey, { text: string; records: number }>();
  private unwrittenRecords = 0;
  private lastFlushMs: number | null = null;
  private readonly files = new Map<MonthKey, MonthFile>();
  private chain: Promise<void> = Promise.resolve();
  private flushing = 0;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Flushes the disk refused since start (reported by /metrics). */
  private flushFailures = 0;

  private constructor(
    private readonly dir: string,
    private readonly options: UsageLogOptions,
    private readonly release: Release,
    /**
     * What the files replay to: fed each record as it is drained, on the flush path only. Online
     * compaction writes this, never the live counters, which run ahead of the files by what is pending.
     */
    private readonly durable: Counters,
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
        err.message = `the usage log in ${dir} is in use: ${err.message}; one server per state directory (a lock left by a crash on another host expires 15 s after its last heartbeat)`;
      }
      throw err;
    }
    try {
      const replay = await replayUsage(stateDir, counters, { repair: true, log: options.log });
      // Optional: a full log replays the same counters, so a failed compaction only costs start time.
      await compactUsage(replay.months, counters, options.log).catch((err: Error) =>
        options.log.warn('usage log compaction failed; keeping the full files', { error: err.message }),
      );
      await removeStaleTemps(dir);
      return { log: new UsageLog(dir, options, release, counters.copy()), replay };
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

  status(): UsageLogStatus {
    return { pendingRecords: this.pending.size + this.unwrittenRecords, lastFlushMs: this.lastFlushMs, flushFailures: this.flushFailures };
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
    const apply = (r: UsageRecord) => this.durable.apply(r);
    for (const [month, chunk] of this.pending.drain(apply)) {
      const before = this.unwritten.get(month);
      this.unwritten.set(month, before ? { text: before.text + chunk.text, records: before.records + chunk.records } : chunk);
      this.unwrittenRecords += chunk.records;
    }
    const months = [...this.unwritten.keys()].sort();
    try {
      for (const month of months) {
        const file = await this.file(month);
        if (file.nameUnsynced) {
          await syncDir(this.dir);
          file.nameUnsynced = false;
        }
        if (file.dirty) await file.fh.truncate(file.size);
        const chunk = this.unwritten.get(month)!;
        const data = Buffer.from(chunk.text, 'utf8');
        file.dirty = true;
        await (this.options.write ?? writeFully)(file.fh, data, file.size);
        await file.fh.sync();
        file.dirty = false;
        file.size += data.length;
        this.unwritten.delete(month);
        this.unwrittenRecords -= chunk.records;
      }
      this.lastFlushMs = Date.now();
    } catch (err) {
      this.flushFailures++;
      throw err;
    }
    // Here every file holds exactly what `durable` says (nothing unwritten), and no append can come
    // between the rewrite and the switch to the new file: they are on the same chain.
    for (const [month, file] of this.files) if (file.size > file.compactAt) await this.compact(month, file);
  }

  /** Online compaction (see replaceFile): a failure keeps the full file, which replays the same. */
  private async compact(month: MonthKey, file: MonthFile): Promise<void> {
    const path = join(this.dir, logFileName(month));
    const before = file.size;
    try {
      const text = await compactMonthYielding(this.durable, month);
      const size = Buffer.byteLength(text);
      const old = file.fh;
      await replaceFile(path, text, this.options.compactHook, (fh) => {
        // From the rename on, the old handle names an unlinked file: appends must go to the new one.
        file.fh = fh;
        file.size = size;
        file.dirty = false;
        file.nameUnsynced = true;
        old.close().catch(() => {});
      });
      file.nameUnsynced = false;
      file.compactAt = this.compactAt(size);
      this.options.log.info('usage log compacted', { file: path, bytes: before, now: size });
    } catch (err) {
      file.compactAt = Math.max(2 * file.size, file.compactAt); // retry once the file has doubled, not every tick (a full disk)
      this.options.log.warn('usage log compaction failed; appending to the full file', { file: path, error: (err as Error).message });
    }
  }

  private compactAt(size: number): number {
    return Math.max(4 * size, this.options.compactFloorBytes ?? COMPACT_FLOOR_BYTES);
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
    const size = (await fh.stat()).size;
    const file: MonthFile = { fh, size, dirty: false, compactAt: this.compactAt(size), nameUnsynced: false };
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

/** Temp files of a rewrite cut short by a crash: the month file beside each is whole. */
async function removeStaleTemps(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (name.startsWith('.usage-') && name.endsWith('.jsonl.compact')) await unlink(join(dir, name)).catch(() => {});
  }
}
