// What the main thread and a worker thread say to each other on the worker's own port (the quota
// gate and the dashboard have theirs: gate-link.ts, mounted-link.ts). Arrays, not objects: cheaper
// to clone, and one observation is posted per answered request.
import type { FaultRule } from '../http/faults.ts';
import type { HealthReport } from '../http/respond.ts';
import type { Transport } from '../http/app.ts';
import type { LogLevel } from '../log.ts';
import type { Route } from '../http/router.ts';
import { COLLECTIONS, type CollectionName } from '../resources/types.ts';
import type { SharedPages } from './pages.ts';

/**
 * One answered request, for the main thread's observer (metrics, access log): route kind,
 * collection ('' for none), status, nanoseconds taken, request id, method, target, peer address,
 * X-Forwarded-For (or null); only the first four when the observer does not read the request of
 * this answer (observeDetail 'errors' and a status below 500): five strings fewer to copy per answer.
 */
export type Observation = [string, string, number, number, string, string, string, string, string | null] | [string, string, number, number];

/**
 * An observation in a ring (ring.ts) when the observer does not read its request: its route by
 * number (metrics read only the kind and collection), status and nanoseconds taken.
 */
const FIXED_KINDS = ['openapi', 'healthz', 'metrics', 'dashboard', 'api-unknown', 'unknown'] as const;
const LIST_BASE = FIXED_KINDS.length;
const DETAIL_BASE = LIST_BASE + COLLECTIONS.length;
const FIXED_CODES = new Map<string, number>(FIXED_KINDS.map((k, i) => [k, i]));
const COLLECTION_CODES = new Map<string, number>(COLLECTIONS.map((c, i) => [c, i]));
/** The route of each number, as the observer gets it (a detail without its slug). */
export const ROUTES: readonly Route[] = [
  ...FIXED_KINDS.map((kind) => ({ kind }) as Route),
  ...COLLECTIONS.map((collection: CollectionName) => ({ kind: 'list', collection }) as const),
  ...COLLECTIONS.map((collection: CollectionName) => ({ kind: 'detail', collection, slug: '' }) as const),
];
export function routeCode(r: Route): number {
  if (r.kind === 'list') return LIST_BASE + COLLECTION_CODES.get(r.collection)!;
  if (r.kind === 'detail') return DETAIL_BASE + COLLECTION_CODES.get(r.collection)!;
  return FIXED_CODES.get(r.kind)!;
}

/**
 * Each thread's answer counter (Float64Array slots) is this far from the next, 64 bytes, a cache
 * line: written on every request, two counters in one line would have the cores of two threads take
 * the line from each other each time.
 */
export const ANSWERED_STRIDE = 8;

export type ToWorker =
  /** New data (the posted form of share.ts), swapped in between requests, and its data token (conditional.ts adoptToken); answered 'swapped'. */
  | ['snapshot', unknown, string]
  /** Health for /healthz and the /metrics text for the main port (null: /metrics is not served there). */
  | ['state', HealthReport, string | null]
  | ['faults', readonly FaultRule[]]
  /** A renewed certificate and key (SIGHUP) for the HTTPS listener; the main thread has checked the pair. */
  | ['certificate', { readonly cert: string | Buffer; readonly key: string | Buffer }]
  /** Stop accepting at once and drain within this many ms once 'drain' comes; answered 'stopped' at once, 'closed' when drained. */
  | ['close', number]
  /** Every thread has stopped accepting: answer with Connection: close (HTTP/1.1), GOAWAY (HTTP/2), close quiet sockets. */
  | ['drain']
  /** The OpenAPI document's best compressed forms (br, gzip), made once by the main thread for every thread. */
  | ['openapi', Uint8Array, Uint8Array]
  /** The first pages' best compressed forms of a snapshot (pages.ts), made once by the main thread for every thread. */
  | ['pages', SharedPages]
  /**
   * Tests only (Pool.throwIn): throw this message, uncaught, on the thread's next turn, as a bug would;
   * with a hold (Int32Array [go, stopped] over shared memory), stop still at once (stopped = 1) until
   * go is set, then throw in that same turn, before any message that came meanwhile.
   */
  | ['throw', string, SharedArrayBuffer?];

export type ToMain =
  | ['listening', readonly { readonly url: string; readonly transport: Transport; readonly port: number }[]]
  | ['log', LogLevel, string, Record<string, unknown>]
  /** Observations with their request (or that the full ring did not take); none: the bell of the observation ring. */
  | ['observed', readonly Observation[]]
  | ['swapped', string]
  /** The thread's listeners accept no more connections. */
  | ['stopped']
  /** Drained; the number of connections the deadline cut. */
  | ['closed', number];
