// One worker thread of `serve --threads N`: the API pipeline on its own listeners, bound to the
// shared port with SO_REUSEPORT (the kernel spreads connections over the threads), answering from
// the shared snapshot. What is counted or kept goes to the main thread: quota through the gate link,
// log lines and per-request observations in batches; the main thread sends the data, health and the
// /metrics text, and says when to drain.
import type { Http2SecureServer } from 'node:http2';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks'; // a binding: the global is a getter per read
import type { Server as TlsServer } from 'node:tls';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { holdTickShape } from '../data/gc.ts';
import type { Snapshot } from '../data/snapshot.ts';
import { App, type Observer } from '../http/app.ts';
import { Faults, type FaultRule } from '../http/faults.ts';
import { fromLoopback } from '../http/metrics.ts';
import { adoptFixedTag, adoptToken } from '../http/conditional.ts';
import type { HealthReport } from '../http/respond.ts';
import { closeListeners, listen, type Limits, type Listener } from '../http/server.ts';
import { replaceCertificate } from '../http/tls-server.ts';
import type { LogLevel, Logger } from '../log.ts';
import { RemoteGate } from './gate-link.ts';
import { SharedGate, type SharedQuotaSetup } from './shared-quota.ts';
import type { RedisGate, RedisQuotaSetup } from './redis-gate.ts';
import { MountedProxy } from './mounted-link.ts';
import { revive } from './share.ts';
import { unsharePages, type SharedPages } from './pages.ts';
import { ANSWERED_STRIDE, routeCode, type Observation, type ToMain, type ToWorker } from './messages.ts';
import { FULL, QUIET, Reports } from './ring.ts';

export interface WorkerSetup {
  readonly thread: number;
  readonly host: string;
  readonly port: number;
  readonly httpPort: number | null;
  readonly tls: { readonly cert: string | Buffer; readonly key: string | Buffer } | null;
  /** The pool's TLS session ticket keys (48 bytes), the same in every thread. */
  readonly ticketKeys: Uint8Array;
  readonly limits?: Partial<Limits>;
  readonly trustProxy: boolean;
  readonly corsOrigin: string | null;
  readonly faults: readonly FaultRule[];
  readonly snapshot: unknown;
  /** The data token the main thread drew for `snapshot` (conditional.ts adoptToken): every thread's tags alike. */
  readonly token: string;
  readonly gate: MessagePort;
  /** The quota counters in shared memory (SharedGate over `gate`), or null: every admission asks the main thread (RemoteGate). */
  readonly quota: Omit<SharedQuotaSetup, 'port'> | null;
  /** With Redis: the thread's own connection (RedisGate over `gate`, redis-gate.ts loaded only then), or null. */
  readonly redis: Omit<RedisQuotaSetup, 'port'> | null;
  /** Requests under /dashboard go to the main thread over this port; null: no dashboard (404). */
  readonly dashboard: MessagePort | null;
  readonly logLevels: readonly LogLevel[];
  /** Observations are sent (the main thread has an observer: metrics, access log). */
  readonly observe: boolean;
  /** The ring of observations without their request (ring.ts: route code, status, ns, 0). */
  readonly observed: { readonly ring: SharedArrayBuffer; readonly heads: SharedArrayBuffer; readonly bell: SharedArrayBuffer };
  /** Which observations carry the request's fields: all, or those of 500 and above. */
  readonly observeDetail: 'all' | 'errors';
  /** ms the thread's clock is ahead of Date.now (the embedding API's controllable clock). */
  readonly clockOffset: Float64Array;
  /** The OpenAPI document and its tag, made once by the main thread (pool.ts openapiDocument). */
  readonly openapi: { readonly body: Uint8Array; readonly tag: string };
  /** The OpenAPI document's best compressed forms (br, gzip), or null: they come in an 'openapi' message once the main thread has made them. */
  readonly openapiPacked: readonly [Uint8Array, Uint8Array] | null;
  /** The first pages' best compressed forms of this snapshot, or null: they come in a 'pages' message once the main thread has made them. */
  readonly pages: SharedPages | null;
  /** Answers sent, one slot per thread (messages.ts ANSWERED_STRIDE apart); this thread writes only its own (no lock needed). */
  readonly answered: Float64Array;
}

/** The first message to a thread started before the data was loaded (pool.ts Prepared); else its workerData. */
export type Setup = ['setup', WorkerSetup];

/** The most a drain waits for the thread's Redis connection to close. */
const REDIS_CLOSE_MS = 1000;

const main = parentPort!;
holdTickShape(); // this thread's own (src/data/gc.ts)
// One listener from the first moment: messages that come before the thread is set up wait in `early`.
const early: ToWorker[] = [];
let handle = (m: ToWorker): void => void early.push(m);
let arrived: (s: WorkerSetup) => void = () => {};
const setupArrived = new Promise<WorkerSetup>((resolve) => (arrived = resolve));
main.on('message', (m: ToWorker | Setup) => (m[0] === 'setup' ? arrived(m[1]) : handle(m)));
if (workerData === null) {
  // Started before the data is loaded (pool.ts Prepared): what the setup does not change is loaded
  // while it is on its way, not after, when the threads' start is what `listening on` waits for:
  // node:cluster (which net loads at the first listen(), with child_process and dgram).
  createRequire(import.meta.url)('node:cluster');
}
const setup: WorkerSetup = (workerData as WorkerSetup | null) ?? (await setupArrived);
const openapiDocument = Buffer.from(setup.openapi.body.buffer, setup.openapi.body.byteOffset, setup.openapi.body.byteLength);
adoptFixedTag('openapi', openapiDocument, setup.openapi.tag);
const post = (m: ToMain) => main.postMessage(m);

const levels = new Set(setup.logLevels);
const line = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
  if (levels.has(level)) post(['log', level, msg, { ...fields, thread: setup.thread }]);
};
const log: Logger = { enabled: (level) => levels.has(level), debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };

let snapshot = revive<Snapshot>(setup.snapshot);
adoptToken(snapshot, setup.token);
let health: HealthReport = { status: 'ok', store: null };
let metricsText: string | null = null;
let draining = false;
let sayDrain = () => {};
const drainSaid = new Promise<void>((resolve) => (sayDrain = resolve));

// Observations with their request leave in one message per turn of the event loop, not one per
// request; those without it go into a ring in shared memory (ring.ts), whose bell is that message
// empty, rung only when the main thread has stopped looking at the rings (none under load).
let batch: Observation[] = [];
let due = false;
const flush = () => {
  const out = batch;
  batch = [];
  due = false;
  post(['observed', out]);
};
const answered = setup.answered;
const mine = setup.thread * ANSWERED_STRIDE;
const everyDetail = setup.observeDetail === 'all';
const observedRing = new Reports(setup.observed.ring, setup.observed.heads, setup.observed.bell);
const observe: Observer = setup.observe
  ? (req, route, status, requestId, startMs) => {
      answered[mine]!++;
      const ns = Math.round((performance.now() - startMs) * 1e6);
      // An answer whose request the main thread's observer does not read (an access log that writes
      // only 5xx lines) goes without it, as four numbers.
      const written = !everyDetail && status < 500 ? observedRing.write(routeCode(route), status, ns, 0) : FULL;
      if (written === QUIET) return;
      if (!due) {
        due = true;
        setImmediate(flush);
      }
      if (written !== FULL) return; // the bell: the message, empty
      const collection = 'collection' in route ? route.collection : '';
      if (!everyDetail && status < 500) return void batch.push([route.kind, collection, status, ns]);
      const xff = req.headers['x-forwarded-for'];
      batch.push([route.kind, collection, status, ns, requestId, req.method ?? '', req.url ?? '', req.socket?.remoteAddress ?? '', typeof xff === 'string' ? xff : null]);
    }
  : () => void answered[mine]!++;

// The OpenAPI document is compressed once, by the main thread, for every thread (brotli's best
// of the 119 KB document takes 70-100 ms of CPU): its forms come in the setup or, on a first start, in a message.
const asBuffer = (u8: Uint8Array) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
let openapiArrived: (forms: { br: Buffer; gzip: Buffer }) => void = () => {};
const openapiPacked = setup.openapiPacked !== null
  ? Promise.resolve({ br: asBuffer(setup.openapiPacked[0]), gzip: asBuffer(setup.openapiPacked[1]) })
  : new Promise<{ br: Buffer; gzip: Buffer }>((resolve) => (openapiArrived = resolve));

const offset = setup.clockOffset;
const clock = () => Date.now() + offset[0]!;
// node-redis and the Redis store's modules load only in a thread that counts on Redis.
const redis: RedisGate | null =
  setup.redis === null ? null : await (await import('./redis-gate.ts')).RedisGate.open({ ...setup.redis, port: setup.gate }, clock, log);
const app = new App({
  snapshot: () => snapshot,
  gate: redis ?? (setup.quota === null ? new RemoteGate(setup.gate) : new SharedGate({ ...setup.quota, port: setup.gate }, clock)),
  clock,
  log,
  trustProxy: setup.trustProxy,
  corsOrigin: setup.corsOrigin,
  openapi: () => openapiDocument,
  openapiPacked,
  pagesGiven: true,
  // The main thread's text, refreshed every 250 ms; loopback clients only, as with one thread.
  metrics: (req) => (metricsText !== null && fromLoopback(req) ? metricsText : null),
  draining: () => draining,
  // This thread's own connection to Redis failing is known here at once; the rest comes from the main thread.
  health: () => (draining ? { status: 'draining', store: health.store } : redis !== null && !redis.healthy ? { status: 'unavailable', store: health.store } : health),
  observe,
  dashboard: setup.dashboard === null ? null : new MountedProxy(setup.dashboard),
});
app.faults = setup.faults.length > 0 ? new Faults(setup.faults) : null;
// The first pages' forms, made by the main thread for every thread; those of another snapshot (a swap since) are dropped.
const givePages = (shared: SharedPages) => {
  if (shared.version === snapshot.version) app.givePages(snapshot, unsharePages(shared));
};
if (setup.pages !== null) givePages(setup.pages);

let listeners: Listener[] = [];
// A session ticket issued by one thread resumes on another: the kernel may send the next connection anywhere.
const ticketKeys = Buffer.from(setup.ticketKeys.buffer, setup.ticketKeys.byteOffset, setup.ticketKeys.byteLength);

handle = (m: ToWorker) => {
  switch (m[0]) {
    case 'snapshot':
      // Between two requests: a request that began on the old data finishes on it (app.ts reads it once).
      snapshot = revive<Snapshot>(m[1]);
      adoptToken(snapshot, m[2]);
      app.dataChanged();
      post(['swapped', snapshot.version]);
      return;
    case 'state':
      health = m[1];
      metricsText = m[2];
      return;
    case 'certificate':
      for (const l of listeners) {
        if (l.transport !== 'https') continue;
        replaceCertificate(l.server as Http2SecureServer, m[1]);
        (l.server as unknown as TlsServer).setTicketKeys(ticketKeys); // a new context has keys of its own
      }
      return;
    case 'openapi':
      openapiArrived({ br: asBuffer(m[1]), gzip: asBuffer(m[2]) });
      return;
    case 'pages':
      givePages(m[1]);
      return;
    case 'faults':
      app.faults = m[1].length > 0 ? new Faults(m[1]) : null;
      return;
    case 'close':
      // Stops accepting now; answers as before until every thread has ('drain'): see closeListeners.
      void closeListeners(listeners, m[1], drainSaid).then(async (cut) => {
        if (due) flush();
        // Its connection's close waits at most REDIS_CLOSE_MS (a Redis that does not answer keeps no drain waiting).
        if (redis !== null) await Promise.race([redis.close().catch(() => {}), new Promise((r) => setTimeout(r, REDIS_CLOSE_MS).unref())]);
        post(['closed', cut]);
      });
      post(['stopped']);
      return;
    case 'drain':
      draining = true;
      sayDrain();
      return;
    case 'throw': {
      const hold = m[2];
      if (hold === undefined) {
        setImmediate(() => {
          throw new Error(m[1]);
        });
        return;
      }
      const [go, stopped] = [0, 1];
      const h = new Int32Array(hold);
      Atomics.store(h, stopped, 1);
      Atomics.notify(h, stopped);
      Atomics.wait(h, go, 0);
      throw new Error(m[1]);
    }
  }
};
for (const m of early.splice(0)) handle(m);

listeners = await listen(app, { host: setup.host, port: setup.port, tls: setup.tls, httpPort: setup.httpPort, reusePort: true, ...(setup.limits ? { limits: setup.limits } : {}) });
for (const l of listeners) if (l.transport === 'https') (l.server as unknown as TlsServer).setTicketKeys(ticketKeys);
post(['listening', listeners.map((l) => ({ url: l.url, transport: l.transport, port: (l.server.address() as { port: number }).port }))]);
