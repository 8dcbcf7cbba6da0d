// Quotas on Redis with `serve --threads N` (CONTRACT 9 and 10): each worker thread has its own
// connection to Redis and reserves there as one instance does (the reserve script, one round trip,
// no message to the main thread on the way), so N threads count against Redis like N instances and
// a plan's quota stays exact across threads and instances alike. What stays on the main thread:
// - the keys: its replica of the accounts follows every change made anywhere (CONTRACT 9's 2 s); a
//   thread asks it once per key what account, plan and quota a key is, keeps the answer, and drops
//   it when the replica changes (the generation counter of shared-quota.ts, read on every request),
//   so a rotation or a revocation acts on the next request once the replica has it;
// - the usage log, its one writer: a thread reports each request it counted into its ring in shared
//   memory (ring.ts), read in batches, and readable still once it has died (an answer it sent is
//   logged);
// - a dead thread's reservations: its ledger in shared memory (units reserved and not settled, per
//   account and parity of the day) is given back by the main thread, so nothing unsent stays
//   counted; a reservation whose answer the thread never read stays counted (fail closed, as a
//   give-back that was lost);
// - health and metrics for the whole process: each thread reports its connection's state and
//   series every STATUS_EVERY_MS; the main thread adds them to its own (status()).
// - the log lines of a loss of Redis and of its return (a failover): every thread sees the same
//   event, so the main thread writes the first thread's line and drops the same line from the
//   others for SAME_LINE_MS (its own connection, which follows the accounts, writes its own).
import type { MessagePort } from 'node:worker_threads';
import { isWellFormedKey } from '../access/key-format.ts';
import type { Plan, Quota } from '../access/plans.ts';
import type { Admitter } from '../http/app.ts';
import type { Logger } from '../log.ts';
import { StoreUnavailableError, type CountedRemotely, type QuotaTicket, type StoreMetric, type StoreStatus } from '../quota/counting-store.ts';
import type { Gate } from '../quota/gate.ts';
import { CalendarCache } from '../quota/month.ts';
import { NO_HEADERS, QuotaRejections, rateLimitHeaders, UNAUTHORIZED, UNAVAILABLE, type Headers } from '../quota/responses.ts';
import type { UsageSink } from '../store/file/usage-log.ts';
import { RedisLink } from '../store/redis/link.ts';
import { RedisQuota } from '../store/redis/quota.ts';
import { Ticket } from '../store/types.ts';
import { FULL, QUIET, REPORT, Reports, type Bell } from './ring.ts';
import { GENERATION, growable, KeyCache, Outbox, type Growable } from './shared-quota.ts';

/** What a worker needs: how to connect, the key generation, its ledger and its report ring. */
export interface RedisQuotaSetup {
  readonly connection: CountedRemotely['connection'];
  readonly control: SharedArrayBuffer;
  /** Units reserved and not settled: two counters per account (the day's parity), written by the worker alone. */
  readonly held: SharedArrayBuffer;
  readonly ring: SharedArrayBuffer;
  readonly heads: SharedArrayBuffer;
  /** The pool's bell (ring.ts Bell). */
  readonly bell: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** A thread's connection as it last reported it: healthy, the node that answered last, its series. */
type ThreadStatus = [healthy: boolean, node: string, metrics: StoreMetric[]];
/** A warn or error line of a thread's connection (a loss, a return, a failover). */
type Said = [level: 'warn' | 'error', msg: string, fields: Record<string, unknown>];
/**
 * Worker -> main: keys to resolve [id, key, ...], reports that did not fit in the ring (REPORT
 * numbers each), now and then its status, and its connection's warn and error lines.
 */
type Up = [asks: (number | string)[], reports: number[], status?: ThreadStatus, said?: Said];
/** Main -> worker: resolved keys [id, slot (-1: no such key), account, plan, quota (-1: unlimited), ...]. */
type Down = [resolved: (number | string)[], done: number[]];

const UNLIMITED = -1;
const DAY_MS = 86_400_000;
/** How often a thread reports its connection's state and series. */
const STATUS_EVERY_MS = 250;
/** How long a thread waits before it tries to open its connection again. */
const RETRY_MS = 1000;
/** Accounts a process can tell apart in the ledgers (two counters each). */
const MAX_ACCOUNTS = 1 << 21;
const FIRST_ACCOUNTS = 1 << 9;

/** A line a thread's connection writes is written once for all threads within this time. */
const SAME_LINE_MS = 10_000;

/** The status a dead thread's reservations are given back with: counted as nothing, like a 304. */
const NOT_SENT = 304;

/** The series whose sum over threads makes no sense: the largest is the process's. */
const isMax = (m: StoreMetric) => m.name.endsWith('_max');
const seriesKey = (m: StoreMetric) => (m.labels ? `${m.name}{${m.labels}}` : m.name);

/** The main thread's side: the accounts the threads know by number, their ledgers, rings and statuses. */
export class RedisTable {
  private readonly control = new Int32Array(new SharedArrayBuffer(4));
  private readonly slots = new Map<string, number>();
  private readonly accounts: string[] = [];
  private readonly ledgers = new Set<Growable>();
  private ledgerBytes = FIRST_ACCOUNTS * 8;
  private readonly calendar: CalendarCache;
  /** Each live thread's last report, by thread index. */
  private readonly statuses = new Map<number, ThreadStatus>();
  /** The counters of threads that died (their last report), so the process's sums never go back. */
  private readonly retired = new Map<string, number>();
  private lastNode = '';
  /** When each line of the threads' connections was last written. */
  private readonly written = new Map<string, number>();

  private constructor(
    private readonly gate: Gate,
    private readonly remote: CountedRemotely,
    private readonly clock: () => number,
    private readonly log: Logger,
  ) {
    this.calendar = new CalendarCache(clock());
    gate.store.onKeysChanged!(() => Atomics.add(this.control, GENERATION, 1));
  }

  /** The table for `gate`, or null when its store is not one every thread can reach itself. */
  static for(gate: Gate, clock: () => number, log: Logger): RedisTable | null {
    const remote = gate.store.quota.remote;
    if (remote === undefined || gate.store.onKeysChanged === undefined) return null;
    return new RedisTable(gate, remote, clock, log);
  }

  /** The shared memory and the link of worker `thread`. `release()` when it has exited: its reports are read, its reservations given back. */
  link(port: MessagePort, thread: number, bell: Bell): { setup: Omit<RedisQuotaSetup, 'port'>; release(): void } {
    const ledger = growable(this.ledgerBytes, MAX_ACCOUNTS * 8);
    const held = new Int32Array(ledger);
    this.ledgers.add(ledger);
    const out = new Outbox(port);
    const memory = Reports.memory(bell.memory);
    const reports = new Reports(memory.ring, memory.heads, memory.bell);
    const count = (slot: number, status: number, now: number) => this.remote.record(this.accounts[slot]!, this.calendar.moment(now).day, status, now);
    const read = () => reports.read(count);
    bell.add(read);
    // Every message counts as the bell (it may carry it, alone or with the rest): Bell.listen.
    bell.listen(port, ([asks, spilled, status, said]: Up) => {
      if (asks.length === 0 && spilled.length === 0 && status === undefined && said === undefined) return;
      if (said !== undefined) this.said(thread, said);
      read(); // written before this message was posted
      for (let i = 0; i < spilled.length; i += REPORT) count(spilled[i]!, spilled[i + 1]!, spilled[i + 2]!);
      for (let i = 0; i < asks.length; i += 2) this.resolve(out, asks[i] as number, asks[i + 1] as string);
      if (status !== undefined) {
        this.statuses.set(thread, status);
        if (status[1] !== '') this.lastNode = status[1];
      }
    });
    return {
      setup: { connection: this.remote.connection, control: this.control.buffer as SharedArrayBuffer, held: ledger, ...memory },
      release: () => {
        read(); // what it wrote before it died: answers that may have left
        bell.delete(read);
        this.ledgers.delete(ledger);
        this.retire(thread);
        this.giveBack(held);
        port.close();
      },
    };
  }

  /** A thread's connection lost Redis or has it back: the first thread to say so is written, the others' same line is not. */
  private said(thread: number, [level, msg, fields]: Said): void {
    const now = Date.now();
    if (now - (this.written.get(msg) ?? -Infinity) < SAME_LINE_MS) return;
    this.written.set(msg, now);
    this.log[level](msg, { ...fields, thread, of: 'the first thread to say it' });
  }

  private resolve(out: Outbox, id: number, key: string): void {
    out.touch();
    const holder = this.gate.holder(key);
    if (holder === undefined) {
      out.a.push(id, -1, '', '', 0);
      return;
    }
    out.a.push(id, this.slot(holder.id), holder.id, holder.plan, holder.total ?? UNLIMITED);
  }

  /** The number of `account` in every ledger, made on first use. */
  private slot(account: string): number {
    let slot = this.slots.get(account);
    if (slot !== undefined) return slot;
    slot = this.accounts.length;
    if (slot >= MAX_ACCOUNTS) throw new Error(`more than ${MAX_ACCOUNTS} accounts in one process`);
    if ((slot + 1) * 8 > this.ledgerBytes) {
      // Every ledger grows first: a worker learns a number only from this thread, after this.
      this.ledgerBytes = Math.min(this.ledgerBytes * 2, MAX_ACCOUNTS * 8);
      for (const ledger of this.ledgers) ledger.grow(this.ledgerBytes);
    }
    this.accounts.push(account);
    this.slots.set(account, slot);
    return slot;
  }

  /**
   * A dead thread's units reserved and not settled: their answers never left, so each goes back
   * (counted as nothing, like a 304). The ledger keeps the day's parity: a request is in flight for
   * seconds, so that is today or yesterday.
   */
  private giveBack(held: Int32Array): void {
    const now = this.clock();
    const today = Math.floor(now / DAY_MS);
    for (let i = 0; i < held.length; i++) {
      const n = held[i]!;
      if (n <= 0) continue;
      const day = (today & 1) === (i & 1) ? today : today - 1;
      const at = new CalendarCache(day * DAY_MS).moment(day * DAY_MS);
      for (let k = 0; k < n; k++) this.gate.store.quota.settle(new Ticket(this.accounts[i >> 1]!, null, null, at, now), NOT_SENT);
    }
  }

  /** A thread has exited: its counters join the retired sums, its health no longer counts. */
  private retire(thread: number): void {
    const last = this.statuses.get(thread);
    this.statuses.delete(thread);
    if (last === undefined) return;
    for (const m of last[2]) {
      if (m.type !== 'counter') continue;
      const key = seriesKey(m);
      this.retired.set(key, (this.retired.get(key) ?? 0) + m.value);
    }
  }

  /**
   * The process's store status: `own` (the main thread's connection: the keys, the give-backs of
   * dead threads) with every thread's connection. Healthy while all are; the counters summed over
   * threads (those of threads that died included), the slowest answer the largest; and per thread
   * whether its connection answers and how many of its calls failed.
   */
  status(own: StoreStatus): StoreStatus {
    const sums = new Map(this.retired);
    const max = new Map<string, number>();
    let healthy = own.healthy;
    const perThread: StoreMetric[] = [];
    for (const [thread, [up, , metrics]] of [...this.statuses].sort((a, b) => a[0] - b[0])) {
      healthy &&= up;
      let errors = 0;
      for (const m of metrics) {
        const key = seriesKey(m);
        if (isMax(m)) max.set(key, Math.max(max.get(key) ?? 0, m.value));
        else if (m.type === 'counter') sums.set(key, (sums.get(key) ?? 0) + m.value);
        if (m.name === 'celebrity_api_store_errors_total') errors += m.value;
      }
      perThread.push(
        { name: 'celebrity_api_store_thread_up', type: 'gauge', help: "1 while this thread's own connection to Redis answers (--threads); 0: its requests get 503.", value: up ? 1 : 0, labels: `thread="${thread}"` },
        { name: 'celebrity_api_store_thread_errors_total', type: 'counter', help: "Calls on this thread's own connection to Redis that failed or passed the timeout (--threads).", value: errors, labels: `thread="${thread}"` },
      );
    }
    const metrics = own.metrics.map((m) => {
      const key = seriesKey(m);
      if (isMax(m)) return { ...m, value: Math.max(m.value, max.get(key) ?? 0) };
      if (m.type === 'counter' && sums.has(key)) return { ...m, value: m.value + sums.get(key)! };
      return m;
    });
    // The node that answered last: most calls are the threads' (one a request), the main thread's are the keys'.
    const deployment = own.deployment && this.lastNode !== '' ? { mode: own.deployment.mode, node: this.lastNode } : own.deployment;
    return { healthy, metrics: [...metrics, ...perThread], ...(deployment ? { deployment } : {}) };
  }
}

/** An admitted request: the store's ticket, and where it is in the thread's ledger. */
class Held {
  constructor(
    readonly ticket: Ticket,
    readonly quota: RedisQuota,
    /** Its counter in the ledger: the account's, for the parity of its day. */
    readonly ledger: number,
  ) {}
}

interface Holding {
  readonly slot: number;
  readonly account: string;
  readonly plan: Plan;
  readonly total: Quota;
}

type Admission = Awaited<ReturnType<Admitter['admit']>>;

function unavailable(err: unknown): Admission {
  if (err instanceof StoreUnavailableError) return UNAVAILABLE;
  throw err;
}

/** Worker side: the pipeline's Admitter, reserving on the thread's own connection. */
export class RedisGate implements Admitter {
  // A fixed-length view over the growable ledger, remade when the main thread gives an account a
  // number past its end (it grows every ledger before): V8 checks a length-tracking view's length
  // through its runtime on every access (see SharedGate); and a fixed view would drop a write past
  // its end without a word, so the remake is what keeps a dead thread's units given back.
  private held: Int32Array;
  private readonly out: Outbox;
  private readonly reports: Reports;
  private readonly keys: KeyCache<Holding>;
  /** Account -> its number in the ledgers and reports (accounts only: a made-up key never gets here). */
  private readonly numbers = new Map<string, number>();
  private readonly calendar: CalendarCache;
  private readonly rejections = new QuotaRejections();
  private link: RedisLink | null = null;
  private quota: RedisQuota | null = null;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  /** The connection's log: its warn and error lines go to the main thread, which writes one per event for all threads. */
  private readonly linkLog: Logger = {
    enabled: (level) => this.log.enabled?.(level) ?? true,
    debug: (msg, fields) => this.log.debug(msg, fields),
    info: (msg, fields) => this.log.info(msg, fields),
    warn: (msg, fields) => this.setup.port.postMessage([[], [], undefined, ['warn', msg, fields ?? {}]] satisfies Up),
    error: (msg, fields) => this.setup.port.postMessage([[], [], undefined, ['error', msg, fields ?? {}]] satisfies Up),
  };
  /** What the store counted, to the main thread's usage log through the ring (a refusal: 429). */
  private readonly sink: UsageSink = {
    add: (account, _day, success, _rejected, at) => {
      const slot = this.numbers.get(account)!;
      const status = success > 0 ? 200 : 429;
      const written = this.reports.write(slot, status, at, 0);
      if (written === FULL) this.out.b.push(slot, status, at, 0);
      if (written !== QUIET) this.out.touch(); // the bell, or the report itself
    },
    set: () => {},
    withdraw: () => {},
    durable: () => null,
  };

  private constructor(
    private readonly setup: RedisQuotaSetup,
    private readonly clock: () => number,
    private readonly log: Logger,
  ) {
    const fixed = () => new Int32Array(setup.held, 0, setup.held.byteLength / 4);
    this.held = fixed();
    this.out = new Outbox(setup.port);
    this.keys = new KeyCache(new Int32Array(setup.control), this.out);
    this.reports = new Reports(setup.ring, setup.heads, setup.bell);
    this.calendar = new CalendarCache(clock());
    setup.port.on('message', ([resolved]: Down) => {
      for (let i = 0; i < resolved.length; i += 5) {
        const slot = resolved[i + 1] as number;
        if (slot * 2 + 1 >= this.held.length) this.held = fixed(); // both of its day's parities
        const total = resolved[i + 4] as number;
        const h = slot < 0 ? null : { slot, account: resolved[i + 2] as string, plan: resolved[i + 3] as Plan, total: total === UNLIMITED ? null : total };
        if (h !== null) this.numbers.set(h.account, slot);
        this.keys.answered(resolved[i] as number, h);
      }
    });
    this.timer = setInterval(() => this.report(), STATUS_EVERY_MS);
    this.timer.unref();
  }

  /**
   * Opens the thread's connection. A first attempt that fails (Redis down while a thread is
   * replaced) does not stop the thread: it answers 503 and tries again every RETRY_MS.
   */
  static async open(setup: RedisQuotaSetup, clock: () => number, log: Logger): Promise<RedisGate> {
    const gate = new RedisGate(setup, clock, log);
    if (!(await gate.connect())) void gate.retry();
    return gate;
  }

  private async connect(): Promise<boolean> {
    try {
      const link = await RedisLink.open({ ...this.setup.connection, log: this.linkLog });
      if (this.closed) {
        await link.close();
        return true;
      }
      this.link = link;
      this.quota = new RedisQuota(link, this.sink);
      this.report();
      return true;
    } catch (err) {
      this.log.warn('thread: cannot connect to Redis yet; answering 503 and trying again', { error: (err as Error).message });
      this.report();
      return false;
    }
  }

  private async retry(): Promise<void> {
    while (!this.closed) {
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      if (this.closed || (await this.connect())) return;
    }
  }

  /** Whether this thread's connection answers (false: its /api/v1 answers 503). */
  get healthy(): boolean {
    return this.link !== null && this.link.healthy;
  }

  private report(): void {
    const link = this.link;
    const metrics = link === null ? [] : [...link.metrics(), { name: 'celebrity_api_store_settles_lost_total', type: 'counter' as const, help: '', value: this.quota!.lostSettles }];
    this.setup.port.postMessage([[], [], [this.healthy, link?.lastAnswered() ?? '', metrics]] satisfies Up);
  }

  admit(apiKey: string | undefined): ReturnType<Admitter['admit']> {
    if (typeof apiKey !== 'string') return UNAUTHORIZED;
    const generation = this.keys.current();
    const known = this.keys.get(apiKey);
    if (known !== undefined) return this.reserve(known);
    if (!isWellFormedKey(apiKey)) return UNAUTHORIZED;
    return this.keys.ask(apiKey, generation, UNAUTHORIZED, (h) => this.reserve(h));
  }

  private reserve(h: Holding): Admission | Promise<Admission> {
    const quota = this.quota;
    if (quota === null) return UNAVAILABLE; // not connected yet
    const now = this.clock();
    const at = this.calendar.moment(now);
    return quota.reserve(h.account, h.total, at, now).then((t) => {
      if (t === null) return this.rejections.get(h.plan, h.total!, at.month, now);
      const ledger = h.slot * 2 + (Math.floor(now / DAY_MS) & 1);
      this.held[ledger]!++; // this thread's own ledger: only it writes there while it lives
      return { ok: true, ticket: new Held(t as Ticket, quota, ledger), headers: h.total === null ? NO_HEADERS : rateLimitHeaders(h.total, t.remaining!, at.month, now) };
    }, unavailable);
  }

  settle(ticket: unknown, status: number): null {
    const t = ticket as Held;
    if (!t.ticket.open) return null; // a double settle must not give a unit back twice
    this.held[t.ledger]!--;
    return t.quota.settle(t.ticket, status); // the log through the ring; a give-back on this connection
  }

  quotaHeaders(ticket: unknown, status: number): Headers {
    const t = (ticket as Held).ticket as QuotaTicket;
    if (t.total === null) return NO_HEADERS;
    return rateLimitHeaders(t.total, status === 200 ? t.remaining! : t.remaining! + 1, t.at.month, this.clock());
  }

  /** Closes the connection (the thread drains, then ends): Redis sees it go at once, not at its timeout. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.report();
    await this.link?.close();
  }
}
