// The request pipeline of CONTRACT 2: transport (403) -> key (401) -> quota (429) -> route, method
// and parameters (404/405/400) -> 200. One instance per server; no closures per request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { utcYmd } from '../data/fragments.ts';
import type { Snapshot } from '../data/snapshot.ts';
import { errorBody, ERRORS } from '../errors.ts';
import type { Dashboard } from '../dashboard/dashboard.ts';
import type { Logger } from '../log.ts';
import { detail, listPage, NOT_FOUND, type Outcome } from './handlers.ts';
import { sendMetrics } from './metrics.ts';
import { ALLOW, listenerHeaders, pushHeaders, send, sendError, sendHealth, type Health } from './respond.ts';
import { route, type Route } from './router.ts';

type Headers = Readonly<Record<string, string>>;
type Admission = { readonly ok: true; readonly ticket: unknown; readonly headers: Headers } | { readonly ok: false; readonly status: number; readonly body: string; readonly headers: Headers };

/**
 * What the pipeline needs of the quota gate (src/quota/gate.ts). Both steps may be asynchronous: a
 * remote store answers admit later, and a strict settle resolves once the count is on disk.
 */
export interface Admitter {
  admit(apiKey: string | undefined): Admission | Promise<Admission>;
  settle(ticket: unknown, status: number): Promise<void> | null;
  quotaHeaders(ticket: unknown, status: number): Headers;
}

/** How a listener was reached: HTTPS, plain HTTP that serves (--insecure-http), or plain HTTP that refuses. */
export type Transport = 'https' | 'insecure' | 'redirect';

/** Called once per response, for the access log and metrics. */
export type Observer = (req: IncomingMessage, route: Route, status: number, requestId: string, startNs: bigint) => void;

export interface AppOptions {
  readonly snapshot: () => Snapshot;
  readonly gate: Admitter;
  readonly clock: () => number;
  readonly log: Logger;
  readonly trustProxy: boolean;
  readonly corsOrigin: string | null;
  /** The OpenAPI document body, served without a key and never counted. */
  readonly openapi: () => Buffer;
  /** /metrics body, or null when metrics are not served on this listener for this client. */
  readonly metrics: (req: IncomingMessage) => string | null;
  readonly draining: () => boolean;
  /** /healthz: draining, or the quota store unreachable, is a 503. */
  readonly health: () => Health;
  readonly observe: Observer | null;
  /** The customer dashboard under /dashboard (src/dashboard/), or null: 404 there. */
  readonly dashboard: Dashboard | null;
}

const NOT_ALLOWED: Outcome = { ok: false, code: 'METHOD_NOT_ALLOWED' };
/** A 503 from the quota store clears within seconds (RFC 9110 10.2.3). */
const RETRY_SOON: readonly string[] = ['Retry-After', '1'];
const DAY_MS = 86_400_000;
const REDIRECT_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

export class App {
  private readonly headers: Record<'secure' | 'plain', readonly string[]>;
  private readonly idPrefix = randomBytes(4).toString('hex');
  private seq = 0;

  constructor(private readonly o: AppOptions) {
    this.headers = {
      secure: listenerHeaders({ https: true, corsOrigin: o.corsOrigin }),
      plain: listenerHeaders({ https: false, corsOrigin: o.corsOrigin }),
    };
  }

  handle(req: IncomingMessage, res: ServerResponse, transport: Transport): void {
    const start = this.o.observe === null ? 0n : process.hrtime.bigint();
    const requestId = `${this.idPrefix}-${(++this.seq).toString(36)}`;
    const extra = ['X-Request-Id', requestId];
    // While draining, every response ends its connection, so keep-alive clients move elsewhere.
    if (this.o.draining()) extra.push('Connection', 'close');
    const secure = transport === 'https' || (this.o.trustProxy && req.headers['x-forwarded-proto'] === 'https');
    const base = secure ? this.headers.secure : this.headers.plain;
    const url = req.url ?? '';
    // Absolute-form and asterisk-form targets (RFC 9112 3.2) are not paths of ours.
    const q = url.charCodeAt(0) === 47 /* / */ ? url.indexOf('?') : -2;
    const r: Route = q === -2 ? route('') : route(q === -1 ? url : url.slice(0, q));
    let status: number | Promise<number>;
    try {
      status = this.dispatch(req, res, r, q === -2 || q === -1 ? '' : url.slice(q + 1), secure, transport, base, extra);
    } catch (err) {
      status = this.failed(err, res, requestId, base, extra);
    }
    if (typeof status === 'number') {
      if (this.o.observe !== null) this.o.observe(req, r, status, requestId, start);
      return;
    }
    // Answered later (a remote store, a strict commit): observed when it is.
    status.then(
      (s) => this.o.observe?.(req, r, s, requestId, start),
      (err: unknown) => this.o.observe?.(req, r, this.failed(err, res, requestId, base, extra), requestId, start),
    );
  }

  /** A bug: logged with the request id, answered 500 without a detail (CONTRACT 2). */
  private failed(err: unknown, res: ServerResponse, requestId: string, base: readonly string[], extra: string[]): number {
    this.o.log.error('request failed', { requestId, error: (err as Error).stack ?? String(err) });
    if (!res.headersSent) sendError(res, 'INTERNAL_ERROR', base, extra);
    else res.destroy();
    return 500;
  }

  private dispatch(
    req: IncomingMessage, res: ServerResponse, r: Route, query: string, secure: boolean, transport: Transport,
    base: readonly string[], extra: string[],
  ): number | Promise<number> {
    const readOnly = req.method === 'GET' || req.method === 'HEAD';
    switch (r.kind) {
      case 'unknown':
        if (transport === 'redirect' && !secure) return this.redirect(req, res, base, extra);
        sendError(res, 'NOT_FOUND', base, extra);
        return 404;
      case 'dashboard':
        // HTML for people, with its own headers; plain HTTP beside HTTPS moves there like any page.
        if (transport === 'redirect' && !secure) return this.redirect(req, res, base, extra);
        if (this.o.dashboard !== null) return this.o.dashboard.handle(req, res, extra[1]! /* the request id */, secure);
        sendError(res, 'NOT_FOUND', base, extra);
        return 404;
      case 'healthz':
        if (!readOnly) return this.notAllowed(res, base, extra);
        return sendHealth(res, this.o.health(), base, extra);
      case 'metrics': {
        if (!readOnly) return this.notAllowed(res, base, extra);
        const body = this.o.metrics(req);
        if (body === null) {
          sendError(res, 'NOT_FOUND', base, extra);
          return 404;
        }
        sendMetrics(res, body, base, extra);
        return 200;
      }
    }
    if (!secure && transport !== 'insecure') {
      sendError(res, 'HTTPS_REQUIRED', base, extra);
      return 403;
    }
    if (r.kind === 'openapi') {
      if (!readOnly) return this.notAllowed(res, base, extra);
      send(res, 200, this.o.openapi(), base, extra);
      return 200;
    }
    const key = req.headers['x-api-key'];
    const admission = this.o.gate.admit(typeof key === 'string' ? key : undefined);
    if (admission instanceof Promise) return admission.then((a) => this.admitted(a, res, r, query, readOnly, base, extra));
    return this.admitted(admission, res, r, query, readOnly, base, extra);
  }

  /** After the key and quota checks: the route's answer, settled before it is written. */
  private admitted(
    admission: Admission, res: ServerResponse, r: Route, query: string, readOnly: boolean, base: readonly string[], extra: string[],
  ): number | Promise<number> {
    if (!admission.ok) {
      pushHeaders(extra, admission.headers);
      send(res, admission.status, admission.body, base, extra);
      return admission.status;
    }
    let outcome: Outcome;
    try {
      outcome = readOnly ? this.resource(r, query) : NOT_ALLOWED;
    } catch (err) {
      this.o.gate.settle(admission.ticket, 500);
      throw err;
    }
    const status = outcome.ok ? 200 : ERRORS[outcome.code].status;
    // Settle before the headers are written, so a request that did not count leaves RateLimit `r` as it was.
    const durable = this.o.gate.settle(admission.ticket, status);
    if (durable === null) return this.answer(res, outcome, status, admission, base, extra);
    // Strict durability: the 200 leaves only once its usage record is on disk (CONTRACT 4).
    return durable.then(
      () => this.answer(res, outcome, status, admission, base, extra),
      () => {
        pushHeaders(extra, this.o.gate.quotaHeaders(admission.ticket, 503));
        extra.push(...RETRY_SOON);
        sendError(res, 'SERVICE_UNAVAILABLE', base, extra);
        return 503;
      },
    );
  }

  private answer(res: ServerResponse, outcome: Outcome, status: number, admission: Admission & { ok: true }, base: readonly string[], extra: string[]): number {
    pushHeaders(extra, outcome.ok ? admission.headers : this.o.gate.quotaHeaders(admission.ticket, status));
    if (outcome.ok) send(res, 200, outcome.body, base, extra);
    else if (outcome.code === 'METHOD_NOT_ALLOWED') this.notAllowed(res, base, extra);
    else sendError(res, outcome.code, base, extra, outcome.message);
    return status;
  }

  private resource(r: Route, query: string): Outcome {
    if (r.kind !== 'list' && r.kind !== 'detail') return NOT_FOUND;
    const index = this.o.snapshot().collections[r.collection];
    const today = this.today();
    return r.kind === 'list' ? listPage(index, query, today) : detail(index, r.slug, today);
  }

  /** The serving day as yyyymmdd, recomputed only when the clock leaves the cached day. */
  private today(): number {
    const now = this.o.clock();
    if (!(now >= this.dayStart && now < this.dayStart + DAY_MS)) {
      this.dayStart = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
      this.dayYmd = utcYmd(now);
    }
    return this.dayYmd;
  }
  private dayStart = NaN;
  private dayYmd = 0;

  private notAllowed(res: ServerResponse, base: readonly string[], extra: string[]): number {
    extra.push(...ALLOW);
    sendError(res, 'METHOD_NOT_ALLOWED', base, extra);
    return 405;
  }

  /** Plain HTTP beside HTTPS: everything but /api/ moves to the HTTPS origin (CONTRACT 5). */
  private redirect(req: IncomingMessage, res: ServerResponse, base: readonly string[], extra: string[]): number {
    // Only a plain host name or IP literal goes into Location; anything else could steer the redirect.
    const given = req.headers.host ?? '';
    const host = REDIRECT_HOST.test(given) ? given.replace(/:\d+$/, '') : 'localhost';
    const target = req.url ?? '/';
    const location = `https://${host}${this.httpsPortSuffix}${target.charCodeAt(0) === 47 ? target : '/'}`;
    extra.push('Location', location);
    send(res, 308, errorBody('HTTPS_REQUIRED', `This server answers over HTTPS: ${location}`), base, extra);
    return 308;
  }

  /** `:port` of the HTTPS listener for redirects, set by the server once it listens. */
  httpsPortSuffix = '';
}
