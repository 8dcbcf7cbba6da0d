// The usage log writer (CONTRACT 4): one writer, in-memory buffer, one write + fsync per file per
// commit, online compaction. Two ways to commit: a timer tick (`interval`), and group commit for
// requests that wait for their record to be on disk before they are answered (`strict`).
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireLock, LockBusyError, type Release } from './lock-file.ts';
import type { Logger } from '../../log.ts';
import type { Counters } from './counters.ts';
import type { DayKey, MonthKey } from '../../quota/month.ts';
import { syncDir } from './store-file.ts';
import { compactMonthYielding, compactUsage, replaceFile, type CompactHook } from './usage-compact.ts';
import { PendingRecords, type UsageRecord } from './usage-records.ts';
import { logFileName, replayUsage, USAGE_DIR, type ReplayOptions, type ReplayResult } from './usage-replay.ts';

/** Where request accounting goes: the log, or nowhere in 'memory' state. Every call is synchronous. */
export interface UsageSink {
  /** `at`: the request's time in ms (the record's last-use `t`). */
  add(id: string, day: DayKey, success: number, rejected: number, at: number): void;
  set(id: string, day: DayKey, used: number): void;
  /** `n` successes of `day` that were never answered with a 200 after all (a thread died before sending them): see UsageRecord. */
  withdraw(id: string, day: DayKey, n: number): void;
  /**
   * A Promise that resolves once everything added so far is on disk, or null where nothing is ever
   * on disk. `strict` names the success the caller waits for: if the disk refuses for longer than the
   * strict timeout, the Promise rejects and that success is withdrawn (see UsageRecord).
   */
  durable(strict: { id: string; day: DayKey } | null): Promise<void> | null;
}

export const NULL_SINK: UsageSink = { add() {}, set() {}, withdraw() {}, durable: () => null };

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
  /** How long a strict request waits for a refusing disk before it is answered 503; default 5 s. */
  readonly strictTimeoutMs?: number;
  readonly log: Logger;
  readonly write?: LogWrite;
  /** A month file is compacted online once it exceeds max(4 x its size after the last compaction, this); default 1 MiB. */
  readonly compactFloorBytes?: number;
  /** Test hook into online compaction (see CompactHook). */
  readonly compactHook?: CompactHook;
  /** Sees every replayed record at start (ReplayOptions.observe). */
  readonly observeReplay?: ReplayOptions['observe'];
}

/** What `/metrics` shows of the log. */
export interface UsageLogStatus {
  /** Lines accepted but not yet written and fsynced. */
  readonly pendingRecords: number;
  /** ms since epoch (wall clock) of the last successful flush, or null before the first. */
  readonly lastFlushMs: number | null;
  readonly flushFailures: number;
  /** Successful commits, and the lines and strict requests they carried (batch sizes are the ratios). */
  readonly commits: number;
  readonly committedRecords: number;
  readonly committedWaiters: number;
  /** Seconds spent in write + fsync of successful commits, and the longest one. */
  readonly commitSeconds: number;
  readonly commitSecondsMax: number;
  /** Requests waiting for a commit right now (strict). */
  readonly waiting: number;
  /** Strict requests answered 503 because the disk refused for too long. */
  readonly withdrawn: number;
}

const COMPACT_FLOOR_BYTES = 1 << 20;
const STRICT_TIMEOUT_MS = 5_000;
/** While strict requests wait on a refusing disk, retry this often rather than once a tick. */
const STRICT_RETRY_MS = 100;

/** Strict requests answered by one commit: they share one Promise. */
class Batch {
  readonly promise: Promise<void>;
  resolve!: () => void;
  reject!: (err: Error) => void;
  /** The successes to withdraw if the batch gives up: account + day -> count. */
  readonly strict = new Map<string, { id: string; day: DayKey; n: number }>();
  waiters = 0;
  constructor(readonly openedMs: number) {
    this.promise = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.promise.catch(() => {}); // every waiter handles the rejection; this one keeps it from being unhandled
  }
}

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
  /** Strict waiters arriving now join this batch; it closes when a commit starts writing. */
  private open: Batch | null = null;
  /** Batches whose records are being written, or were refused and are waiting for a retry. */
  private writing: Batch[] = [];
  private retry: NodeJS.Timeout | null = null;
  private readonly stats = { commits: 0, committedRecords: 0, committedWaiters: 0, commitSeconds: 0, commitSecondsMax: 0, withdrawn: 0 };

  private constructor(
    private readonly dir: string,
    private readonly options: UsageLogOptions,
    private readonly release: Release,
    /**
     * What the files replay to: fed each record as it is drained, on the flush path only. Online
     * compaction writes this, never the live counters, which run ahead of the files by what is pending.
     */
    private readonly durableCounters: Counters,
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
      const replay = await replayUsage(stateDir, counters, { repair: true, log: options.log, ...(options.observeReplay ? { observe: options.observeReplay } : {}) });
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

  add(id: string, day: DayKey, success: number, rejected: number, at: number): void {
    this.pending.add(id, day, success, rejected, at);
  }

  set(id: string, day: DayKey, used: number): void {
    this.pending.set(id, day, used);
  }

  withdraw(id: string, day: DayKey, n: number): void {
    this.pending.withdraw(id, day, n);
  }

  /**
   * Group commit (CONTRACT 4, strict): the caller joins the open batch; a commit starts at once when
   * none is running, else right after the running one, so a batch holds what arrived during one
   * write + fsync (a few ms) and the throughput stays close to the interval mode's.
   */
  durable(strict: { id: string; day: DayKey } | null): Promise<void> {
    let batch = this.open;
    if (batch === null) {
      batch = this.open = new Batch(Date.now());
      if (this.flushing === 0 && this.retry === null) setImmediate(() => this.commit());
    }
    batch.waiters++;
    if (strict !== null) {
      const key = strict.id + '\u0000' + strict.day;
      const entry = batch.strict.get(key);
      if (entry) entry.n++;
      else batch.strict.set(key, { id: strict.id, day: strict.day, n: 1 });
    }
    return batch.promise;
  }

  status(): UsageLogStatus {
    let waiting = this.open?.waiters ?? 0;
    for (const b of this.writing) waiting += b.waiters;
    return { pendingRecords: this.pending.size + this.unwrittenRecords, lastFlushMs: this.lastFlushMs, flushFailures: this.flushFailures, waiting, ...this.stats };
  }

  private tick(): void {
    // A slow disk must not pile up flushes; what arrives meanwhile goes with the next tick.
    if (this.flushing > 0 || (this.pending.size === 0 && this.unwritten.size === 0)) return;
    this.flush().catch((err: NodeJS.ErrnoException) => this.refused(err));
  }

  private commit(): void {
    this.retry = null;
    if (this.flushing > 0 || this.closed) return; // the running flush starts the next commit when it ends
    this.flush().catch((err: NodeJS.ErrnoException) => this.refused(err));
  }

  /**
   * After every flush: strict requests that arrived meanwhile get the next commit at once; after a
   * refusal, batches that waited too long give up and the rest are retried soon, not at the next tick.
   */
  private afterFlush(ok: boolean): void {
    if (this.flushing > 0 || this.closed || this.retry !== null) return;
    if (!ok) this.expire();
    if (ok && this.open !== null) this.commit();
    else if (!ok && (this.open !== null || this.writing.length > 0)) this.retry = setTimeout(() => this.commit(), STRICT_RETRY_MS);
  }

  private lastRefusalLogMs = 0;
  private refused(err: NodeJS.ErrnoException): void {
    const now = Date.now();
    if (now - this.lastRefusalLogMs < 1000) return; // strict retries run 10 times a second: one line a second is enough
    this.lastRefusalLogMs = now;
    this.options.log.error('usage log write failed; still serving, keeping the records in memory and retrying', { error: err.message, code: err.code });
  }

  /** Strict batches that have waited past the timeout: answered 503, their successes withdrawn. */
  private expire(): void {
    const limit = Date.now() - (this.options.strictTimeoutMs ?? STRICT_TIMEOUT_MS);
    const keep: Batch[] = [];
    for (const batch of this.writing) {
      if (batch.openedMs > limit) {
        keep.push(batch);
        continue;
      }
      for (const { id, day, n } of batch.strict.values()) {
        this.pending.withdraw(id, day, n);
        this.stats.withdrawn += n;
      }
      batch.reject(new Error('the usage log could not be written to disk in time'));
    }
    this.writing = keep;
  }

  /** Makes everything recorded so far durable; rejects if the disk refuses (records are kept). */
  flush(): Promise<void> {
    const run = () => this.writePending();
    this.flushing++;
    const result = this.chain.then(run, run).finally(() => this.flushing--);
    this.chain = result.catch(() => {});
    result.then(
      () => this.afterFlush(true),
      () => this.afterFlush(false),
    );
    return result;
  }

  private async writePending(): Promise<void> {
    // The open batch's records are all in `pending` now: they go with this write.
    if (this.open !== null) {
      this.writing.push(this.open);
      this.open = null;
    }
    const started = process.hrtime.bigint();
    let records = 0;
    const apply = (r: UsageRecord) => {
      this.durableCounters.apply(r);
      records++;
    };
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
        await file.fh.datasync(); // the data and the size that finds it; an mtime is not worth a second seek
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
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.stats.commits++;
    this.stats.committedRecords += records;
    this.stats.commitSeconds += seconds;
    if (seconds > this.stats.commitSecondsMax) this.stats.commitSecondsMax = seconds;
    for (const batch of this.writing) {
      this.stats.committedWaiters += batch.waiters;
      batch.resolve();
    }
    this.writing = [];
    // Here every file holds exactly what `durable` says (nothing unwritten), and no append can come
    // between the rewrite and the switch to the new file: they are on the same chain.
    for (const [month, file] of this.files) if (file.size > file.compactAt) await this.compact(month, file);
  }

  /** Online compaction (see replaceFile): a failure keeps the full file, which replays the same. */
  private async compact(month: MonthKey, file: MonthFile): Promise<void> {
    const path = join(this.dir, logFileName(month));
    const before = file.size;
    try {
      const text = await compactMonthYielding(this.durableCounters, month);
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
    if (this.retry !== null) clearTimeout(this.retry);
    this.retry = null;
    let failure: unknown = null;
    await this.flush().catch((err) => (failure = err));
    // Whatever still waits could not be written: those requests get 503 (their records stay unwritten).
    for (const batch of this.open ? [...this.writing, this.open] : this.writing) batch.reject(new Error('the usage log could not be written at shutdown'));
    this.writing = [];
    this.open = null;
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
