// Writing dashboard answers: HTML pages, redirects and the two assets, each with the security headers
// of CONTRACT 8 (ASVS 5.0 3.4): a CSP without inline script, no referrer, nothing stored by caches.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Arrival } from '../http/mounted.ts';
import { HSTS } from '../tls/profile.ts';
import type { Asset } from './assets.ts';

export interface Exchange extends Arrival {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/**
 * Scripts and styles only from this origin (no inline script, no inline style: the SVG chart is
 * styled by class), forms only to this origin, never framed, no <base> games.
 */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const COMMON: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const PAGE: Readonly<Record<string, string>> = {
  ...COMMON,
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': CSP,
  'X-Frame-Options': 'DENY', // for browsers older than frame-ancestors
  'Cross-Origin-Opener-Policy': 'same-origin',
};

type Extra = Readonly<Record<string, string | readonly string[]>>;

function write(x: Exchange, status: number, base: Readonly<Record<string, string>>, body: Buffer, extra?: Extra): number {
  const headers: Record<string, string | readonly string[]> = { ...base, ...extra, 'X-Request-Id': x.requestId, 'Content-Length': String(body.length) };
  if (x.secure) headers[HSTS[0]!] = HSTS[1]!;
  if (x.close) headers.Connection = 'close';
  x.res.writeHead(status, headers as Record<string, string | string[]>);
  x.res.end(body); // Node leaves the body out of an answer to HEAD
  return status;
}

export function sendPage(x: Exchange, status: number, html: string, extra?: Extra): number {
  return write(x, status, PAGE, Buffer.from(html), extra);
}

/** 303 See Other: the answer to a form is a GET of the next page (POST-redirect-GET). */
export function seeOther(x: Exchange, location: string, cookies: readonly string[] = []): number {
  return write(x, 303, PAGE, Buffer.alloc(0), cookies.length > 0 ? { Location: location, 'Set-Cookie': cookies } : { Location: location });
}

const ASSET: Readonly<Record<string, string>> = { ...COMMON, 'Cache-Control': 'public, max-age=31536000, immutable' };

export function sendAsset(x: Exchange, asset: Asset): number {
  return write(x, 200, ASSET, asset.body, { 'Content-Type': asset.type });
}
