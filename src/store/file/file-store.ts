// The Store of one state directory (or of memory): the embedded default of CONTRACT 9. Accounts in
// accounts.json, sessions in sessions.json, counters in this process replayed from the usage log,
// login throttles here.
import type { Logger } from '../../log.ts';
import { silentLogger } from '../../log.ts';
import type { ScryptParams } from '../../access/secrets.ts';
import type { Moment } from '../../quota/month.ts';
import { resolveQuotas, type Plan, type Quota } from '../../access/plans.ts';
import type { Durability, MonthFigures, QuotaStore, Store, StoreDeployment, StoreMetric, UsageFigures } from '../types.ts';
import { AccountStore } from './account-store.ts';
import { Counters } from './counters.ts';
import { FileQuota } from './quota.ts';
import { ReplayAudit } from './replay-audit.ts';
import { FileSessions } from './sessions.ts';
import { ensureStateDir } from '../state-dir.ts';
import { MemoryThrottle } from './throttle.ts';
import type { CompactHook } from './usage-compact.ts';
import { NULL_SINK, UsageLog, type LogWrite, type UsageLogStatus } from './usage-log.ts';
import { replayUsage } from './usage-replay.ts';

export interface FileStoreOptions {
  /** State directory, or 'memory' for nothing on disk. */
  readonly state: string;
  /**
   * 'server': the one writer of the usage log, following account changes made by other processes;
   * 'command': a CLI command beside it, which changes accounts but only reads usage (replayed on
   * first use, without repairing a tail the server may be writing).
   */
  readonly role: 'server' | 'command';
  readonly clock?: () => number;
  readonly log?: Logger;
  /** The quota per plan, for the start's sanity check of the usage log; default SPEC 8's. */
  readonly quotas?: Readonly<Record<Plan, Quota>>;
  /** Which 200s wait for their usage record to be on disk; default 'auto' (CONTRACT 4). */
  readonly durability?: Durability;
  /** Group-commit period of the interval mode; default 1000 (CONTRACT 4: at least every second). */
  readonly flushIntervalMs?: number;
  /** How long a strict request waits for a refusing disk before it gets 503; default 5000. */
  readonly strictTimeoutMs?: number;
  /** Period of the account store stamp check, besides fs.watch; default 500 (changes apply within 2 s). */
  readonly watchIntervalMs?: number;
  /** scrypt cost for passwords and sealed keys; tests lower it. */
  readonly scrypt?: ScryptParams;
  /** The usage log's write function; tests inject failures (ENOSPC). */
  readonly usageLogWrite?: LogWrite;
  /** Online compaction threshold floor in bytes (default 1 MiB); tests lower it. */
  readonly usageLogCompactFloorBytes?: number;
  /** Called at each stage of an online compaction; tests copy the files there as a crash would leave them. */
  readonly usageLogCompactHook?: CompactHook;
}

export async function openFileStore(options: FileStoreOptions): Promise<Store> {
  const log = options.log ?? silentLogger;
  const memory = options.state === 'memory';
  const accounts = await AccountStore.open({ state: options.state, log, ...(options.clock ? { clock: options.clock } : {}), ...(options.scrypt ? { scrypt: options.scrypt } : {}) });
  const counters = new Counters();
  const durability = options.durability ?? 'auto';
  let usageLog: UsageLog | null = null;
  let quota: QuotaStore;
  /** A command's view of the counters; closed with the store (it may hold the usage log for state import). */
  let replayed: ReplayedQuota | null = null;
  if (memory) {
    quota = new FileQuota(counters, NULL_SINK, durability);
  } else if (options.role === 'server') {
    await ensureStateDir(options.state); // 0700: accounts, usage and the TLS key live here
    const quotas = options.quotas ?? resolveQuotas();
    const audit = new ReplayAudit((id) => {
      const view = accounts.view(id);
      return view === undefined ? undefined : quotas[view.plan];
    });
    const opened = await UsageLog.open(options.state, counters, {
      observeReplay: audit.observe,
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      log,
      ...(options.strictTimeoutMs !== undefined ? { strictTimeoutMs: options.strictTimeoutMs } : {}),
      ...(options.usageLogWrite ? { write: options.usageLogWrite } : {}),
      ...(options.usageLogCompactFloorBytes !== undefined ? { compactFloorBytes: options.usageLogCompactFloorBytes } : {}),
      ...(options.usageLogCompactHook ? { compactHook: options.usageLogCompactHook } : {}),
    });
    usageLog = opened.log;
    log.info('usage log replayed', { files: opened.replay.files, records: opened.replay.records, dropped: opened.replay.dropped.length });
    audit.report(log, { accountsFile: accounts.path!, accountsFound: accounts.found, months: opened.replay.months });
    quota = new FileQuota(counters, usageLog, durability);
    accounts.watch(options.watchIntervalMs ?? 500);
  } else {
    replayed = new ReplayedQuota(options.state, log);
    quota = replayed;
  }
  const sessions = new FileSessions({ state: options.state, log, ...(options.clock ? { clock: options.clock } : {}) });
  const throttle = new MemoryThrottle();
  let closing: Promise<void> | null = null;
  const deployment: StoreDeployment = { mode: memory ? 'memory' : 'files', node: '' };
  return {
    kind: memory ? 'memory' : 'file',
    accounts,
    lookupKey: (digest) => accounts.lookup(digest),
    onKeysChanged: (listener) => accounts.onChange(listener),
    quota,
    sessions,
    throttle,
    exportAccounts: () => accounts.records(),
    importAccounts: (records, replace) => accounts.importRecords(records, replace),
    status: () => ({ healthy: true, metrics: usageLog ? usageLogMetrics(usageLog.status()) : [], deployment }),
    flush: () => usageLog?.flush() ?? Promise.resolve(),
    close() {
      closing ??= (async () => {
        accounts.close();
        await sessions.close();
        await usageLog?.close();
        await replayed?.close();
      })();
      return closing;
    },
  };
}

/**
 * The CLI's view of usage: replayed from the files on first use. Only `state import` writes, as the
 * usage log's one writer: it takes the writer lock, so it refuses while a server runs on the directory.
 */
class ReplayedQuota implements QuotaStore {
  private replayed: Promise<unknown> | null = null;
  private readonly counters = new Counters();
  private readonly inner = new FileQuota(this.counters, NULL_SINK, 'interval');
  private writer: Promise<{ log: UsageLog; quota: FileQuota }> | null = null;
  constructor(
    private readonly state: string,
    private readonly log: Logger,
  ) {}

  reserve(): never {
    throw new Error('a command does not serve requests');
  }

  settle(): never {
    throw new Error('a command does not serve requests');
  }

  async report(account: string, at: Moment): Promise<UsageFigures> {
    this.replayed ??= replayUsage(this.state, this.counters, { repair: false, log: silentLogger });
    await this.replayed;
    return this.inner.report(account, at);
  }

  async set(): Promise<void> {
    throw new Error('usage counters are read-only here; set them through the running server');
  }

  async restore(account: string, month: MonthFigures, at: Moment): Promise<void> {
    this.writer ??= (async () => {
      await ensureStateDir(this.state);
      const counters = new Counters();
      const { log } = await UsageLog.open(this.state, counters, { flushIntervalMs: 1000, log: this.log });
      return { log, quota: new FileQuota(counters, log, 'interval') };
    })();
    await (await this.writer).quota.restore(account, month, at);
  }

  async close(): Promise<void> {
    if (this.writer) await (await this.writer.catch(() => null))?.log.close();
  }
}

/** The usage log's series for /metrics (CONTRACT 4 and issue 13: lag, batches, sync times, waiters). */
export function usageLogMetrics(s: UsageLogStatus, now = Date.now()): StoreMetric[] {
  // Lag: how old the oldest undurable record can be (a crash in `interval` would lose at most this much).
  const lag = s.pendingRecords === 0 || s.lastFlushMs === null ? 0 : Math.max(0, (now - s.lastFlushMs) / 1000);
  const m = (name: string, type: 'gauge' | 'counter', help: string, value: number): StoreMetric => ({ name: `celebrity_api_usage_log_${name}`, type, help, value });
  return [
    m('lag_seconds', 'gauge', 'Time since the last usage-log flush while records wait; 0 when all is durable.', lag),
    m('pending_records', 'gauge', 'Usage records not yet written and fsynced.', s.pendingRecords),
    m('flush_failures_total', 'counter', 'Usage-log flushes the disk refused (records are kept and retried).', s.flushFailures),
    m('commits_total', 'counter', 'Successful usage-log commits (write + fdatasync).', s.commits),
    m('committed_records_total', 'counter', 'Lines written by successful commits; per commit, the batch size in lines.', s.committedRecords),
    m('committed_requests_total', 'counter', 'Strict requests answered after a successful commit; per commit, the batch size in requests.', s.committedWaiters),
    m('commit_seconds_total', 'counter', 'Time spent in write + fdatasync by successful commits.', s.commitSeconds),
    m('commit_seconds_max', 'gauge', 'The longest successful commit since start.', s.commitSecondsMax),
    m('waiting_requests', 'gauge', 'Strict requests waiting for their usage record to be on disk.', s.waiting),
    m('withdrawn_total', 'counter', 'Strict requests answered 503 because the disk refused for too long.', s.withdrawn),
  ];
}
