// The gate in front of every /api/v1 request: key check (401), quota reservation (429), settle, usage.
import { AccountStore } from '../access/account-store.ts';
import { ensureStateDir } from '../access/store-file.ts';
import { isWellFormedKey, keyDigest } from '../access/key-format.ts';
import type { ScryptParams } from '../access/secrets.ts';
import type { AccountService } from '../access/types.ts';
import { silentLogger, type Logger } from '../log.ts';
import { Counters, type DayCount, type MonthCount } from './counters.ts';
import { CalendarCache, type DayKey, type MonthWindow } from './month.ts';
import { resolveQuotas, type Plan } from './plans.ts';
import { NO_HEADERS, QuotaRejections, rateLimitHeaders, UNAUTHORIZED, type Headers, type Rejection } from './responses.ts';
import type { CompactHook } from './usage-compact.ts';
import { NULL_SINK, UsageLog, type LogWrite, type UsageLogStatus, type UsageSink } from './usage-log.ts';
import { createUsageService, type UsageService } from './usage-service.ts';

export interface GateOptions {
  /** State directory, or 'memory' for nothing on disk. */
  readonly state: string | 'memory';
  /** ms since epoch; drives quota months and daily counters. Default Date.now. */
  readonly clock?: () => number;
  /** Quota overrides; null = unlimited. */
  readonly plans?: Partial<Record<Plan, number | null>>;
  readonly log?: Logger;
  /** Group-commit period of the usage log; default 1000 (CONTRACT 4: at least every second). */
  readonly flushIntervalMs?: number;
  /** Period of the account store stamp check, besides fs.watch; default 500 (changes apply within 2 s). */
  readonly watchIntervalMs?: number;
  /** scrypt cost for passwords and sealed keys made through `accounts`; tests lower it. */
  readonly scrypt?: ScryptParams;
  /** The usage log's write function; tests inject failures (ENOSPC). */
  readonly usageLogWrite?: LogWrite;
  /** Online compaction threshold floor in bytes (default 1 MiB); tests lower it. */
  readonly usageLogCompactFloorBytes?: number;
  /** Called at each stage of an online compaction; tests copy the files there as a crash would leave them. */
  readonly usageLogCompactHook?: CompactHook;
}

/** An admitted request's reservation; settle it exactly once. */
export class Ticket {
  /** @internal */ open = true;
  /** @internal */ constructor(
    readonly account: string,
    readonly day: DayKey,
    /** @internal */ readonly month: MonthCount,
    /** @internal */ readonly daily: DayCount,
    /** @internal */ readonly total: number | null,
    /** @internal */ readonly window: MonthWindow,
  ) {}
}

export type Admission = { readonly ok: true; readonly ticket: Ticket; readonly headers: Headers } | Rejection;

export interface Gate {
  /** Synchronous and cheap: format + checksum, SHA-256, Map lookup, reserve one unit. */
  admit(apiKey: string | undefined): Admission;
  /** Once per admitted request: a 200 keeps the unit; anything else gives it back. */
  settle(ticket: Ticket, status: number): void;
  /** The RateLimit headers as they stand now: after a settle that gave the unit back, `r` is as before. */
  quotaHeaders(ticket: Ticket): Headers;
  readonly accounts: AccountService;
  readonly usage: UsageService;
  /** The usage log's backlog for /metrics; null in 'memory' state. */
  usageLogStatus(): UsageLogStatus | null;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export async function openGate(options: GateOptions): Promise<Gate> {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? silentLogger;
  const quotas = resolveQuotas(options.plans);
  const calendar = new CalendarCache(clock());
  const counters = new Counters();
  const accounts = await AccountStore.open({ state: options.state, clock, log, ...(options.scrypt ? { scrypt: options.scrypt } : {}) });
  let usageLog: UsageLog | null = null;
  if (options.state !== 'memory') {
    await ensureStateDir(options.state); // 0700: accounts, usage and the TLS key live here
    const opened = await UsageLog.open(options.state, counters, {
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      log,
      ...(options.usageLogWrite ? { write: options.usageLogWrite } : {}),
      ...(options.usageLogCompactFloorBytes !== undefined ? { compactFloorBytes: options.usageLogCompactFloorBytes } : {}),
      ...(options.usageLogCompactHook ? { compactHook: options.usageLogCompactHook } : {}),
    });
    usageLog = opened.log;
    log.info('usage log replayed', { files: opened.replay.files, records: opened.replay.records, dropped: opened.replay.dropped.length });
    accounts.watch(options.watchIntervalMs ?? 500);
  }
  const sink: UsageSink = usageLog ?? NULL_SINK;
  const rejections = new QuotaRejections();

  function admit(apiKey: string | undefined): Admission {
    if (typeof apiKey !== 'string' || !isWellFormedKey(apiKey)) return UNAUTHORIZED;
    const account = accounts.lookup(keyDigest(apiKey));
    if (!account) return UNAUTHORIZED;
    const now = clock();
    const month = calendar.month(now); // read on every call: a new month needs no restart
    const day = calendar.dayOf(now);
    const usage = counters.of(account.id);
    const count = usage.month(month.key);
    const total = quotas[account.plan];
    if (total !== null && count.used + count.reserved >= total) {
      // In-flight reservations count: N + 50 concurrent requests can never take N + 1 units.
      usage.day(day).rejected++;
      sink.add(account.id, day, 0, 1);
      return rejections.get(account.plan, total, month, now);
    }
    count.reserved++;
    const ticket = new Ticket(account.id, day, count, usage.day(day), total, month);
    const headers = total === null ? NO_HEADERS : rateLimitHeaders(total, total - count.used - count.reserved, month, now);
    return { ok: true, ticket, headers };
  }

  function settle(ticket: Ticket, status: number): void {
    if (!ticket.open) return; // a double settle must not give back a unit twice
    ticket.open = false;
    ticket.month.reserved--;
    if (status === 200) {
      ticket.month.used++;
      ticket.daily.success++;
      sink.add(ticket.account, ticket.day, 1, 0);
    } else {
      ticket.daily.rejected++;
      sink.add(ticket.account, ticket.day, 0, 1);
    }
  }

  const usage = createUsageService({ accounts, counters, quotas, calendar, clock, sink });
  let closing: Promise<void> | null = null;
  return {
    admit,
    settle,
    quotaHeaders: (t) => (t.total === null ? NO_HEADERS : rateLimitHeaders(t.total, t.total - t.month.used - t.month.reserved, t.window, clock())),
    accounts,
    usage,
    usageLogStatus: () => usageLog?.status() ?? null,
    flush: () => usageLog?.flush() ?? Promise.resolve(),
    close() {
      closing ??= (async () => {
        accounts.close();
        await usageLog?.close();
      })();
      return closing;
    },
  };
}
