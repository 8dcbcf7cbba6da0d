// Quotas exact across threads with no round trip on the way in (CONTRACT 4 and 10). Each account's
// month has a slot in shared memory holding its units taken (counted and reserved); a worker
// reserves a unit with one compare-and-swap on it, so N threads can never take more than the quota,
// and gives it back with one subtraction. What the month counts stays with the store on the main
// thread, the one writer of the usage log: each settled request is reported there through a ring in
// shared memory (ring.ts), read by the main thread in batches; a 200 that must wait for its record on disk (`--usage-durability
// strict`, and `auto` on a finite plan) waits for the main thread's word, as it does with one thread
// (group commit over every thread's records). What the worker keeps of the keys (key -> slot, plan)
// it drops whenever the store says a key changed, through a generation counter in shared memory read
// on every request, so a rotation or revocation acts on the next request. Used with the stores whose
// counters are this process's own (state directory, memory); with Redis each thread reserves on its
// own connection (redis-gate.ts), with the same key view and report ring as here.
import type { MessagePort } from 'node:worker_threads';
import { isWellFormedKey } from '../access/key-format.ts';
import type { Plan, Quota } from '../access/plans.ts';
import type { Admitter } from '../http/app.ts';
import { StoreUnavailableError, type CountedElsewhere } from '../quota/counting-store.ts';
import type { Gate } from '../quota/gate.ts';
import { CalendarCache, type Moment } from '../quota/month.ts';
import { NO_HEADERS, QuotaRejections, rateLimitHeaders, UNAUTHORIZED, type Headers } from '../quota/responses.ts';
import { FULL, QUIET, REPORT, Reports, type Bell } from './ring.ts';

/** Slots are never reused (one per account and month seen), so the table only grows, up to this. */
const MAX_SLOTS = 1 << 22;
const FIRST_SLOTS = 1 << 10;
/** control[GENERATION]: bumped by the main thread each time the keys change. */
export const GENERATION = 0;
/** A quota of null (unlimited) on the way: structured clone keeps null, but a flat number array is cheaper. */
const UNLIMITED = -1;

/** The shared memory a worker needs: the slots, the generation of the keys, and its own ledger. */
export interface SharedQuotaSetup {
  readonly taken: SharedArrayBuffer;
  readonly control: SharedArrayBuffer;
  /**
   * Units this worker has reserved and not sent, per slot: what goes back if it dies (a request not
   * settled, or a 200 waiting for its record on disk or for the main thread's word that it is).
   */
  readonly held: SharedArrayBuffer;
  /** 200s this worker sent after their record was on disk, per slot (only it writes there): the main thread withdraws those it said were durable and that never left. */
  readonly sent: SharedArrayBuffer;
  /** Its reports (REPORT numbers each) and [written, read] counts of them: see Reports. */
  readonly ring: SharedArrayBuffer;
  readonly heads: SharedArrayBuffer;
  /** The pool's bell (ring.ts Bell). */
  readonly bell: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** A report (ring.ts, REPORT numbers): slot, status, time (ms), wait id (0: nothing waits for it). */

/** A fixed-length Int32Array over all of `buffer` as it is now (see SharedGate: cheaper than a length-tracking one). */
const fixedView = (buffer: SharedArrayBuffer) => new Int32Array(buffer, 0, buffer.byteLength / 4);

export type Growable = SharedArrayBuffer & { grow(bytes: number): void; readonly maxByteLength: number };
/** A SharedArrayBuffer that grows in place (ES2024; the threads need Node 22.12 or later anyway). */
export function growable(bytes: number, max = MAX_SLOTS * 4): Growable {
  return new (SharedArrayBuffer as unknown as new (bytes: number, o: { maxByteLength: number }) => Growable)(bytes, { maxByteLength: max });
}

/**
 * Worker -> main, at most one message per turn: keys to resolve [id, key, ...] and the reports that
 * travel in the message (REPORT numbers each: a 200 that waits for the disk, or one the full ring did
 * not take). Both empty: the bell of the ring (ring.ts), which the main thread reads a little later.
 */
type Up = [asks: (number | string)[], reports: number[]];
/** Main -> worker: resolved keys [id, slot (-1: no such key), plan, total, month start, waits (0|1), ...] and waits done [id, ok (0|1), ...]. */
type Down = [resolved: (number | string)[], done: number[]];

/** Collects one side's messages of a turn and posts them together at its end. */
export class Outbox {
  a: (number | string)[] = [];
  b: number[] = [];
  private due = false;
  constructor(private readonly port: MessagePort) {}
  /** Called for every item of a turn (pushed here or not): the first schedules the post. */
  touch(): void {
    if (this.due) return;
    this.due = true;
    setImmediate(this.flush);
  }
  private readonly flush = () => {
    const m = [this.a, this.b];
    this.a = [];
    this.b = [];
    this.due = false;
    this.port.postMessage(m);
  };
}

/**
 * One slot's 200s said to be on disk (their 'done' posted), in the order told: the time of each from
 * the `base`-th on (those before it the thread has marked sent). The thread takes its 'done's in that
 * order and marks each sent as it sends it, so if it dies, the ones past its `sent` are the last ones
 * told, and each is withdrawn on its own day and month, as its record was counted.
 */
interface Told {
  base: number;
  readonly times: number[];
}

/** One worker as the main thread counts for it. */
interface Link {
  readonly out: Outbox;
  /** The thread's `sent` ledger (see SharedQuotaSetup), a fixed-length view remade when a slot is past it. */
  sent: Int32Array;
  readonly sentBuffer: SharedArrayBuffer;
  /** Per slot, the 200s told they may leave: set against the thread's `sent` if it dies. */
  readonly durable: Map<number, Told>;
  /** The thread has died: its 200s that reach the disk now are withdrawn, never sent. */
  dead: boolean;
}

/** The main thread's side: the slots, which account and month each counts, and the store they report to. */
export class QuotaTable {
  private readonly takenBuffer = growable(FIRST_SLOTS * 4);
  private readonly taken = new Int32Array(this.takenBuffer);
  private readonly control = new Int32Array(new SharedArrayBuffer(4));
  private readonly slots = new Map<string, number>();
  private readonly accounts: string[] = [];
  /** Each slot's quota as last resolved (a plan change resolves again): whether its 200s wait for the disk. */
  private readonly totals: Quota[] = [];
  private readonly ledgers = new Set<Growable>();
  /** Each live worker's reports, read on demand (catchUp). */
  private readonly readers = new Set<() => number>();
  private readonly calendar: CalendarCache;

  private constructor(
    private readonly gate: Gate,
    private readonly counting: CountedElsewhere,
    private readonly clock: () => number,
  ) {
    this.calendar = new CalendarCache(clock());
    // `usage set` and `state import` put a month's count: the shared one moves by as much, so the
    // units reserved meanwhile stay reserved.
    counting.moved = (account, month, delta) => {
      const slot = this.slots.get(account + '\u0000' + month);
      if (slot !== undefined) Atomics.add(this.taken, slot, delta);
    };
    gate.store.onKeysChanged!(() => Atomics.add(this.control, GENERATION, 1));
    counting.catchUp = () => {
      for (const read of this.readers) read();
    };
  }

  /** The table for `gate`, or null when its store counts elsewhere (Redis): the threads then ask the main thread. */
  static for(gate: Gate, clock: () => number): QuotaTable | null {
    const counting = gate.store.quota.elsewhere;
    if (counting === undefined || gate.store.onKeysChanged === undefined) return null;
    return new QuotaTable(gate, counting, clock);
  }

  /** The shared memory and the link of one new worker. `release()` gives back what it held unsettled (it died). */
  link(port: MessagePort, bell: Bell): { setup: Omit<SharedQuotaSetup, 'port'>; release(): void } {
    const ledger = growable(this.takenBuffer.byteLength);
    const held = new Int32Array(ledger);
    this.ledgers.add(ledger);
    const sentLedger = growable(this.takenBuffer.byteLength);
    const sent = new Int32Array(sentLedger);
    this.ledgers.add(sentLedger);
    const out = new Outbox(port);
    const link: Link = { out, sent: fixedView(sentLedger), sentBuffer: sentLedger, durable: new Map(), dead: false };
    const memory = Reports.memory(bell.memory);
    const reports = new Reports(memory.ring, memory.heads, memory.bell);
    const count = (slot: number, status: number, now: number, wait: number) => this.count(link, slot, status, now, wait);
    const reader = () => reports.read(count);
    bell.add(reader);
    this.readers.add(reader);
    // Every message counts as the bell (it may carry it): Bell.listen.
    bell.listen(port, ([asks, spilled]: Up) => {
      if (asks.length === 0 && spilled.length === 0) return;
      reader(); // written before this message was posted
      for (let i = 0; i < spilled.length; i += REPORT) count(spilled[i]!, spilled[i + 1]!, spilled[i + 2]!, spilled[i + 3]!);
      for (let i = 0; i < asks.length; i += 2) this.resolve(out, asks[i] as number, asks[i + 1] as string);
    });
    return {
      setup: { taken: this.takenBuffer, control: this.control.buffer as SharedArrayBuffer, held: ledger, sent: sentLedger, ...memory },
      release: () => {
        reader(); // what it wrote before it died: answers that may have left
        bell.delete(reader);
        this.readers.delete(reader);
        this.ledgers.delete(ledger);
        this.ledgers.delete(sentLedger);
        link.dead = true;
        // 200s on disk that it was told of and never sent: withdrawn (never counted unsent). Those
        // still on their way to the disk are withdrawn when they get there (count).
        for (const [slot, told] of link.durable) {
          const times = told.times;
          // Each on the day (and month) of its own record, consecutive ones of a day together.
          for (let i = Math.max(0, Atomics.load(sent, slot) - told.base); i < times.length; ) {
            const at = this.calendar.moment(times[i]!);
            let n = 1;
            while (i + n < times.length && this.calendar.moment(times[i + n]!) === at) n++;
            this.counting.withdraw(this.accounts[slot]!, at, n);
            i += n;
          }
        }
        // Reserved by requests not answered (never settled, or a 200 not sent): their units go back.
        for (let slot = 0; slot < held.length; slot++) {
          const n = Atomics.exchange(held, slot, 0);
          if (n !== 0) Atomics.sub(this.taken, slot, n);
        }
        port.close();
      },
    };
  }

  private resolve(out: Outbox, id: number, key: string): void {
    out.touch();
    const holder = this.gate.holder(key);
    if (holder === undefined) {
      out.a.push(id, -1, '', 0, 0, 0);
      return;
    }
    const now = this.clock();
    const at = this.calendar.moment(now);
    const slot = this.slot(holder.id, at);
    this.totals[slot] = holder.total;
    out.a.push(id, slot, holder.plan, holder.total ?? UNLIMITED, at.month.start, this.counting.waits(holder.total) ? 1 : 0);
  }

  /** The slot of `account`'s month, made on first use from what the store has counted. */
  private slot(account: string, at: Moment): number {
    const name = account + '\u0000' + at.month.key;
    let slot = this.slots.get(name);
    if (slot !== undefined) return slot;
    slot = this.accounts.length;
    if (slot >= MAX_SLOTS) throw new Error(`more than ${MAX_SLOTS} account months in one process`);
    if ((slot + 1) * 4 > this.takenBuffer.byteLength) {
      // Every worker's ledger grows first: a worker learns a slot only from this thread, after this.
      const bytes = Math.min(this.takenBuffer.byteLength * 2, MAX_SLOTS * 4);
      for (const ledger of this.ledgers) ledger.grow(bytes);
      this.takenBuffer.grow(bytes);
    }
    Atomics.store(this.taken, slot, this.counting.taken(account, at));
    this.accounts.push(account);
    this.slots.set(name, slot);
    return slot;
  }

  /** Tells the thread its 200 `wait` (of time `now`) may leave, and keeps it among those told, per slot (see release). */
  private durable(link: Link, slot: number, now: number, wait: number): void {
    let told = link.durable.get(slot);
    if (told === undefined) link.durable.set(slot, (told = { base: 0, times: [] }));
    else {
      // Those the thread has sent are done with: only the ones still on their way are kept (most
      // often none: the thread sent the last one before this one was on disk).
      if (slot >= link.sent.length) link.sent = fixedView(link.sentBuffer);
      const sent = Atomics.load(link.sent, slot);
      const drop = sent - told.base;
      if (drop === told.times.length) told.times.length = 0;
      else if (drop > 0) told.times.splice(0, drop);
      told.base = sent;
    }
    told.times.push(now);
    link.out.touch();
    link.out.b.push(wait, 1);
  }

  private count(link: Link, slot: number, status: number, now: number, wait: number): void {
    const out = link.out;
    let durable: Promise<void> | null = null;
    try {
      durable = this.counting.count(this.accounts[slot]!, this.totals[slot]!, this.calendar.moment(now), now, status);
    } catch (err) {
      durable = Promise.reject(err as Error);
    }
    if (wait === 0) {
      durable?.catch(() => {}); // nothing waits: the store has logged and withdrawn it
      return;
    }
    if (durable === null) return this.durable(link, slot, now, wait);
    durable.then(
      () => {
        // The thread died meanwhile: this 200 never leaves.
        if (link.dead) return this.counting.withdraw(this.accounts[slot]!, this.calendar.moment(now), 1);
        this.durable(link, slot, now, wait);
      },
      () => {
        if (link.dead) return; // withdrawn by the store; its unit went back with the thread's ledger
        out.touch();
        out.b.push(wait, 0);
      },
    );
  }
}

/** An admitted request's unit: in `slot` unless the plan is unlimited. */
class SharedTicket {
  open = true;
  constructor(
    readonly slot: number,
    readonly total: Quota,
    readonly remaining: number,
    readonly month: Moment['month'],
    readonly now: number,
    readonly waits: boolean,
  ) {}
}

interface Holding {
  readonly slot: number;
  readonly plan: Plan;
  readonly total: Quota;
  /** The month the slot counts (its first instant). */
  readonly month: number;
  readonly waits: boolean;
}

type Admission = Awaited<ReturnType<Admitter['admit']>>;

/** Presented keys kept per worker; cleared when full (a flood of made-up keys cannot grow it: those are not kept). */
const KEYS_MAX = 10_000;

/** A worker's presented keys, asked of the main thread, and what it answered for each, dropped whenever the keys change anywhere. */
export class KeyCache<H> {
  private readonly keys = new Map<string, H>();
  private generation = -1;
  private next = 0;
  private readonly asked = new Map<number, (h: H | null) => void>();

  constructor(
    private readonly control: Int32Array,
    private readonly out: Outbox,
  ) {}

  /** The keys' generation now, read once per request; what was kept under an older one is dropped. */
  current(): number {
    const generation = Atomics.load(this.control, GENERATION);
    if (generation !== this.generation) {
      this.keys.clear();
      this.generation = generation;
    }
    return generation;
  }

  get(apiKey: string): H | undefined {
    return this.keys.get(apiKey);
  }

  /**
   * Asks the main thread for a key not kept here (once per key until the keys change): `unknown` if
   * it names no account, else what `then` makes of the answer.
   */
  ask<A>(apiKey: string, generation: number, unknown: A, then: (h: H) => A | Promise<A>): Promise<A> {
    const id = ++this.next;
    this.out.touch();
    this.out.a.push(id, apiKey);
    return new Promise((resolve) => {
      this.asked.set(id, (h) => {
        if (h === null) return resolve(unknown);
        this.keep(apiKey, h, generation);
        resolve(then(h));
      });
    });
  }

  /** The main thread's answer to ask `id`. */
  answered(id: number, h: H | null): void {
    const answer = this.asked.get(id)!;
    this.asked.delete(id);
    answer(h);
  }

  /** Keeps an answer asked under `generation` only if no key changed since: else it may predate the change. */
  private keep(apiKey: string, h: H, generation: number): void {
    if (Atomics.load(this.control, GENERATION) !== generation || this.generation !== generation) return;
    if (this.keys.size >= KEYS_MAX) this.keys.clear();
    this.keys.set(apiKey, h);
  }
}

/** Worker side: the pipeline's Admitter, reserving in shared memory. */
export class SharedGate implements Admitter {
  // Fixed-length views over the growable buffers, remade when the main thread gives a slot past
  // their end (it grows the buffers before): V8 checks a length-tracking view's length with a call
  // into the runtime on every access, 4-5 times the cost of an Atomics.load on a fixed one.
  private taken!: Int32Array;
  private held!: Int32Array;
  private sent!: Int32Array;
  private readonly out: Outbox;
  private readonly reports: Reports;
  private readonly keys: KeyCache<Holding>;
  private next = 0;
  private readonly waiting = new Map<number, { resolve(): void; reject(err: Error): void }>();
  private readonly calendar: CalendarCache;
  private readonly rejections = new QuotaRejections();

  constructor(
    setup: SharedQuotaSetup,
    private readonly clock: () => number,
  ) {
    const fixed = (buffer: SharedArrayBuffer) => new Int32Array(buffer, 0, buffer.byteLength / 4);
    const view = () => {
      this.taken = fixed(setup.taken);
      this.held = fixed(setup.held);
      this.sent = fixed(setup.sent);
    };
    view();
    this.out = new Outbox(setup.port);
    this.keys = new KeyCache(new Int32Array(setup.control), this.out);
    this.reports = new Reports(setup.ring, setup.heads, setup.bell);
    this.calendar = new CalendarCache(clock());
    setup.port.on('message', ([resolved, done]: Down) => {
      for (let i = 0; i < resolved.length; i += 6) {
        const slot = resolved[i + 1] as number;
        if (slot >= this.taken.length || slot >= this.held.length || slot >= this.sent.length) view();
        const total = resolved[i + 3] as number;
        const h = slot < 0 ? null : { slot, plan: resolved[i + 2] as Plan, total: total === UNLIMITED ? null : total, month: resolved[i + 4] as number, waits: resolved[i + 5] === 1 };
        this.keys.answered(resolved[i] as number, h);
      }
      for (let i = 0; i < done.length; i += 2) {
        const w = this.waiting.get(done[i]!)!;
        this.waiting.delete(done[i]!);
        if (done[i + 1] === 1) w.resolve();
        else w.reject(new StoreUnavailableError('usage could not be recorded'));
      }
    });
  }

  admit(apiKey: string | undefined): ReturnType<Admitter['admit']> {
    if (typeof apiKey !== 'string') return UNAUTHORIZED;
    const generation = this.keys.current();
    const now = this.clock();
    const at = this.calendar.moment(now);
    const known = this.keys.get(apiKey);
    if (known !== undefined && known.month === at.month.start) return this.reserve(known, at, now);
    if (!isWellFormedKey(apiKey)) return UNAUTHORIZED;
    return this.keys.ask(apiKey, generation, UNAUTHORIZED, (h) => {
      const later = this.clock();
      return this.reserve(h, this.calendar.moment(later), later);
    });
  }

  private reserve(h: Holding, at: Moment, now: number): Admission {
    const taken = this.taken;
    if (h.total === null) {
      // Counted all the same: a plan changed to a finite one finds the month's count right.
      Atomics.add(taken, h.slot, 1);
      this.held[h.slot]!++;
      return { ok: true, ticket: new SharedTicket(h.slot, null, 0, at.month, now, h.waits), headers: NO_HEADERS };
    }
    for (;;) {
      const t = Atomics.load(taken, h.slot);
      if (t >= h.total) {
        this.report(h.slot, 429, now, 0);
        return this.rejections.get(h.plan, h.total, at.month, now);
      }
      if (Atomics.compareExchange(taken, h.slot, t, t + 1) !== t) continue; // another thread took one meanwhile
      this.held[h.slot]!++; // this thread's own ledger: only it writes there while it lives
      const remaining = h.total - t - 1;
      return { ok: true, ticket: new SharedTicket(h.slot, h.total, remaining, at.month, now, h.waits), headers: rateLimitHeaders(h.total, remaining, at.month, now) };
    }
  }

  /**
   * To the store: into the ring, and a message this turn if it rang the bell (ring.ts). A report that
   * a 200 waits on goes in the message, which the main thread reads at once, as one the full ring
   * did not take.
   */
  private report(slot: number, status: number, now: number, wait: number): void {
    const written = wait === 0 ? this.reports.write(slot, status, now, 0) : FULL;
    if (written === FULL) this.out.b.push(slot, status, now, wait);
    if (written !== QUIET) this.out.touch();
  }

  settle(ticket: unknown, status: number): Promise<void> | null {
    const t = ticket as SharedTicket;
    if (!t.open) return null; // a double settle must not give back a unit twice
    t.open = false;
    if (status !== 200) Atomics.sub(this.taken, t.slot, 1);
    if (status !== 200 || !t.waits) {
      this.held[t.slot]!--; // answered in this turn
      this.report(t.slot, status, t.now, 0);
      return null;
    }
    // The 200 leaves once its record is on disk (CONTRACT 4): the main thread says when. Its unit
    // stays held until then, and `sent` says it left, written in the turn that sends it (the
    // Promise's reactions run before this thread's next task): if the thread dies before, the main
    // thread gives the unit back and withdraws the record.
    const id = ++this.next;
    this.report(t.slot, status, t.now, id);
    return new Promise((resolve, reject) =>
      this.waiting.set(id, {
        resolve: () => {
          this.held[t.slot]!--;
          this.sent[t.slot]!++;
          resolve();
        },
        reject: (err) => {
          this.held[t.slot]!--;
          Atomics.sub(this.taken, t.slot, 1); // the store withdrew it: the unit goes back
          reject(err);
        },
      }),
    );
  }

  quotaHeaders(ticket: unknown, status: number): Headers {
    const t = ticket as SharedTicket;
    if (t.total === null) return NO_HEADERS;
    return rateLimitHeaders(t.total, status === 200 ? t.remaining : t.remaining + 1, t.month, this.clock());
  }
}
