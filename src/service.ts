// Wires data, quota gate, TLS and listeners into one running service. `serve` and the embedding API
// (`startServer` in src/index.ts) are both thin layers over this.
import { readFile } from 'node:fs/promises';
import type { Http2SecureServer } from 'node:http2';
import { DEFAULTS } from './config.ts';
import { createDashboard } from './dashboard/dashboard.ts';
import type { DashboardOptions } from './dashboard/options.ts';
import type { DataInput } from './data/load.ts';
import { holdTickShape } from './data/gc.ts';
import { loadSnapshot, type CacheWrite, type Snapshot } from './data/snapshot.ts';
import { App, type Observer, type Transport } from './http/app.ts';
import { Faults, type FaultRule } from './http/faults.ts';
import { openapiBody } from './http/openapi.ts';
import { checkCertificatePair, type CertificateInfo } from './tls/certificate-pair.ts';
import { ensureCertificate } from './tls/self-signed.ts';
import type { HealthReport } from './http/respond.ts';
import { closeListeners, listen, type Limits, type Listener } from './http/server.ts';
import { replaceCertificate } from './http/tls-server.ts';
import { silentLogger, type Logger } from './log.ts';
import { openGate, type Gate } from './quota/gate.ts';
import { resolveQuotas, type Plan } from './access/plans.ts';
import { openStore } from './store/open.ts';
import { ensureStateDir } from './store/state-dir.ts';
import type { Durability, Store } from './store/types.ts';
import { Pool, type Prepared } from './threads/pool.ts';

export interface ServiceOptions {
  readonly data: DataInput;
  /** State directory (certificate, boot cache, usage log, and accounts unless `store` says otherwise), or 'memory'. */
  readonly state: string;
  /** Where accounts, sessions and counters live; default: Redis at `redisUrl`, else the file store of `state` (CONTRACT 9). */
  readonly store?: Store;
  /** The shared store of many instances (CONTRACT 9); the state directory then keeps this instance's usage log. */
  readonly redisUrl?: string | null;
  /** Which 200s wait for their usage record to be on disk (file store); default 'auto'. */
  readonly durability?: Durability;
  /** false: plain HTTP; 'self-signed': a certificate in the state directory; or PEM cert and key. */
  readonly tls: false | 'self-signed' | { readonly cert: string | Buffer; readonly key: string | Buffer };
  readonly host?: string;
  readonly port?: number;
  readonly httpPort?: number | null;
  readonly trustProxy?: boolean;
  readonly corsOrigin?: string | null;
  readonly clock?: () => number;
  readonly plans?: Partial<Record<Plan, number | null>>;
  readonly log?: Logger;
  readonly metrics?: (req: import('node:http').IncomingMessage) => string | null;
  readonly observe?: Observer | null;
  /**
   * The answers whose request `observe` reads (method, target, peer, X-Forwarded-For, request id):
   * all (default), or only those of 500 and above (an access log at warn level or above). With
   * threads, the others reach the main thread without those fields (src/threads/worker.ts).
   */
  readonly observeDetail?: 'all' | 'errors';
  /** Overrides of the hardening limits in DEFAULTS (tests shorten the timeouts). */
  readonly limits?: Partial<Limits>;
  /** Faults on purpose (CONTRACT 11); none by default. */
  readonly faults?: readonly FaultRule[];
  /** The customer dashboard under /dashboard (CONTRACT 8): its options, or false for none. Default: on, sign-up closed. */
  readonly dashboard?: DashboardOptions | false;
  /**
   * Threads answering on the port (CONTRACT 10; default 1). Above 1 the caller has checked that the
   * platform shares ports (src/threads/platform.ts); `metrics` is then asked with a loopback request
   * on the main thread, and its text served by the threads.
   */
  readonly threads?: number;
}

/** What `serve` prints and the embedding API returns of a listener. */
export interface ListenerInfo {
  readonly url: string;
  readonly transport: Transport;
}

export interface Service {
  readonly listeners: readonly ListenerInfo[];
  readonly gate: Gate;
  readonly clock: () => number;
  /** The certificate's SHA-256 fingerprint when it is self-signed, else null. */
  readonly fingerprint: string | null;
  snapshot(): Snapshot;
  /** Loads, validates and indexes new data beside the old, then swaps it in; throws DataError and keeps the old. */
  reload(data?: DataInput): Promise<Snapshot>;
  /** Graceful: stop accepting, finish in-flight requests, flush the usage log. */
  close(deadlineMs?: number): Promise<void>;
  readonly draining: boolean;
  /** What /healthz answers now. */
  health(): HealthReport;
  /** Replaces the fault rules ([] turns faults off); throws FaultRuleError on a bad rule and keeps the old ones. */
  setFaults(rules: readonly FaultRule[]): void;
  /** The faults in force, or null (always null with threads: each thread keeps its own). */
  readonly faults: Faults | null;
  /** Hit and miss counts of the compressed answers kept by tag (src/http/compressed-bodies.ts); zeros with threads (each keeps its own). */
  readonly compressed: { readonly hits: number; readonly misses: number };
  /** Hit and miss counts of the list pages and details kept by tag and target (src/http/kept-pages.ts); zeros with threads, as above. */
  readonly keptPages: { readonly hits: number; readonly misses: number };
  /**
   * New handshakes on the HTTPS listener use this certificate and key (PEM; a renewed pair, on
   * SIGHUP). Throws an Error saying why, and keeps the old pair, when the new one would not work.
   */
  setCertificate(pair: { readonly cert: string | Buffer; readonly key: string | Buffer }): CertificateInfo;
  /** `celebrity_api_thread_requests_total{thread}` lines for /metrics; empty with one thread. */
  threadMetrics(): string;
  /** The worker threads (`threads` above 1), else null. */
  readonly pool: Pool | null;
  /** Resolves once the boot cache of what the start (or a reload) built is written, or dropped. */
  cacheWritten(): Promise<void>;
}

/** What a loopback client is, to the `metrics` option, when the main thread asks on the threads' behalf. */
const LOOPBACK_ASK = { headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as import('node:http').IncomingMessage;

function threadSeries(answered: readonly number[]): string {
  const out = ['# HELP celebrity_api_thread_requests_total Responses sent, by the thread that answered (--threads).', '# TYPE celebrity_api_thread_requests_total counter'];
  answered.forEach((n, i) => out.push(`celebrity_api_thread_requests_total{thread="${i}"} ${n}`));
  return out.join('\n') + '\n';
}

export async function startService(options: ServiceOptions): Promise<Service> {
  holdTickShape(); // before the load and its collections (src/data/gc.ts)
  // The threads start first and load their modules while this thread loads the data (pool.ts Prepared).
  const prepared = (options.threads ?? 1) > 1 ? Pool.prepare(options.threads!) : null;
  try {
    return await start(options, prepared);
  } catch (err) {
    prepared?.discard();
    throw err;
  }
}

async function start(options: ServiceOptions, prepared: Prepared | null): Promise<Service> {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? silentLogger;
  const faults = (rules: readonly FaultRule[]) => (rules.length > 0 ? new Faults(rules) : null);
  const initialFaults = faults(options.faults ?? []); // a bad rule fails here, before anything starts
  // First of all, so whatever comes next (the boot cache, the certificate) finds it owner-only (issue 15).
  if (options.state !== 'memory') await ensureStateDir(options.state, log);
  let dataInput = options.data;
  // The boot cache lives in the state directory (src/data/boot-cache-*.ts); loadSnapshot skips it for 'memory'.
  // With threads the cache is read straight into shared memory: the pool then copies nothing.
  const threads = options.threads ?? 1;
  // The boot cache of what a load built is written once the server listens (a first start at 100k is
  // ready about 3 s sooner), and follows the live snapshot: a reload drops what it replaced.
  const writes = new Set<CacheWrite>();
  let cacheWriting: Promise<void> = Promise.resolve();
  /** Writes `w` (at once, or after this turn), and tells it of every snapshot that goes live until it is done. */
  const startWrite = (w: CacheWrite, later: boolean): Promise<void> => {
    writes.add(w);
    const done = (later ? new Promise<void>((resolve) => setImmediate(resolve)).then(() => w.start()) : w.start()).then(() => void writes.delete(w));
    cacheWriting = Promise.all([cacheWriting, done]).then(() => {});
    return done;
  };
  let firstWrite: CacheWrite | null = null;
  const loadOptions = { cacheDir: options.state, log, shared: threads > 1 };
  let current = await loadSnapshot(dataInput, { ...loadOptions, writeLater: (w) => (firstWrite = w) });
  let tls: { cert: string | Buffer; key: string | Buffer } | null = null;
  let fingerprint: string | null = null;
  if (options.tls === 'self-signed') {
    if (options.state === 'memory') throw new Error("a self-signed certificate needs a state directory (state: 'memory' was given)");
    const made = await ensureCertificate(options.state);
    tls = made;
    fingerprint = made.fingerprint;
  } else if (options.tls) {
    tls = options.tls;
  }
  const store =
    options.store ??
    (await openStore({ state: options.state, redisUrl: options.redisUrl ?? null, role: 'server', clock, log, quotas: resolveQuotas(options.plans), durability: options.durability }));
  const gate = openGate({ store, clock, ...(options.plans ? { plans: options.plans } : {}) });
  let draining = false;
  // With threads on Redis each thread has its own connection: health and the store's series are then
  // the whole process's (pool.ts storeStatus), for /healthz and for /metrics through `service.gate`.
  let pool: Pool | null = null;
  const processGate: Gate = { ...gate, status: () => (pool === null ? gate.status() : pool.storeStatus(gate.status())) };
  const health = (): HealthReport => {
    const status = processGate.status();
    return { status: draining ? 'draining' : status.healthy ? 'ok' : 'unavailable', store: status.deployment ?? null };
  };
  const dashboard =
    options.dashboard === false
      ? null
      : createDashboard({ accounts: gate.accounts, sessions: store.sessions, throttle: store.throttle, usage: gate.usage, clock, log, trustProxy: options.trustProxy ?? false }, options.dashboard);
  let app: App | null = null;
  let listeners: Listener[] = [];
  let shown: readonly ListenerInfo[];
  try {
    if (threads > 1) {
      // The threads answer; this thread keeps the gate, the usage log, the dashboard and the data.
      const started = await Pool.start(
        {
          threads, host: options.host ?? DEFAULTS.host, port: options.port ?? 0, tls, httpPort: options.httpPort ?? null, ...(options.limits ? { limits: options.limits } : {}),
          trustProxy: options.trustProxy ?? false, corsOrigin: options.corsOrigin ?? null, faults: options.faults ?? [], gate, dashboard, log,
          observe: options.observe ?? null, observeDetail: options.observeDetail ?? 'all', metrics: () => options.metrics?.(LOOPBACK_ASK) ?? null, health: () => health(), clock,
        },
        current,
        prepared,
      );
      pool = started.pool;
      current = pool.snapshot(); // the shared copy; the one just loaded can go
      (firstWrite as CacheWrite | null)?.follow(current); // and the cache is written from it
      shown = started.listeners;
    } else {
      app = new App({
        snapshot: () => current,
        gate,
        clock,
        log,
        trustProxy: options.trustProxy ?? false,
        corsOrigin: options.corsOrigin ?? null,
        openapi: openapiBody,
        metrics: options.metrics ?? (() => null),
        draining: () => draining,
        health: () => health(),
        observe: options.observe ?? null,
        dashboard,
      });
      app.faults = initialFaults;
      shown = listeners = await listen(app, { host: options.host ?? DEFAULTS.host, port: options.port ?? 0, tls, httpPort: options.httpPort ?? null, ...(options.limits ? { limits: options.limits } : {}) });
    }
  } catch (err) {
    await gate.close();
    throw err;
  }
  // After this turn: `serve` prints its `listening on` lines as soon as this resolves, before the write's first step.
  if (firstWrite !== null) void startWrite(firstWrite, true);
  firstWrite = null;
  let closing: Promise<void> | null = null;
  return {
    listeners: shown,
    health,
    gate: processGate,
    clock,
    fingerprint,
    snapshot: () => current,
    compressed: app?.answers ?? { hits: 0, misses: 0 },
    keptPages: app?.pages ?? { hits: 0, misses: 0 },
    async reload(data?: DataInput) {
      // The live snapshot's collections whose files did not change are kept, not rebuilt (with threads:
      // already in shared memory, so share() copies only what changed).
      let write: CacheWrite | null = null;
      let next = await loadSnapshot(data ?? dataInput, { ...loadOptions, previous: current, writeLater: (w) => (write = w) });
      if (data !== undefined) dataInput = data;
      if (pool !== null) next = await pool.publish(next); // resolves once every thread has swapped
      current = next; // serve logs which version is live, with the reason for the reload
      app?.dataChanged(); // the threads do it as they swap (worker.ts)
      // A write still pending from before lets go of what this reload replaced (and never renames its
      // stale file over the one written next); this reload's own is written before it resolves, as always.
      const own = write as CacheWrite | null;
      own?.follow(next); // with threads: from the shared copy
      for (const w of writes) w.follow(next, own ?? undefined);
      if (own !== null) await startWrite(own, false);
      return next;
    },
    close(deadlineMs = DEFAULTS.shutdownDeadlineMs) {
      closing ??= (async () => {
        draining = true;
        const until = performance.now() + deadlineMs;
        const cut = pool !== null ? await pool.close(deadlineMs) : await closeListeners(listeners, deadlineMs);
        if (cut > 0) log.warn('shutdown deadline reached; closed the connections still open', { connections: cut, deadlineMs });
        // The boot cache still being written is finished within the deadline, or dropped (its temp file
        // removed: the old cache or none stays, never a torn one).
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, until - performance.now()))));
        if (await Promise.race([cacheWriting.then(() => false), late])) {
          for (const w of writes) w.cancel();
          log.warn('shutdown deadline reached; the boot cache not yet written is dropped', { deadlineMs });
          await cacheWriting;
        }
        clearTimeout(timer);
        await gate.close();
      })();
      return closing;
    },
    get draining() {
      return draining;
    },
    setFaults(rules) {
      const next = faults(rules); // a bad rule throws here, for every thread alike
      if (app !== null) app.faults = next;
      else pool!.setFaults(rules);
    },
    get faults() {
      return app?.faults ?? null;
    },
    threadMetrics: () => (pool === null ? '' : threadSeries(pool.answeredByThread())),
    cacheWritten: () => cacheWriting,
    get pool() {
      return pool;
    },
    setCertificate(pair) {
      if (pool !== null) {
        if (tls === null) throw new Error('no HTTPS listener (plain HTTP was asked for)');
        const info = checkCertificatePair(pair.cert, pair.key, Date.now());
        pool.setCertificate(pair); // every thread's HTTPS listener, and the threads started later
        return info;
      }
      const https = listeners.find((l) => l.transport === 'https');
      if (https === undefined) throw new Error('no HTTPS listener (plain HTTP was asked for)');
      const info = checkCertificatePair(pair.cert, pair.key, Date.now());
      replaceCertificate(https.server as Http2SecureServer, pair);
      return info;
    },
  };
}

/** Reads a PEM file pair given on the command line. */
export async function readTlsFiles(cert: string, key: string): Promise<{ cert: Buffer; key: Buffer }> {
  return { cert: await readFile(cert), key: await readFile(key) };
}
