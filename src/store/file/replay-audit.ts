// What the start of a file store says about damaged state (issue 15): a usage log that names
// accounts accounts.json does not have, a month counted past its plan's quota, an emptied month file.
// Warnings naming file and line, not refusals: each has an innocent cause the operator can judge.
import { monthOfDay, type MonthKey } from '../../quota/month.ts';
import type { Quota } from '../../access/plans.ts';
import type { Logger } from '../../log.ts';
import type { UsageRecord } from './usage-records.ts';

/** Where a fact was first seen: `file:line`. */
type Where = string;

export class ReplayAudit {
  private readonly used = new Map<string, number>(); // account + month -> running count
  private readonly over = new Map<string, { account: string; month: MonthKey; quota: number; at: Where }>();
  private readonly unknown = new Map<string, Where>();

  /** @param quotaOf the quota of a known account's plan; undefined for an account that does not exist. */
  constructor(private readonly quotaOf: (account: string) => Quota | undefined) {}

  observe = (record: UsageRecord, file: string, line: number): void => {
    const quota = this.quotaOf(record.a);
    if (quota === undefined) {
      if (!this.unknown.has(record.a)) this.unknown.set(record.a, `${file}:${line}`);
      return;
    }
    const month = monthOfDay(record.d);
    const key = record.a + ' ' + month;
    const before = this.used.get(key) ?? 0;
    const now = 'u' in record ? record.u : 'x' in record ? Math.max(0, before - record.x) : before + record.s;
    this.used.set(key, now);
    if (quota !== null && now > quota && !this.over.has(key)) this.over.set(key, { account: record.a, month, quota, at: `${file}:${line}` });
  };

  /** Logs what the replay showed, once, at start. */
  report(log: Logger, context: { accountsFile: string; accountsFound: boolean; months: readonly { file: string; records: number; bytes: number }[] }): void {
    for (const m of context.months) {
      if (m.bytes === 0) log.warn('usage log file is empty: if it held counts, they are lost; restore it from a backup if you have one', { file: m.file });
    }
    if (this.unknown.size > 0) {
      const first = [...this.unknown].slice(0, 5).map(([account, at]) => ({ account, at }));
      if (!context.accountsFound) {
        log.error('accounts.json is missing but the usage log names accounts: was it deleted or moved? Every key is refused until it is restored', { file: context.accountsFile, accounts: this.unknown.size, first });
      } else {
        log.warn('the usage log names accounts that accounts.json does not have (a replaced or damaged accounts.json?)', { file: context.accountsFile, accounts: this.unknown.size, first });
      }
    }
    for (const o of this.over.values()) {
      log.warn('usage log counts a month past its plan\'s quota: a plan changed during the month, a usage set, or a damaged line', { account: o.account, month: o.month, quota: o.quota, at: o.at });
    }
  }
}
