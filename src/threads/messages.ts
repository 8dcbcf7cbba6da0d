// What the main thread and a worker thread say to each other on the worker's own port (the quota
// gate and the dashboard have theirs: gate-link.ts, mounted-link.ts). Arrays, not objects: cheaper
// to clone, and one observation is posted per answered request.
import type { FaultRule } from '../http/faults.ts';
import type { HealthReport } from '../http/respond.ts';
import type { Transport } from '../http/app.ts';
import type { LogLevel } from '../log.ts';

/**
 * One answered request, for the main thread's observer (metrics, access log): route kind,
 * collection ('' for none), status, nanoseconds taken, request id, method, target, peer address,
 * X-Forwarded-For (or null); only the first four when the observer does not read the request of
 * this answer (observeDetail 'errors' and a status below 500): five strings fewer to copy per answer.
 */
export type Observation = [string, string, number, number, string, string, string, string, string | null] | [string, string, number, number];

export type ToWorker =
  /** New data (the posted form of share.ts), swapped in between requests; answered 'swapped'. */
  | ['snapshot', unknown]
  /** Health for /healthz and the /metrics text for the main port (null: /metrics is not served there). */
  | ['state', HealthReport, string | null]
  | ['faults', readonly FaultRule[]]
  /** A renewed certificate and key (SIGHUP) for the HTTPS listener; the main thread has checked the pair. */
  | ['certificate', { readonly cert: string | Buffer; readonly key: string | Buffer }]
  /** Drain within this many ms; answered 'closed'. */
  | ['close', number];

export type ToMain =
  | ['listening', readonly { readonly url: string; readonly transport: Transport; readonly port: number }[]]
  | ['log', LogLevel, string, Record<string, unknown>]
  | ['observed', readonly Observation[]]
  | ['swapped', string]
  /** Drained; the number of connections the deadline cut. */
  | ['closed', number];
