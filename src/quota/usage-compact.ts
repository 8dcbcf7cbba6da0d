// Shrinks month files at start: one line per account and day instead of one per tick, so replay stays fast.
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../log.ts';
import type { Counters } from './counters.ts';
import type { MonthKey } from './month.ts';

/**
 * The same counters as the month's log, in the fewest lines: a delta line per account and day, then
 * a set line where the month's used count differs from its days' successes (UsageService.set).
 */
export function compactMonth(counters: Counters, month: MonthKey): { text: string; lines: number } {
  let text = '';
  let lines = 0;
  for (const [id, usage] of counters.entries()) {
    let successes = 0;
    for (const day of usage.daysOf(month)) {
      text += JSON.stringify({ a: id, d: day.date, s: day.success, r: day.rejected }) + '\n';
      successes += day.success;
      lines++;
    }
    const used = usage.months.get(month)?.used ?? 0;
    if (used !== successes) {
      text += JSON.stringify({ a: id, d: `${month}-01`, u: used }) + '\n';
      lines++;
    }
  }
  return { text, lines };
}

/** Rewrites a file when it holds several times more lines than its compact form (crash-safe: temp + rename). */
export async function compactUsage(
  months: readonly { month: MonthKey; file: string; records: number }[],
  counters: Counters,
  log: Logger,
): Promise<number> {
  let rewritten = 0;
  for (const { month, file, records } of months) {
    const compact = compactMonth(counters, month);
    if (records <= 4 * compact.lines + 64) continue;
    const tmp = join(dirname(file), `.${basename(file)}.compact`);
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(compact.text);
      await fh.sync();
    } catch (err) {
      await fh.close();
      await unlink(tmp).catch(() => {});
      throw err;
    }
    await fh.close();
    await rename(tmp, file); // a crash before this leaves the full log, which replays the same
    const dir = await open(dirname(file), 'r');
    await dir.sync().finally(() => dir.close());
    log.info('usage log compacted', { file, lines: records, now: compact.lines });
    rewritten++;
  }
  return rewritten;
}
