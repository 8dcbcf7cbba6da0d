// Rebuilds counters from the usage log at start: replays every line, drops a torn tail, refuses a bad middle.
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log.ts';
import type { Counters } from './counters.ts';
import type { MonthKey } from '../../quota/month.ts';
import { parseRecord, type UsageRecord } from './usage-records.ts';

export const USAGE_DIR = 'usage';
export const LOG_NAME_RE = /^usage-(\d{4}-\d{2})\.jsonl$/;
export const logFileName = (month: MonthKey) => `usage-${month}.jsonl`;

/** A damaged line followed by intact ones: not a crash artefact, so the start stops (issue 3). */
export class UsageLogError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    reason: string,
  ) {
    super(`${file}:${line}: bad usage log line (${reason}). The lines after it are intact, so this is not a torn write from a crash; repair or remove that line, then start again`);
    this.name = 'UsageLogError';
  }
}

export interface ScanResult {
  readonly records: number;
  /** Bytes of complete, valid lines: where the file is cut when the tail is torn. */
  readonly validBytes: number;
  /** Bytes after validBytes: 0 for a clean file. */
  readonly tornBytes: number;
  /** 1-based number of the first dropped line, or null. */
  readonly tornLine: number | null;
}

/**
 * Streaming line scanner. A line is committed only with its '\n' (the writer ends every write with
 * one), so a cut anywhere drops at most the line it falls in. The last complete line may also be
 * garbage (a block of zeros after a power loss) and is dropped too; garbage with lines after it is not.
 */
export class LogScanner {
  private carry: Buffer[] = [];
  private carryBytes = 0;
  private offset = 0; // bytes consumed into complete lines
  private valid = 0;
  private lineNo = 0;
  private records = 0;
  private bad: { line: number; reason: string; start: number } | null = null;

  constructor(
    private readonly file: string,
    private readonly month: MonthKey,
    private readonly onRecord: (record: UsageRecord, line: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const line = this.carryBytes ? Buffer.concat([...this.carry, piece]) : piece;
      this.carry = [];
      this.carryBytes = 0;
      this.line(line);
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.carry.push(chunk.subarray(start));
      this.carryBytes += chunk.length - start;
    }
  }

  private line(bytes: Buffer): void {
    const lineStart = this.offset;
    this.lineNo++;
    this.offset += bytes.length + 1;
    if (this.bad) throw new UsageLogError(this.file, this.bad.line, this.bad.reason);
    const parsed = parseRecord(bytes.toString('utf8'), this.month);
    if (typeof parsed === 'string') {
      this.bad = { line: this.lineNo, reason: parsed, start: lineStart };
      return;
    }
    this.onRecord(parsed, this.lineNo);
    this.records++;
    this.valid = this.offset;
  }

  end(): ScanResult {
    if (this.bad && this.carryBytes > 0) throw new UsageLogError(this.file, this.bad.line, this.bad.reason);
    const total = this.offset + this.carryBytes;
    const tornLine = this.bad ? this.bad.line : this.carryBytes > 0 ? this.lineNo + 1 : null;
    return { records: this.records, validBytes: this.valid, tornBytes: total - this.valid, tornLine };
  }
}

export interface ReplayOptions {
  /** Truncate torn tails (the writer at start). A reader beside a running server must not. */
  readonly repair: boolean;
  readonly log: Logger;
  /** Sees every record with its file and 1-based line, after it is applied (sanity checks at start). */
  readonly observe?: (record: UsageRecord, file: string, line: number) => void;
}

export interface ReplayResult {
  readonly files: number;
  readonly records: number;
  readonly dropped: readonly { file: string; bytes: number; line: number }[];
  /** Lines replayed per month file (what compaction weighs against the counters' size), and its size. */
  readonly months: readonly { month: MonthKey; file: string; records: number; bytes: number }[];
}

/** Replays `<state>/usage/usage-YYYY-MM.jsonl` in month order into `counters`. */
export async function replayUsage(stateDir: string, counters: Counters, options: ReplayOptions): Promise<ReplayResult> {
  const dir = join(stateDir, USAGE_DIR);
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const logs = names.filter((n) => LOG_NAME_RE.test(n)).sort();
  let records = 0;
  const dropped: { file: string; bytes: number; line: number }[] = [];
  const months: { month: MonthKey; file: string; records: number; bytes: number }[] = [];
  for (const name of logs) {
    const file = join(dir, name);
    const month = LOG_NAME_RE.exec(name)![1]!;
    const observe = options.observe;
    const scanner = new LogScanner(file, month, observe ? (r, line) => (counters.apply(r), observe(r, file, line)) : (r) => counters.apply(r));
    const fh = await open(file, options.repair ? 'r+' : 'r');
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        scanner.push(Buffer.from(buf.subarray(0, bytesRead))); // copy: the scanner may keep a tail
      }
      const result = scanner.end();
      records += result.records;
      months.push({ month, file, records: result.records, bytes: result.validBytes + result.tornBytes });
      if (result.tornBytes > 0) {
        dropped.push({ file, bytes: result.tornBytes, line: result.tornLine ?? 0 });
        if (options.repair) {
          await fh.truncate(result.validBytes);
          await fh.sync();
          options.log.warn('usage log: dropped a torn last line left by a crash', { file, line: result.tornLine, bytes: result.tornBytes });
        }
      }
    } finally {
      await fh.close();
    }
  }
  return { files: logs.length, records, dropped, months };
}
