// The worker threads of `serve --threads N` (CONTRACT 10), kept by the main thread: it starts them on
// one port, hands them the shared data, keeps the keys and is the one usage-log writer for all of
// them (shared-quota.ts; redis-gate.ts with Redis, where each thread reserves on its own connection;
// gate-link.ts otherwise), keeps the dashboard (mounted-link.ts), logs and observes what they report,
// replaces a thread that dies, and drains them all on close.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Snapshot } from '../data/snapshot.ts';
import type { Observer, Transport } from '../http/app.ts';
import type { FaultRule } from '../http/faults.ts';
import type { MountedSite } from '../http/mounted.ts';
import type { HealthReport } from '../http/respond.ts';
import type { Route } from '../http/router.ts';
import type { Limits } from '../http/server.ts';
import { packBest } from '../http/compress.ts';
import { adoptToken, dataToken, fixedTag } from '../http/conditional.ts';
import { openapiBody } from '../http/openapi.ts';
import { utcYmd } from '../data/fragments.ts';
import { LOG_LEVELS, type Logger } from '../log.ts';
import type { Gate } from '../quota/gate.ts';
import type { StoreStatus } from '../quota/counting-store.ts';
import type { CollectionName } from '../resources/types.ts';
import { serveGate } from './gate-link.ts';
import { QuotaTable } from './shared-quota.ts';
import { RedisTable } from './redis-gate.ts';
import { serveMounted } from './mounted-link.ts';
import { ANSWERED_STRIDE, ROUTES, type Observation, type ToMain, type ToWorker } from './messages.ts';
import { Bell, Reports } from './ring.ts';
import { revive, share, sharedBytes } from './share.ts';
import { PagePacker } from './pages.ts';
import type { Setup, WorkerSetup } from './worker.ts';

export interface PoolOptions {
  readonly threads: number;
  readonly host: string;
  readonly port: number;
  readonly httpPort: number | null;
  readonly tls: { readonly cert: string | Buffer; readonly key: string | Buffer } | null;
  readonly limits?: Partial<Limits>;
  readonly trustProxy: boolean;
  readonly corsOrigin: string | null;
  readonly faults: readonly FaultRule[];
  readonly gate: Gate;
  readonly dashboard: MountedSite | null;
  readonly log: Logger;
  readonly observe: Observer | null;
  /** The answers whose request `observe` reads: all, or those of 500 and above (the others come without it). */
  readonly observeDetail: 'all' | 'errors';
  /** The /metrics text for the main port (null: not served there), rendered on the main thread. */
  readonly metrics: () => string | null;
  readonly health: () => HealthReport;
  readonly clock: () => number;
}

export interface ThreadListener {
  readonly url: string;
  readonly transport: Transport;
}

/** How often the main thread sends health and the /metrics text to the workers. */
const STATE_EVERY_MS = 250;
/** A thread that dies this soon after its start is not restarted in a loop faster than this. */
const RESTART_DELAY_MS = 200;
/** How long past the drain deadline close() waits for a thread before it ends it. */
const DRAIN_GRACE_MS = 2000;
/** The most close() waits for every thread to stop accepting before it tells them to drain. */
const STOP_WAIT_MS = 1000;

/**
 * Starts a worker thread on worker.ts: from a checkout through tsx, registered in the thread as
 * bin/celebrity-api registers it in the process; from the package's bundle on dist/worker.js, which
 * `npm run build` makes beside dist/cli.js and dist/index.js.
 */
function spawnWorker(setup: WorkerSetup | null, transfer: readonly MessagePortLike[]): Worker {
  const options = { workerData: setup, transferList: transfer as never[] };
  if (!import.meta.url.endsWith('.ts')) {
    const bundled = new URL('./worker.js', import.meta.url);
    if (!existsSync(fileURLToPath(bundled))) throw new Error('--threads above 1: this build has no worker thread entry (dist/worker.js); the single executable serves on one thread only');
    return new Worker(bundled, options);
  }
  const entry = new URL('./worker.ts', import.meta.url).href;
  // tsx resolved from this file, not from the eval'd code, whose base is the working directory:
  // `serve --threads` runs from any directory (CONTRACT 6).
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => m.register()).then(() => import(${JSON.stringify(entry)}))`, { ...options, eval: true });
}
type MessagePortLike = import('node:worker_threads').MessagePort;

let document: { readonly body: Buffer; readonly tag: string } | null = null;

/**
 * The OpenAPI document and its tag, made once by the main thread and handed to every thread in its
 * setup: each thread made both at its start (the JSON of the document and a hash of its 119 KB, some
 * 15 ms of a thread's 65-75 ms of CPU until it listens, at 100k), and the main thread makes the
 * document anyway, to compress it once for all.
 */
function openapiDocument(): { readonly body: Buffer; readonly tag: string } {
  if (document === null) {
    const body = openapiBody();
    document = { body, tag: fixedTag('openapi', body) };
  }
  return document;
}

/**
 * Threads started before the data is loaded (Pool.prepare): each loads its modules (compiled by tsx
 * in a checkout, 0.2-0.6 s) while the main thread reads the data, and waits for its setup, which
 * Pool.start posts. Unreferenced until then, so a start that fails does not keep the process alive.
 */
export class Prepared {
  private readonly entries: { worker: Worker; fault: Error | null; gone: boolean }[];
  constructor(threads: number) {
    this.entries = Array.from({ length: threads }, () => {
      const entry = { worker: spawnWorker(null, []), fault: null as Error | null, gone: false };
      entry.worker.once('error', (err) => (entry.fault = err)).once('exit', () => (entry.gone = true)).unref();
      return entry;
    });
    // Made while the data loads (its reads under way), not once it is loaded, when the setups wait for it.
    setImmediate(openapiDocument);
  }

  /** Thread `index`, referenced again, or why it cannot be used (it failed before its setup). */
  take(index: number): Worker | Error {
    const e = this.entries[index]!;
    if (e.fault !== null || e.gone) return e.fault ?? new Error(`thread ${index} exited before its setup`);
    e.worker.ref();
    return e.worker;
  }

  /** The start failed before Pool.start: the threads end. */
  discard(): void {
    for (const e of this.entries) void e.worker.terminate();
  }
}

/**
 * Frees the copy of the data that was loaded before it was shared: every arena of it is garbage once
 * the threads have the shared one, but V8 collects it only when this thread's heap grows, and the
 * main thread allocates little, so without this it would stay resident for hours (as much again as
 * the data). `gc` is reached the way --expose-gc would give it; where that fails, the copy waits for V8.
 */
function collectGarbage(): void {
  try {
    v8.setFlagsFromString('--expose-gc');
    (vm.runInNewContext('gc') as () => void)();
  } catch {
    // not fatal: only the memory figure suffers
  }
}

/** What the observer gets for an answer that came without its request (its observeDetail says it is not read). */
const UNSEEN = { method: '', url: '', headers: {}, socket: { remoteAddress: '' } } as unknown as IncomingMessage;

/** A fake request that carries what the access log reads (method, target, peer, X-Forwarded-For). */
function arrived(o: Observation): IncomingMessage {
  if (o.length === 4) return UNSEEN;
  return { method: o[5], url: o[6], headers: o[8] === null ? {} : { 'x-forwarded-for': o[8] }, socket: { remoteAddress: o[7] } } as unknown as IncomingMessage;
}

function routeOf(o: Observation): Route {
  return (o[1] === '' ? { kind: o[0] } : { kind: o[0], collection: o[1] as CollectionName }) as Route;
}

interface Thread {
  worker: Worker;
  release(): void;
}

export class Pool {
  private readonly threads: (Thread | null)[];
  /** Every thread started and not yet exited, in its slot or not (close() ends them all). */
  private readonly started = new Set<Worker>();
  /**
   * The data as the threads see it (over the shared memory). Only this form is kept here: a thread
   * started later gets share(current), which finds every array already shared and copies none.
   */
  private current: Snapshot;
  /** The data token of `current` (conditional.ts), the same in every thread: a tag one thread gave revalidates on any. */
  private token = '';
  private listeners: ThreadListener[] = [];
  private ports: { main: number; http: number | null } = { main: 0, http: null };
  private closing = false;
  private readonly clockOffset = new Float64Array(new SharedArrayBuffer(8));
  /** One set of TLS session ticket keys for every thread, so a client resumes on whichever thread it reaches. */
  private readonly ticketKeys = randomBytes(48);
  private readonly timer: NodeJS.Timeout;
  private faults: readonly FaultRule[];
  /** The certificate and key in force (a SIGHUP renews them), or null for plain HTTP. */
  private tls: PoolOptions['tls'];
  /** Answers sent per thread (all its lives), written by each thread in its own slot. */
  private readonly answered: Float64Array;
  /** The quota counters in shared memory, or null with a store that counts elsewhere. */
  private readonly quota: QuotaTable | null;
  /** With Redis: each thread's own connection (redis-gate.ts); with neither, admissions go through the main thread (gate-link.ts). */
  private readonly redis: RedisTable | null;
  /** The OpenAPI document's best compressed forms, made once here for every thread (null until made). */
  private openapi: [Uint8Array, Uint8Array] | null = null;
  /** One bell for every thread's rings (ring.ts): under load the main thread looks every BELL_MS, whatever the number of threads. */
  private readonly bell = new Bell();
  /** The first pages' best compressed forms, made here once per snapshot (and day) for every thread. */
  private readonly pages: PagePacker;

  private constructor(private readonly o: PoolOptions, snapshot: Snapshot) {
    this.threads = new Array<Thread | null>(o.threads).fill(null);
    this.answered = new Float64Array(new SharedArrayBuffer(ANSWERED_STRIDE * 8 * o.threads));
    this.faults = o.faults;
    this.tls = o.tls;
    this.current = snapshot;
    this.quota = QuotaTable.for(o.gate, o.clock);
    this.redis = this.quota === null ? RedisTable.for(o.gate, o.clock, o.log) : null;
    this.pages = new PagePacker(
      (shared) => {
        for (const t of this.threads) t?.worker.postMessage(['pages', shared] satisfies ToWorker);
      },
      (err) => o.log.warn('could not compress the first pages ahead', { error: String(err) }),
    );
    this.timer = setInterval(() => this.sendState(), STATE_EVERY_MS);
    this.timer.unref();
  }

  /** The data as the threads see it (in shared memory), for the main thread to hold instead of its own copy. */
  snapshot(): Snapshot {
    return this.current;
  }

  /**
   * Starts every thread at once on the same ports. A port 0 is first resolved here, by a socket of
   * this thread bound with SO_REUSEPORT and closed once the threads listen: no client knows the port
   * before `listening on` is printed, so none of its connections lands on that socket.
   */
  /** Starts `threads` threads now, to be given their setup by start() once the data is loaded. */
  static prepare(threads: number): Prepared {
    return new Prepared(threads);
  }

  static async start(o: PoolOptions, snapshot: Snapshot, prepared: Prepared | null = null): Promise<{ pool: Pool; listeners: ThreadListener[] }> {
    const pool = new Pool(o, snapshot);
    const shared = share(snapshot);
    pool.token = dataToken(snapshot);
    o.log.info('data shared between threads', { threads: o.threads, bytes: sharedBytes(shared) });
    const probes: net.Server[] = [];
    const resolve = async (port: number): Promise<number> => {
      if (port !== 0) return port;
      const probe = net.createServer();
      probes.push(probe);
      await new Promise<void>((done, fail) => probe.once('error', fail).listen({ host: o.host, port: 0, reusePort: true }, done));
      return (probe.address() as net.AddressInfo).port;
    };
    try {
      pool.ports = { main: await resolve(o.port), http: o.httpPort === null ? null : await resolve(o.httpPort) };
      const started = await Promise.all(Array.from({ length: o.threads }, (_, i) => pool.spawn(i, pool.ports.main, pool.ports.http, shared, prepared?.take(i))));
      pool.current = revive<Snapshot>(shared);
      adoptToken(pool.current, pool.token);
      // The loaded copy is garbage once the caller holds pool.snapshot() instead: after this turn.
      setImmediate(collectGarbage);
      pool.listeners = started[0]!.map(({ url, transport }) => ({ url, transport }));
      // The first pages, as one thread makes them at its start, but once for every thread.
      pool.pages.pack(pool.current, utcYmd(o.clock()));
      // Once for every thread, once they listen: not N times over, nor beside the start.
      packBest(openapiBody()).then(
        ({ br, gzip }) => {
          pool.openapi = [br, gzip];
          for (const t of pool.threads) t?.worker.postMessage(['openapi', br, gzip] satisfies ToWorker);
        },
        (err: unknown) => o.log.warn('could not compress the OpenAPI document ahead', { error: String(err) }),
      );
    } catch (err) {
      await pool.close(0);
      throw err;
    } finally {
      for (const probe of probes) probe.close();
    }
    return { pool, listeners: pool.listeners };
  }

  private spawn(
    index: number, port: number, httpPort: number | null, shared: unknown = share(this.current), prepared?: Worker | Error,
  ): Promise<{ url: string; transport: Transport; port: number }[]> {
    if (prepared instanceof Error) return Promise.reject(prepared);
    const o = this.o;
    const gate = new MessageChannel();
    const dashboard = o.dashboard === null ? null : new MessageChannel();
    const observed = Reports.memory(this.bell.memory);
    const observations = new Reports(observed.ring, observed.heads, observed.bell);
    // Read with every ring (the bell, ring.ts), at once before a batch with requests, and when the thread has exited.
    const readObserved = () => {
      if (o.observe === null) return 0;
      const now = performance.now(); // one clock read for the batch: each start is now less its time taken
      return observations.read((code, status, ns) => o.observe!(UNSEEN, ROUTES[code]!, status, '', now - ns / 1e6));
    };
    this.bell.add(readObserved);
    const counted = this.quota?.link(gate.port1, this.bell) ?? null;
    const remote = this.redis?.link(gate.port1, index, this.bell) ?? null;
    this.followClock();
    const setup: WorkerSetup = {
      thread: index, host: o.host, port, httpPort, tls: this.tls, ...(o.limits ? { limits: o.limits } : {}), trustProxy: o.trustProxy, corsOrigin: o.corsOrigin,
      faults: this.faults, snapshot: shared, token: this.token, gate: gate.port2, quota: counted?.setup ?? null, redis: remote?.setup ?? null, dashboard: dashboard?.port2 ?? null,
      ticketKeys: this.ticketKeys, logLevels: LOG_LEVELS.filter((l) => o.log.enabled?.(l) ?? true), observe: o.observe !== null, observed, observeDetail: o.observeDetail, clockOffset: this.clockOffset, answered: this.answered, openapi: openapiDocument(), openapiPacked: this.openapi, pages: this.pages.of(this.current),
    };
    const transfer = dashboard ? [gate.port2, dashboard.port2] : [gate.port2];
    let worker: Worker;
    if (prepared === undefined) worker = spawnWorker(setup, transfer);
    else (worker = prepared).postMessage(['setup', setup] satisfies Setup, transfer as never[]);
    const link = counted ?? remote ?? serveGate(gate.port1, o.gate);
    if (dashboard) serveMounted(dashboard.port1, o.dashboard!);
    const thread: Thread = { worker, release: () => (readObserved(), this.bell.delete(readObserved), link.release(), dashboard?.port1.close()) };
    this.threads[index] = thread;
    this.started.add(worker);
    worker.once('exit', () => this.started.delete(worker));
    return new Promise((resolve, reject) => {
      let listening = false;
      // Every message counts as the bell (an empty 'observed' is the bell itself): Bell.listen.
      this.bell.listen(worker, (m: ToMain) => {
        switch (m[0]) {
          case 'listening':
            listening = true;
            worker.postMessage(['state', o.health(), o.metrics()] satisfies ToWorker);
            return resolve([...m[1]]);
          case 'log':
            return o.log[m[1]](m[2], m[3]);
          case 'observed':
            if (m[1].length === 0) return;
            readObserved();
            if (o.observe !== null) {
              const now = performance.now(); // one clock read for the batch: each start is now less its time taken
              for (const x of m[1]) o.observe(arrived(x), routeOf(x), x[2], x.length === 4 ? '' : x[4], now - x[3] / 1e6);
            }
            return;
          case 'swapped':
          case 'closed':
            worker.emit(m[0], m[1]);
            return;
          case 'stopped':
            worker.emit('stopped');
            return;
        }
      });
      worker.on('error', (err) => {
        o.log.error('thread failed', { thread: index, error: err.stack ?? String(err) });
        if (!listening) reject(err);
      });
      worker.on('exit', (code) => {
        thread.release();
        if (this.threads[index] === thread) this.threads[index] = null;
        if (!listening) return reject(new Error(`thread ${index} exited with code ${code} before listening`));
        if (this.closing) return;
        // Its sockets closed with it: clients of requests in flight saw the connection close, and
        // their units went back (release above). A new thread takes its place on the same port.
        o.log.error('thread exited; starting another', { thread: index, code });
        setTimeout(() => {
          if (this.closing) return;
          this.spawn(index, this.ports.main, this.ports.http).then(
            () => (this.restarts++, o.log.info('thread restarted', { thread: index })),
            (err: unknown) => o.log.error('thread could not be restarted', { thread: index, error: String(err) }),
          );
        }, RESTART_DELAY_MS).unref();
      });
    });
  }

  /**
   * The embedding API's clock may be moved: the threads follow its offset from Date.now, at once when
   * it says it moved (startServer's clock.set, advance, reset) and otherwise every STATE_EVERY_MS.
   */
  followClock(): void {
    this.clockOffset[0] = this.o.clock() - Date.now();
  }

  private sendState(): void {
    this.followClock();
    this.pages.daily(this.current, utcYmd(this.o.clock()));
    const m: ToWorker = ['state', this.o.health(), this.o.metrics()];
    for (const t of this.threads) t?.worker.postMessage(m);
  }

  /** Ends thread `index` at once, as a crash would (tests): it is replaced like any thread that dies. */
  async terminate(index: number): Promise<void> {
    await this.threads[index]?.worker.terminate();
  }

  /**
   * Makes thread `index` throw `message`, uncaught, on its next turn, as a bug would (tests): it is
   * replaced like any thread that dies. With `held`, the thread first stands still (as one stuck in a
   * long computation) until `throwNow()`, and then throws before it reads any message that came to it
   * meanwhile; `stopped()` says it stands.
   */
  throwIn(index: number, message: string): void;
  throwIn(index: number, message: string, held: 'held'): { stopped(): boolean; throwNow(): void };
  throwIn(index: number, message: string, held?: 'held'): { stopped(): boolean; throwNow(): void } | void {
    if (held === undefined) {
      this.threads[index]?.worker.postMessage(['throw', message] satisfies ToWorker);
      return;
    }
    const hold = new Int32Array(new SharedArrayBuffer(8)); // [go, stopped]
    this.threads[index]?.worker.postMessage(['throw', message, hold.buffer as SharedArrayBuffer] satisfies ToWorker);
    return {
      stopped: () => Atomics.load(hold, 1) === 1,
      throwNow: () => (Atomics.store(hold, 0, 1), void Atomics.notify(hold, 0)),
    };
  }

  /** Threads started to replace one that died. */
  restarts = 0;

  /** The process's store status: `own` (the main thread's) with the threads' own connections to Redis, if they have any. */
  storeStatus(own: StoreStatus): StoreStatus {
    return this.redis?.status(own) ?? own;
  }

  /** Requests answered per thread since the start, for `celebrity_api_thread_requests_total{thread}`. */
  answeredByThread(): readonly number[] {
    return Array.from({ length: this.threads.length }, (_, i) => this.answered[i * ANSWERED_STRIDE]!);
  }

  /** Shares `snapshot` and swaps every thread to it; resolves once each has (between two of its requests). */
  async publish(snapshot: Snapshot): Promise<Snapshot> {
    const shared = share(snapshot);
    this.token = dataToken(snapshot);
    const m: ToWorker = ['snapshot', shared, this.token];
    await Promise.all(this.threads.map((t) => (t === null ? null : new Promise((resolve) => {
      t.worker.once('swapped', resolve);
      t.worker.once('exit', resolve);
      t.worker.postMessage(m);
    }))));
    this.current = revive<Snapshot>(shared);
    adoptToken(this.current, this.token);
    this.pages.pack(this.current, utcYmd(this.o.clock()));
    return this.current;
  }

  /** New handshakes on every thread's HTTPS listener use `pair` (checked by the caller); so do threads started later. */
  setCertificate(pair: { readonly cert: string | Buffer; readonly key: string | Buffer }): void {
    this.tls = pair;
    for (const t of this.threads) t?.worker.postMessage(['certificate', pair] satisfies ToWorker);
  }

  setFaults(rules: readonly FaultRule[]): void {
    this.faults = rules;
    for (const t of this.threads) t?.worker.postMessage(['faults', rules] satisfies ToWorker);
  }

  /**
   * Drains every thread within `deadlineMs`; resolves with the connections the deadline cut. A thread
   * that has not ended DRAIN_GRACE_MS after the deadline (a drain stuck, a setup still on its way) is
   * ended; so, at once, is any thread out of its slot (one that died and is still exiting, or one
   * replaced): close() resolves once every thread this pool started has exited.
   */
  async close(deadlineMs: number): Promise<number> {
    this.closing = true;
    clearInterval(this.timer);
    this.pages.stop();
    const slotted = new Set(this.threads.map((t) => t?.worker));
    // Two steps: every thread stops accepting, then every thread drains (server.ts closeListeners:
    // a client told to close before every listener of the port is closed would connect again to
    // one about to close, and be reset). A thread that does not say it stopped within STOP_WAIT_MS
    // (or that exits) keeps no other from draining.
    const stops: Promise<void>[] = [];
    const cut = Promise.all([...this.started].map((worker) => new Promise<number>((resolve) => {
      let n = 0;
      const end = () => void worker.terminate();
      const timer = setTimeout(end, slotted.has(worker) ? Math.max(0, deadlineMs) + DRAIN_GRACE_MS : 0);
      worker.once('exit', () => (clearTimeout(timer), resolve(n)));
      if (!slotted.has(worker)) return;
      stops.push(new Promise<void>((stopped) => {
        const wait = setTimeout(stopped, STOP_WAIT_MS);
        const done = () => (clearTimeout(wait), worker.off('exit', done), stopped());
        worker.once('stopped', done).once('exit', done);
      }));
      worker.once('closed', (c: number) => {
        n = c;
        end();
      });
      worker.postMessage(['close', deadlineMs] satisfies ToWorker);
    })));
    await Promise.all(stops);
    for (const worker of this.started) if (slotted.has(worker)) worker.postMessage(['drain'] satisfies ToWorker);
    return (await cut).reduce((a, b) => a + b, 0);
  }
}
