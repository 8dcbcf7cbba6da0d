// The request pipeline of CONTRACT 2: transport (403) -> key (401) -> quota (429) -> route, method
// and parameters (404/405/400) -> 200. One instance per server; no closures per request.
import type { IncomingMessage, ServerResponse } from 'node:http';
// The global `performance` is a lazy accessor: every read of it calls a getter (about 10 ns); the import is a binding.
import { performance } from 'node:perf_hooks';
import { utcYmd } from '../data/fragments.ts';
import { releaseSendBuffer } from '../data/send-buffer.ts';
import { slugId, type CollectionIndex } from '../data/indexes.ts';
import type { Snapshot } from '../data/snapshot.ts';
import { errorBody, ERRORS, type ErrorCode } from '../errors.ts';
import type { Logger } from '../log.ts';
import { MAX_TARGET_LENGTH, rawResponse, type RawAnswer } from './client-error.ts';
import { accepts, compressNow, MIN_COMPRESS_BYTES, packBest, type Encoding } from './compress.ts';
import { AnswerCache, CompressedBodies, packedOrNow, type Packed, type PagePack } from './compressed-bodies.ts';
import { KeptPages } from './kept-pages.ts';
import { encodedTag, entityTag, fixedTag, isAnyTag, noneMatch, revalidating, sendNotModified } from './conditional.ts';
import type { Fault, Faults } from './faults.ts';
import { detail, listPage, NOT_FOUND, type Outcome } from './handlers.ts';
import { fromLoopback, sendMetrics } from './metrics.ts';
import type { MountedSite } from './mounted.ts';
import { ALLOW, listenerHeaders, pushHeaders, RequestIds, send, sendError, sendHealth, type HealthReport } from './respond.ts';
import { route, type Route } from './router.ts';
import { authorityOf, splitTarget, type Target } from './target.ts';

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

/**
 * Called once per response, for the access log and metrics. `startMs` is `performance.now()` when
 * the request came: a plain number (hrtime.bigint() made a BigInt per read, and one per difference).
 */
export type Observer = (req: IncomingMessage, route: Route, status: number, requestId: string, startMs: number) => void;

export interface AppOptions {
  readonly snapshot: () => Snapshot;
  readonly gate: Admitter;
  readonly clock: () => number;
  readonly log: Logger;
  readonly trustProxy: boolean;
  readonly corsOrigin: string | null;
  /** The OpenAPI document body, served without a key and never counted. */
  readonly openapi: () => Buffer;
  /** Its best compressed forms made elsewhere (the threads: once, by the main thread); else made here at load. */
  readonly openapiPacked?: Promise<{ readonly br: Buffer; readonly gzip: Buffer }>;
  /**
   * The first pages' best forms come from elsewhere, through givePages() (the threads: the main
   * thread makes them once for all); else they are made here at load and at each reload.
   */
  readonly pagesGiven?: boolean;
  /** /metrics body, or null when metrics are not served on this listener for this client. */
  readonly metrics: (req: IncomingMessage) => string | null;
  readonly draining: () => boolean;
  /** /healthz: draining, or the quota store unreachable, is a 503; and which store answers. */
  readonly health: () => HealthReport;
  readonly observe: Observer | null;
  /** The customer dashboard under /dashboard (src/dashboard/), or null: 404 there. */
  readonly dashboard: MountedSite | null;
}

const NOT_ALLOWED: Outcome = { ok: false, code: 'METHOD_NOT_ALLOWED' };
/** A 503 (the quota store, a fault on purpose) clears within seconds (RFC 9110 10.2.3). */
const RETRY_SOON: readonly string[] = ['Retry-After', '1'];
/** The outcome of a matching If-None-Match: a 304, known by identity. */
const NOT_MODIFIED: Outcome = { ok: true, body: Buffer.alloc(0) };
const HOST_RULE = 'A request needs exactly one Host header, and an HTTP/1.1 request needs one (RFC 9112 3.2)';

/**
 * What makes a request unanswerable before any route: no Host on HTTP/1.1, or more than one (Node joins
 * repeated headers with ", ", and a host name has no comma), or a target longer than we serve (414).
 */
function framingError(req: IncomingMessage): ErrorCode | null {
  const host = req.headers.host;
  if (host === undefined ? req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 : host.indexOf(',') !== -1) return 'BAD_REQUEST';
  if ((req.url?.length ?? 0) > MAX_TARGET_LENGTH) return 'URI_TOO_LONG';
  return null;
}
const DAY_MS = 86_400_000;
const REDIRECT_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

interface LastSlug {
  readonly index: CollectionIndex | null;
  readonly slug: string;
  readonly id: number;
}
const NO_SLUG: LastSlug = { index: null, slug: '', id: -1 };

export class App {
  private readonly headers: Record<'secure' | 'plain', readonly string[]>;
  /** The same prefixes for a tagged 200 or a 304: Cache-Control lets the client keep and revalidate it. */
  private readonly tagged: Record<'secure' | 'plain', readonly string[]>;
  private readonly ids = new RequestIds();

  constructor(private readonly o: AppOptions) {
    this.headers = {
      secure: listenerHeaders({ https: true, corsOrigin: o.corsOrigin }),
      plain: listenerHeaders({ https: false, corsOrigin: o.corsOrigin }),
    };
    this.tagged = { secure: revalidating(this.headers.secure), plain: revalidating(this.headers.plain) };
    // Load time: the fixed bodies are compressed now, off this thread, before they are asked for.
    this.compressed(o.snapshot());
    const document = (this.document = o.openapi());
    this.documentTag = fixedTag('openapi', document);
    void (o.openapiPacked ?? packBest(document)).then(
      ({ br, gzip }) => Object.assign(this.openapiPacked, { br, gzip }),
      (err: unknown) => o.log.warn('could not compress the OpenAPI document ahead', { error: String(err) }),
    );
  }

  /** The OpenAPI document, fixed for the life of the process, its tag, and its compressed forms (day 0). */
  private readonly document: Buffer;
  private readonly documentTag: string;
  private readonly openapiPacked: Packed = { today: 0, br: null, gzip: null };
  private bodies: CompressedBodies | null = null;
  /** Compressed answers made per request, kept by tag across snapshots (a reload's tags differ). */
  readonly answers = new AnswerCache();
  /** List pages as sent, kept by tag and target the same way. */
  readonly pages = new KeptPages();

  /**
   * The data changed (a reload): compress the new first pages now, and let the old snapshot go (its
   * set of compressed bodies was the last thing holding it when no request came since).
   */
  dataChanged(): void {
    this.compressed(this.o.snapshot());
    this.lastSlug = NO_SLUG;
  }

  /** The compressed bodies of `snapshot`; a new snapshot (a reload) gets a new set, warmed at once. */
  private compressed(snapshot: Snapshot): CompressedBodies {
    if (this.bodies?.snapshot === snapshot) return this.bodies;
    this.bodies?.retire();
    const bodies = (this.bodies = new CompressedBodies(snapshot));
    if (this.o.pagesGiven) return bodies;
    bodies.warm(this.today()).catch((err: unknown) => this.o.log.warn('could not compress the first pages ahead', { error: String(err) }));
    return bodies;
  }

  /** The first pages' best forms made elsewhere for `snapshot` (pagesGiven); dropped when it is no longer the one served. */
  givePages(snapshot: Snapshot, pages: Iterable<PagePack>): void {
    if (snapshot !== this.o.snapshot()) return;
    const bodies = this.compressed(snapshot);
    for (const p of pages) bodies.give(p);
  }

  /**
   * A 200 body, compressed when the client accepts br or gzip and it is worth it (CONTRACT 5). A tie
   * goes to br: made ahead, its best setting costs nothing per request; per request, its quickest
   * setting costs about half of gzip's for 2% more bytes (compress.ts).
   */
  private sendOk(
    req: IncomingMessage, res: ServerResponse, r: Route, query: string, body: Buffer, snapshot: Snapshot | null, today: number,
    base: readonly string[], extra: string[],
  ): void {
    const accepted = body.length < MIN_COMPRESS_BYTES ? 'identity' : accepts(req.headers['accept-encoding']);
    if (accepted === 'identity') return send(res, 200, body, base, extra);
    let out: Buffer;
    let encoding: Encoding;
    const tag = extra.indexOf('ETag'); // the strong tag of the identity body
    if (r.kind === 'openapi') {
      encoding = accepted === 'gzip' ? 'gzip' : 'br';
      out = packedOrNow(this.openapiPacked, 0, encoding, body);
    } else if ((r.kind === 'list' || r.kind === 'detail') && snapshot !== null) {
      // The plain body is not sent: a body built in the send slab for this request gives its bytes
      // back now, so the next one (or this answer's compressed form, when it is not kept) is made in
      // memory still in the CPU's caches. Safe: every way below reads it whole, synchronously, before
      // anything else is made in the slab (compressNow); nothing keeps it (kept pages keep a copy).
      releaseSendBuffer(body);
      // An answer made from the data before a reload is compressed, not kept.
      const bodies = snapshot === this.o.snapshot() ? this.compressed(snapshot) : null;
      const page = bodies !== null && r.kind === 'list' ? bodies.page(r.collection, query) : null;
      encoding = accepted === 'either' ? 'br' : accepted;
      if (page !== null) out = packedOrNow(page, bodies!.day(r.collection, today), encoding, body);
      else if (bodies !== null && r.kind === 'detail') out = bodies.detail(r.collection, this.slugId(snapshot.collections[r.collection], r.slug), bodies.day(r.collection, today), encoding, body);
      else if (bodies !== null && tag !== -1) out = this.answers.get(extra[tag + 1]!, req.url!, encoding, body);
      else out = compressNow(body, encoding, false);
    } else {
      return send(res, 200, body, base, extra);
    }
    extra.push('Content-Encoding', encoding);
    if (tag !== -1) extra[tag + 1] = encodedTag(extra[tag + 1]!, encoding);
    send(res, 200, out, base, extra);
  }

  /** A slug's record id in `index`, the last one found kept (a detail asked again: no hash of its slug). */
  private slugId(index: CollectionIndex, slug: string): number {
    const last = this.lastSlug;
    if (last.index === index && last.slug === slug) return last.id;
    const id = slugId(index, slug);
    this.lastSlug = { index, slug, id };
    return id;
  }
  /** Dropped when the data changes: it held a replaced collection until the next compressed detail. */
  private lastSlug: LastSlug = NO_SLUG;

  /** The bytes of a refusal outside a request (parser errors, CONNECT) on a listener, with a request id. */
  rawAnswer(transport: Transport): RawAnswer {
    const base = transport === 'https' ? this.headers.secure : this.headers.plain;
    return (code, extra = [], message) => rawResponse(code, [...base, 'X-Request-Id', this.ids.next(), ...extra], message);
  }

  /**
   * Answers one request. `refusal` is set when Node already knows the answer is an error (an Expect
   * other than 100-continue: 417; CONNECT over HTTP/2: 405); it still gets the request id, the
   * headers and the access log.
   */
  handle(req: IncomingMessage, res: ServerResponse, transport: Transport, refusal: ErrorCode | null = null): void {
    const start = this.o.observe === null ? 0 : performance.now();
    const requestId = this.ids.next();
    const extra = ['X-Request-Id', requestId];
    // While draining, every response ends its connection, so keep-alive clients move elsewhere. HTTP/2
    // has no connection headers (RFC 9113 8.2.2): its sessions get a GOAWAY instead (tls-server.ts).
    const http1 = req.httpVersionMajor === 1;
    if (http1 && this.o.draining()) {
      // The drain ended this socket as quiet (drain.ts) and the client's next request crossed its FIN:
      // no answer can go back, so the request is neither served nor counted (CONTRACT 4: only a 200
      // sent counts); its client sees the connection close, as with any idle one (RFC 9112 9.3.1).
      if (req.socket.writableEnded) return void req.socket.destroy();
      extra.push('Connection', 'close');
    }
    const secure = transport === 'https' || (this.o.trustProxy && req.headers['x-forwarded-proto'] === 'https');
    const base = secure ? this.headers.secure : this.headers.plain;
    const target = this.target;
    splitTarget(req.url ?? '', target);
    const r: Route = route(target.path);
    let status: number | Promise<number>;
    try {
      const refused = refusal ?? framingError(req);
      if (refused !== null) {
        if (refused === 'BAD_REQUEST' && http1) extra.push('Connection', 'close'); // a Host that is not one: trust nothing more on this connection
        if (refused === 'METHOD_NOT_ALLOWED') extra.push(...ALLOW);
        sendError(res, refused, base, extra, refused === 'BAD_REQUEST' ? HOST_RULE : undefined);
        status = ERRORS[refused].status;
      } else {
        const fault = this.faults === null ? null : this.faults.match(target.path);
        if (fault === null) {
          status = this.dispatch(req, res, r, target, secure, transport, base, extra);
        } else {
          const own = { ...target }; // dispatched after the latency, when `target` holds another request
          status = this.faulted(fault, res, base, extra, () => this.dispatch(req, res, r, own, secure, transport, base, extra));
        }
      }
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

  /**
   * Reused for every request: read only synchronously in handle() and dispatch(), before anything can
   * interleave. A request a fault delays gets its own copy.
   */
  private readonly target: Target = { path: '', query: '', absolute: false };

  private dispatch(
    req: IncomingMessage, res: ServerResponse, r: Route, target: Target, secure: boolean, transport: Transport,
    base: readonly string[], extra: string[],
  ): number | Promise<number> {
    const readOnly = req.method === 'GET' || req.method === 'HEAD';
    const query = target.query; // the admission may answer later, when `target` holds another request
    switch (r.kind) {
      case 'unknown':
        if (transport === 'redirect' && !secure) return this.redirect(req, res, target, base, extra);
        sendError(res, 'NOT_FOUND', base, extra);
        return 404;
      case 'dashboard':
        // HTML for people, with its own headers; plain HTTP beside HTTPS moves there like any page.
        if (transport === 'redirect' && !secure) return this.redirect(req, res, target, base, extra);
        if (this.o.dashboard !== null) {
          // Its pages write their own headers; a drain still ends an HTTP/1.1 connection after them.
          return this.o.dashboard.handle(req, res, { requestId: extra[1]!, path: target.path, search: target.query, secure, close: extra.includes('Connection') });
        }
        sendError(res, 'NOT_FOUND', base, extra);
        return 404;
      case 'healthz':
        if (!readOnly) return this.notAllowed(res, base, extra);
        // The store's node to the clients that /metrics answers (a host:port of the operator's network).
        return sendHealth(res, this.o.health(), fromLoopback(req), base, extra);
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
      const condition = req.headers['if-none-match'];
      const held = condition === undefined ? null : isAnyTag(condition) ? this.documentTag : this.matching(req, condition, this.documentTag);
      if (held !== null) {
        extra.push('ETag', held);
        sendNotModified(res, this.taggedBase(base), extra);
        return 304;
      }
      extra.push('ETag', this.documentTag);
      this.sendOk(req, res, r, '', this.document, null, 0, this.taggedBase(base), extra);
      return 200;
    }
    const key = req.headers['x-api-key'];
    const admission = this.o.gate.admit(typeof key === 'string' ? key : undefined);
    if (admission instanceof Promise) return admission.then((a) => this.admitted(a, req, res, r, query, readOnly, base, extra));
    return this.admitted(admission, req, res, r, query, readOnly, base, extra);
  }

  /** After the key and quota checks: the route's answer, settled before it is written. */
  private admitted(
    admission: Admission, req: IncomingMessage, res: ServerResponse, r: Route, query: string, readOnly: boolean, base: readonly string[], extra: string[],
  ): number | Promise<number> {
    if (!admission.ok) {
      pushHeaders(extra, admission.headers);
      send(res, admission.status, admission.body, base, extra);
      return admission.status;
    }
    // The data and the day the body is made of, for its compressed forms too, even if a reload or
    // midnight comes before it leaves.
    const snapshot = this.o.snapshot();
    const today = this.today();
    let outcome: Outcome;
    try {
      outcome = readOnly ? this.resource(req, r, query, snapshot, today, extra) : NOT_ALLOWED;
    } catch (err) {
      this.o.gate.settle(admission.ticket, 500);
      throw err;
    }
    const status = outcome === NOT_MODIFIED ? 304 : outcome.ok ? 200 : ERRORS[outcome.code].status;
    // Settle before the headers are written, so a request that did not count (a 304 neither:
    // CONTRACT 11) leaves RateLimit `r` as it was.
    const durable = this.o.gate.settle(admission.ticket, status);
    if (durable === null) return this.answer(req, res, r, query, snapshot, today, outcome, status, admission, base, extra);
    // Strict durability: the 200 leaves only once its usage record is on disk (CONTRACT 4).
    return durable.then(
      () => this.answer(req, res, r, query, snapshot, today, outcome, status, admission, base, extra),
      () => {
        const tag = extra.indexOf('ETag'); // a tag names a 200, not the 503 that replaces it
        if (tag !== -1) extra.splice(tag, 2);
        pushHeaders(extra, this.o.gate.quotaHeaders(admission.ticket, 503));
        extra.push(...RETRY_SOON);
        sendError(res, 'SERVICE_UNAVAILABLE', base, extra);
        return 503;
      },
    );
  }

  private answer(
    req: IncomingMessage, res: ServerResponse, r: Route, query: string, snapshot: Snapshot, today: number, outcome: Outcome, status: number,
    admission: Admission & { ok: true }, base: readonly string[], extra: string[],
  ): number {
    pushHeaders(extra, status === 200 ? admission.headers : this.o.gate.quotaHeaders(admission.ticket, status));
    if (outcome === NOT_MODIFIED) sendNotModified(res, this.taggedBase(base), extra);
    else if (outcome.ok) this.sendOk(req, res, r, query, outcome.body, snapshot, today, this.taggedBase(base), extra);
    else if (outcome.code === 'METHOD_NOT_ALLOWED') this.notAllowed(res, base, extra);
    else sendError(res, outcome.code, base, extra, outcome.message);
    return status;
  }

  /**
   * A resource's outcome. Its tag comes from the snapshot, the target and the day alone, so a matching
   * If-None-Match is a 304 before any page is built; the tag goes into `extra` with a 200 or a 304.
   */
  private resource(req: IncomingMessage, r: Route, query: string, snapshot: Snapshot, today: number, extra: string[]): Outcome {
    if (r.kind !== 'list' && r.kind !== 'detail') return NOT_FOUND;
    const index = snapshot.collections[r.collection];
    const tag = entityTag(snapshot, req.url!, index.def.late ? today : null);
    const condition = req.headers['if-none-match'];
    const held = condition === undefined ? null : this.matching(req, condition, tag);
    if (held !== null) {
      extra.push('ETag', held);
      return NOT_MODIFIED;
    }
    // A page or a detail asked before with the same tag (data, day) and target is sent as it was sent then.
    const url = req.url!;
    let outcome: Outcome | undefined = this.pages.get(tag, url);
    if (outcome === undefined) {
      // The query is read where it stands in the target (it is the target's tail: splitTarget).
      outcome = r.kind === 'list' ? listPage(index, url, today, url.length - query.length) : detail(index, r.slug, today);
      if (outcome.ok) this.pages.keep(tag, url, outcome.body);
    }
    if (outcome.ok && condition !== undefined && isAnyTag(condition)) outcome = NOT_MODIFIED;
    if (outcome.ok) extra.push('ETag', tag);
    return outcome;
  }

  /**
   * The tag If-None-Match names among the representations this request could get, or null: the
   * identity tag, or that of a coding the request accepts (a compressed 200 carries `encodedTag`).
   * A 304 carries the tag the client holds.
   */
  private matching(req: IncomingMessage, condition: string, tag: string): string | null {
    if (noneMatch(condition, tag)) return tag;
    const accepted = accepts(req.headers['accept-encoding']);
    if (accepted === 'identity') return null;
    for (const encoding of ['br', 'gzip'] as const) {
      if (accepted !== 'either' && accepted !== encoding) continue;
      const variant = encodedTag(tag, encoding);
      if (noneMatch(condition, variant)) return variant;
    }
    return null;
  }

  private taggedBase(base: readonly string[]): readonly string[] {
    return base === this.headers.secure || base === this.tagged.secure ? this.tagged.secure : this.tagged.plain;
  }

  /** Faults on purpose (src/http/faults.ts); null, and skipped, unless a test or `serve --fault` asks. */
  faults: Faults | null = null;

  /**
   * A request picked by a fault rule: after its latency, answered 500 or 503 before the key and quota checks (never
   * counted), dropped without an answer (status 0 for the log and metrics), or served as usual.
   */
  private faulted(fault: Fault, res: ServerResponse, base: readonly string[], extra: string[], serve: () => number | Promise<number>): number | Promise<number> {
    const act = (): number | Promise<number> => {
      if (fault.drop) {
        res.socket?.destroy();
        return 0;
      }
      if (fault.status === 503) {
        extra.push(...RETRY_SOON);
        sendError(res, 'SERVICE_UNAVAILABLE', base, extra);
        return 503;
      }
      if (fault.status === 500) {
        sendError(res, 'INTERNAL_ERROR', base, extra);
        return 500;
      }
      return serve();
    };
    if (fault.latencyMs === 0) return act();
    return new Promise<void>((resolve) => setTimeout(resolve, fault.latencyMs)).then(act);
  }

  /** The serving day as yyyymmdd, recomputed only when the clock leaves the cached day. */
  private today(): number {
    const now = this.o.clock();
    if (!(now >= this.dayStart && now < this.dayStart + DAY_MS)) {
      const first = Number.isNaN(this.dayStart);
      this.dayStart = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
      this.dayYmd = utcYmd(now);
      // A new day: the first pages whose bodies hold `age` are compressed ahead again (given: by the main thread).
      if (!first && !this.o.pagesGiven) this.bodies?.warm(this.dayYmd, true).catch((err: unknown) => this.o.log.warn('could not compress the first pages ahead', { error: String(err) }));
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
  private redirect(req: IncomingMessage, res: ServerResponse, target: Target, base: readonly string[], extra: string[]): number {
    // Only a plain host name or IP literal goes into Location; anything else could steer the redirect.
    // An absolute-form target names the host itself, and then Host is ignored (RFC 9112 3.2.2).
    const given = target.absolute ? authorityOf(req.url ?? '') : (req.headers.host ?? '');
    const host = REDIRECT_HOST.test(given) ? given.replace(/:\d+$/, '') : 'localhost';
    const location = `https://${host}${this.httpsPortSuffix}${target.path}${target.query === '' ? '' : '?' + target.query}`;
    extra.push('Location', location);
    send(res, 308, errorBody('HTTPS_REQUIRED', `This server answers over HTTPS: ${location}`), base, extra);
    return 308;
  }

  /** `:port` of the HTTPS listener for redirects, set by the server once it listens. */
  httpsPortSuffix = '';
}
