// The request target (RFC 9112 3.2) as the router needs it: origin form or absolute form, split into
// path and query, the path's percent-encoded unreserved characters decoded (RFC 3986 6.2.2.2).

export interface Target {
  /** '' when the target names no path of ours (asterisk or authority form, another scheme). */
  path: string;
  /** After the first '?', still encoded: the query parser decodes it. */
  query: string;
  /** The target was in absolute form (`http://host/path`): the host comes from it, not from Host. */
  absolute: boolean;
}

const ABSOLUTE = /^https?:\/\//i;

/** Fills `into` (one object per App, so no allocation per request) from a request target. */
export function splitTarget(url: string, into: Target): void {
  let from = 0;
  into.absolute = false;
  if (url.charCodeAt(0) !== 47 /* / */) {
    // A server must accept the absolute form (RFC 9112 3.2.2), which proxies and some clients send.
    const scheme = ABSOLUTE.exec(url);
    if (scheme === null) {
      into.path = '';
      into.query = '';
      return;
    }
    into.absolute = true;
    from = authorityEnd(url, scheme[0].length);
  }
  const q = url.indexOf('?', from);
  let path = from === 0 && q === -1 ? url : url.slice(from, q === -1 ? url.length : q);
  if (path === '') path = '/'; // http://host and http://host?x name the root
  into.path = path.indexOf('%') === -1 ? path : decodeUnreserved(path);
  into.query = q === -1 ? '' : url.slice(q + 1);
}

function authorityEnd(url: string, start: number): number {
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */) return i;
  }
  return url.length;
}

/** The host[:port] of an absolute-form target. */
export function authorityOf(url: string): string {
  const scheme = ABSOLUTE.exec(url);
  return scheme === null ? '' : url.slice(scheme[0].length, authorityEnd(url, scheme[0].length));
}

// ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 2.3): the same character encoded or not.
const UNRESERVED = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') UNRESERVED[c.charCodeAt(0)] = 1;

function hex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/**
 * Decodes %XX only where XX is an unreserved character, so `/api/v1/celebrities/zoe%2Dmartin` routes
 * like `zoe-martin` while `%2F`, `%00` or a broken escape stay as they are (and match no route).
 */
function decodeUnreserved(path: string): string {
  let out = '';
  let from = 0;
  for (let i = path.indexOf('%'); i !== -1; i = path.indexOf('%', i + 1)) {
    const hi = hex(path.charCodeAt(i + 1));
    const lo = hex(path.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) continue;
    const c = hi * 16 + lo;
    if (c >= 128 || UNRESERVED[c] === 0) continue;
    out += path.slice(from, i) + String.fromCharCode(c);
    from = i + 3;
    i += 2;
  }
  return from === 0 ? path : out + path.slice(from);
}
