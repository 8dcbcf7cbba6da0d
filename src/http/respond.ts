// Writing responses: JSON bodies with headers built once (STYLE habit 3), and the error shape of SPEC 7.
import { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { errorBody, ERRORS, type ErrorCode } from '../errors.ts';
import type { StoreDeployment } from '../quota/counting-store.ts';
import { HSTS } from '../tls/profile.ts';
import { releaseSendBuffer, releaseWhenSent } from '../data/send-buffer.ts';

/** Headers every response carries (issue 4): JSON, never cached, never sniffed. */
const BASE_HEADERS: readonly string[] = [
  'Content-Type', 'application/json; charset=utf-8',
  'Cache-Control', 'no-store',
  'X-Content-Type-Options', 'nosniff',
];

/** Per-listener header prefix: the base headers, plus HSTS and CORS where they apply. */
export function listenerHeaders(options: { https: boolean; corsOrigin: string | null }): readonly string[] {
  const headers = [...BASE_HEADERS];
  if (options.https) headers.push(...HSTS);
  // Any answer may be compressed or not depending on Accept-Encoding (RFC 9110 12.5.5).
  let vary = 'Accept-Encoding';
  if (options.corsOrigin !== null) {
    headers.push('Access-Control-Allow-Origin', options.corsOrigin, 'Access-Control-Expose-Headers', 'RateLimit, RateLimit-Policy, Retry-After, X-Request-Id, ETag');
    if (options.corsOrigin !== '*') vary += ', Origin';
  }
  headers.push('Vary', vary);
  return headers;
}

/**
 * Sends a complete JSON body. `base` is the listener's header prefix; `extra` holds the per-response
 * headers as a flat [name, value, ...] list (Node accepts that form in writeHead without copying).
 */
export function send(res: ServerResponse, status: number, body: Buffer | string, base: readonly string[], extra: string[]): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  res.writeHead(status, headerList(base, extra, 'Content-Length', String(length)));
  res.end(body);
  if (typeof body === 'string') return;
  if (sentWhole(res)) releaseSendBuffer(body);
  else releaseWhenSent(body, res); // over TLS, pipelined, backed up: the next body made asks res
}

/**
 * True when everything `res` was given has gone to the socket's handle and come back done, so nothing
 * reads the body again: nothing buffered in the response (a pipelined response waiting its turn has
 * no socket yet) nor in the socket (a write the kernel did not take at once, a TLS record waiting for
 * the socket under it: those hold the body until their callback). Node 20's `writableFinished` is
 * this; Node 26's is set only once 'finish' is emitted, later. Never an HTTP/2 response (not a
 * ServerResponse): its stream's queue holds the data until the session sends it. Never over TLS
 * either: the write's callback runs a turn of the loop after `end()`. Those bodies go to
 * releaseWhenSent, which asks the response again at the next join.
 */
function sentWhole(res: ServerResponse): boolean {
  return res instanceof ServerResponse && res.writableEnded && res.socket !== null && res.writableLength === 0;
}

/**
 * `base`, then `extra`, then one more pair, in one array of the exact size, the same array for every
 * list of that size: `writeHead` reads a flat list at once and keeps none of it (node:http's
 * `_storeHeader` writes it into the head's string, HTTP/2's compatibility response into its own
 * headers), so no list is made per response (a 200's 14 entries: 128 bytes and their stores, per
 * request). Read it only before the next call. `base.concat(extra)` cost 300 ns (Node 20), a copy of
 * `base` grown by push 170 and a second allocation when it grew.
 */
export function headerList(base: readonly string[], extra: readonly string[], name?: string, value?: string): string[] {
  const size = base.length + extra.length + (name === undefined ? 0 : 2);
  let list = LISTS[size];
  if (list === undefined) LISTS[size] = list = new Array<string>(size).fill('');
  let at = 0;
  for (let i = 0; i < base.length; i++) list[at++] = base[i]!;
  for (let i = 0; i < extra.length; i++) list[at++] = extra[i]!;
  if (name !== undefined) {
    list[at++] = name;
    list[at] = value!;
  }
  return list;
}
/** headerList's arrays, by size. */
const LISTS: string[][] = [];

/** Sends an error in the SPEC 7 shape; the status comes from the registry. */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  base: readonly string[],
  extra: string[],
  message?: string,
): void {
  send(res, ERRORS[code].status, errorBody(code, message), base, extra);
}

/** The header of a 405: the only methods there are (RFC 9110 15.5.6). */
export const ALLOW: readonly string[] = ['Allow', 'GET, HEAD'];

/** What /healthz says: serving, shutting down, or cut off from the quota store (CONTRACT 9). */
export type Health = 'ok' | 'draining' | 'unavailable';

/** /healthz's answer: the status, and the store behind the counts (issue 22; null: not known here). */
export interface HealthReport {
  readonly status: Health;
  readonly store: StoreDeployment | null;
}

/** The last body built, reused while nothing in it changes (a load balancer asks every few seconds). */
const lastHealth = { status: '', mode: '', node: '', body: Buffer.alloc(0) };

/**
 * The body: `{"status":...,"store":{"mode":...,"node":...}}`. The node is a host:port of the
 * operator's network, so it is named only where `withNode` (the clients /metrics is served to);
 * others learn the mode alone.
 */
export function healthBody(report: HealthReport, withNode: boolean): Buffer {
  const mode = report.store?.mode ?? '';
  const node = withNode ? (report.store?.node ?? '') : '';
  const h = lastHealth;
  if (h.status === report.status && h.mode === mode && h.node === node) return h.body;
  const store = mode === '' ? undefined : node === '' ? { mode } : { mode, node };
  h.status = report.status;
  h.mode = mode;
  h.node = node;
  h.body = Buffer.from(JSON.stringify({ status: report.status, store }));
  return h.body;
}

/** /healthz: 200, or 503 so a load balancer stops sending traffic here; returns the status. */
export function sendHealth(res: ServerResponse, report: HealthReport, withNode: boolean, base: readonly string[], extra: string[]): number {
  const status = report.status === 'ok' ? 200 : 503;
  send(res, status, healthBody(report, withNode), base, extra);
  return status;
}

/** Request ids: a random prefix per server and a counter, so a log search finds exactly one request. */
export class RequestIds {
  private readonly prefix = randomBytes(4).toString('hex');
  private seq = 0;
  /** `prefix-` and the digits of seq / 1296, made again once per 1,296 ids. */
  private head = '';
  private high = -1;

  /** `prefix-` and seq in base 36: the last two digits from a table (`toString(36)` per id cost 30 ns). */
  next(): string {
    const seq = ++this.seq;
    const high = Math.floor(seq / LOW_IDS);
    if (high !== this.high) {
      this.high = high;
      this.head = high === 0 ? `${this.prefix}-` : `${this.prefix}-${high.toString(36)}`;
    }
    return this.head + (high === 0 ? BASE36[seq % LOW_IDS]! : BASE36_PADDED[seq % LOW_IDS]!);
  }
}

/** 36 * 36: the ids that share their digits but the last two. */
const LOW_IDS = 1296;
const BASE36: readonly string[] = Array.from({ length: LOW_IDS }, (_, i) => i.toString(36));
const BASE36_PADDED: readonly string[] = BASE36.map((s) => s.padStart(2, '0'));

/** Flattens a header object (from the quota gate) onto a flat header list. */
export function pushHeaders(extra: string[], headers: Readonly<Record<string, string>>): void {
  for (const name in headers) extra.push(name, headers[name]!);
}
