// Conditional requests (CONTRACT 11, RFC 9110 8.8.3 and 13.1.2): a strong ETag on every API 200, and
// If-None-Match answered with 304 before any page is built. A tag names the data, the request and,
// where a field depends on it, the serving day: it is made from those, never from the body.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Snapshot } from '../data/snapshot.ts';
import { headerList } from './respond.ts';

/**
 * A token per loaded snapshot: `version` names a load for people, but two processes can stamp the
 * same one for different data, so the tag carries random bits drawn once per snapshot instead.
 */
const tokens = new WeakMap<Snapshot, string>();

/** The snapshot's token, drawn at its first use; threads serving the same data take the main thread's (adoptToken). */
export function dataToken(snapshot: Snapshot): string {
  let token = tokens.get(snapshot);
  if (token === undefined) tokens.set(snapshot, (token = randomBytes(6).toString('base64url')));
  return token;
}

/**
 * `snapshot`, a thread's own view of data shared with it (src/threads/share.ts revive), takes the token
 * the main thread drew for that data: a tag one thread gave is then valid on every other, which the
 * kernel may hand the client's next connection to.
 */
export function adoptToken(snapshot: Snapshot, token: string): void {
  tokens.set(snapshot, token);
}

/** The last tag made (entityTag): its fields are set in place, no object per tag. */
const last = { token: '', target: '', day: null as number | null, tag: '' };

/** Two hex digits for each byte value. */
const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** The character code of each hex digit. */
const HEX_CODES: readonly number[] = Array.from({ length: 16 }, (_, i) => i.toString(16).charCodeAt(0));

/** FNV-1a 32 over the characters of `target`. */
function fnv(target: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < target.length; i++) h = Math.imul(h ^ target.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * FNV-1a over the request target: a cheap name for the query (the tag is compared per URL anyway), in
 * 8 hex digits from a table. It was `(h >>> 0).toString(36)`: for a value of 2^31 or more (half of
 * them), not a small integer, V8 takes its slow radix path, 0.4-0.6 µs (Node 20 and 26) against 30-40
 * ns for the table.
 */
export function targetHash(target: string): string {
  const h = fnv(target);
  return HEX[h >>> 24]! + HEX[(h >>> 16) & 255]! + HEX[(h >>> 8) & 255]! + HEX[h & 255]!;
}

/**
 * The character codes of `"<token>-<8 hex digits>-<day>"` (no `-<day>` for null) for the last token and
 * day asked, the hex digits written per tag; the tag is made from them in one string. Made as a template
 * of parts, a tag was some seven strings (the hex pairs joined, the parts concatenated, then flattened
 * when first hashed): about 300 bytes of garbage for each first request.
 */
const tagCodes = { token: '', day: null as number | null, codes: [] as number[] };

function tagFor(token: string, target: string, day: number | null): string {
  const t = tagCodes;
  if (t.token !== token || t.day !== day || t.codes.length === 0) {
    const text = `"${token}-00000000${day === null ? '' : `-${day}`}"`;
    t.codes = Array.from(text, (ch) => ch.charCodeAt(0));
    t.token = token;
    t.day = day;
  }
  const codes = t.codes;
  const at = token.length + 2;
  const h = fnv(target);
  for (let i = 0; i < 8; i++) codes[at + i] = HEX_CODES[(h >>> (28 - 4 * i)) & 15]!;
  return String.fromCharCode.apply(null, codes);
}

/**
 * The strong entity tag of a resource 200: which data, which request target (path and query), and
 * the serving day (yyyymmdd) when the collection has a day-dependent field, else null. The one place
 * tags are made; `encodedTag` names its compressed forms.
 */
export function entityTag(snapshot: Snapshot, target: string, day: number | null): string {
  // A client asks for the same target again and again: the last tag made is kept (by the data's
  // token, not the snapshot, which a reload must be able to let go).
  const token = dataToken(snapshot);
  if (token === last.token && target === last.target && day === last.day) return last.tag;
  const tag = tagFor(token, target, day);
  last.token = token;
  last.target = target;
  last.day = day;
  last.tag = tag;
  return tag;
}

const fixedTags = new WeakMap<Buffer, Map<string, string>>();

/** The tags made of `body`, by name. */
function tagsOf(body: Buffer): Map<string, string> {
  let byName = fixedTags.get(body);
  if (byName === undefined) fixedTags.set(body, (byName = new Map()));
  return byName;
}

/** `body`'s tag, made by another thread from the same bytes (src/threads/pool.ts): fixedTag gives it without hashing again. */
export function adoptFixedTag(name: string, body: Buffer, tag: string): void {
  tagsOf(body).set(name, tag);
}

/**
 * The tag of a body that is fixed for the life of the process (the OpenAPI document): built once per
 * body (hashing the 119 KB document is some milliseconds of a start; worker threads adopt the main
 * thread's).
 */
export function fixedTag(name: string, body: Buffer): string {
  const byName = tagsOf(body);
  let tag = byName.get(name);
  if (tag === undefined) byName.set(name, (tag = `"${name}-${targetHash(body.toString('latin1'))}-${body.length.toString(36)}"`));
  return tag;
}

/**
 * True when If-None-Match names `tag` (weak comparison, RFC 9110 13.1.2: a W/ prefix is ignored).
 * `*` is left to the caller: it matches only when the request would be a 200.
 */
export function noneMatch(header: string, tag: string): boolean {
  let at = header.indexOf(tag);
  while (at !== -1) {
    const before = header.slice(0, at).trimEnd();
    const after = header.slice(at + tag.length).trimStart();
    const opens = before === '' || before.endsWith(',') || before.endsWith('W/');
    if (opens && (after === '' || after.startsWith(','))) return true;
    at = header.indexOf(tag, at + 1);
  }
  return false;
}

/** True for `If-None-Match: *` (any current representation). */
export const isAnyTag = (header: string): boolean => header.trim() === '*';

/**
 * 200s that carry a tag may be stored and must be revalidated (RFC 9111 5.2.2.4), privately: they
 * answer a key. Every other response keeps `no-store`.
 */
export function revalidating(base: readonly string[]): readonly string[] {
  const out = [...base];
  const at = out.indexOf('Cache-Control');
  if (at !== -1) out[at + 1] = 'private, no-cache';
  return out;
}

/** 304: the headers a 200 would carry (ETag and Cache-Control included), no body, no Content-Length (RFC 9110 15.4.5). */
export function sendNotModified(res: ServerResponse, base: readonly string[], extra: string[]): void {
  res.writeHead(304, headerList(base, extra));
  res.end();
}

/**
 * The tag of `tag`'s representation compressed with `encoding`: a strong validator names the bytes
 * sent, so a br or gzip body has a tag of its own (RFC 9110 8.8.3.3).
 */
export function encodedTag(tag: string, encoding: 'br' | 'gzip'): string {
  // The last one made is kept: a compressed answer asked again names the same tag (a compare of the
  // same string, where a slice and a concatenation made two new ones per request).
  const e = lastEncoded;
  if (tag === e.tag && encoding === e.encoding) return e.value;
  const value = `${tag.slice(0, -1)}-${encoding}"`;
  lastEncoded = { tag, encoding, value };
  return value;
}
let lastEncoded: { readonly tag: string; readonly encoding: string; readonly value: string } = { tag: '', encoding: '', value: '' };
