// Shrinks month files to one line per account and day instead of one per tick: at start, and online.
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { syncDir } from './store-file.ts';
import type { Logger } from '../../log.ts';
import type { AccountUsage, Counters } from './counters.ts';
import { dayKey, type MonthKey } from '../../quota/month.ts';

/** Where a rewrite stands when the hook is called: the temp file is durable / it has the log's name. */
export type CompactStage = 'written' | 'renamed';
/** Test hook: called at each stage (to copy the files as a crash would leave them, or to fail). */
export type CompactHook = (stage: CompactStage, file: string) => void | Promise<void>;

/**
 * One account's lines of a month: a delta line per day, then a set line where the month's used
 * count differs from its days' successes (UsageService.set). Replays to exactly `usage`'s month.
 */
function accountLines(id: string, usage: AccountUsage, month: MonthKey): { text: string; lines: number } {
  let text = '';
  let lines = 0;
  let successes = 0;
  const count = usage.months.get(month);
  // The month's last use rides on the line of the day it happened in.
  const lastDay = count && count.lastMs > 0 ? dayKey(count.lastMs) : null;
  for (const day of usage.daysOf(month)) {
    const line = day.date === lastDay ? { a: id, d: day.date, s: day.success, r: day.rejected, t: count!.lastMs } : { a: id, d: day.date, s: day.success, r: day.rejected };
    text += JSON.stringify(line) + '\n';
    successes += day.success;
    lines++;
  }
  const used = count?.used ?? 0;
  if (used !== successes) {
    text += JSON.stringify({ a: id, d: `${month}-01`, u: used }) + '\n';
    lines++;
  }
  return { text, lines };
}

/** The same counters as the month's log, in the fewest lines. */
export function compactMonth(counters: Counters, month: MonthKey): { text: string; lines: number } {
  let text = '';
  let lines = 0;
  for (const [id, usage] of counters.entries()) {
    const part = accountLines(id, usage, month);
    text += part.text;
    lines += part.lines;
  }
  return { text, lines };
}

// About 50 µs per account with a month of days: slices of ~2 ms.
const ACCOUNTS_PER_SLICE = 32;

/**
 * compactMonth for a running server: yields to the event loop every few dozen accounts so requests
 * are not held up. `counters` must not change meanwhile (the writer's own copy, on its flush path).
 */
export async function compactMonthYielding(counters: Counters, month: MonthKey): Promise<string> {
  const parts: string[] = [];
  let n = 0;
  for (const [id, usage] of counters.entries()) {
    parts.push(accountLines(id, usage, month).text);
    if (++n % ACCOUNTS_PER_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return parts.join('');
}

/** The temp file a rewrite of `file` goes through; replay ignores it (not a usage-*.jsonl name). */
export const compactTempName = (file: string) => join(dirname(file), `.${basename(file)}.compact`);

/**
 * Replaces `file` with `text`, crash-safe: temp file, fsync, rename, fsync of the directory. A crash
 * before the rename leaves the old file; after it, the new one; the caller makes both replay the same.
 * Returns the new file, open for writing (positional writes continue at `text`'s length).
 * `renamed` is called once the name points at the new file, even if the directory fsync then fails.
 */
export async function replaceFile(file: string, text: string, hook?: CompactHook, renamed?: (fh: FileHandle) => void): Promise<FileHandle> {
  const tmp = compactTempName(file);
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(text);
    await fh.sync();
    await hook?.('written', file);
    await rename(tmp, file);
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  renamed?.(fh);
  await hook?.('renamed', file);
  await syncDir(dirname(file));
  return fh;
}

/** At start: rewrites a file holding several times more lines than its compact form. */
export async function compactUsage(
  months: readonly { month: MonthKey; file: string; records: number }[],
  counters: Counters,
  log: Logger,
): Promise<number> {
  let rewritten = 0;
  for (const { month, file, records } of months) {
    const compact = compactMonth(counters, month);
    if (records <= 4 * compact.lines + 64) continue;
    let opened: FileHandle | null = null;
    try {
      await replaceFile(file, compact.text, undefined, (fh) => (opened = fh)); // a crash before the rename leaves the full log, which replays the same
    } finally {
      await (opened as FileHandle | null)?.close();
    }
    log.info('usage log compacted', { file, lines: records, now: compact.lines });
    rewritten++;
  }
  return rewritten;
}
