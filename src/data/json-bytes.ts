// JSON text written straight into a byte arena, the bytes JSON.stringify's text would encode to in
// UTF-8 (issue 19): the index builder serializes each record's shapes without building an object
// per shape, a string per run and a UTF-8 copy of it, which cost a fifth of a first start.

/** Where bytes go: `buf[pos, ...)`, after `room(n)` made sure `n` more bytes fit from `pos`. */
export interface ByteSink {
  buf: Buffer;
  pos: number;
  room(n: number): void;
}

/** `\b \t \n \f \r` as JSON.stringify writes them; any other unit below 0x20 is `\u00xx`. */
const SHORT_ESCAPE = new Uint8Array(0x20);
SHORT_ESCAPE[0x08] = 0x62;
SHORT_ESCAPE[0x09] = 0x74;
SHORT_ESCAPE[0x0a] = 0x6e;
SHORT_ESCAPE[0x0c] = 0x66;
SHORT_ESCAPE[0x0d] = 0x72;
const HEX = [0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66];

/** A unit JSON.stringify escapes, or any surrogate (a pair is not escaped, but is written as 4 bytes). */
const SPECIAL = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Strings at least this long without a special unit go through the native UTF-8 encoder in one call. */
const NATIVE_FROM = 24;

function unicodeEscape(buf: Buffer, pos: number, c: number): number {
  buf[pos] = 0x5c; // \
  buf[pos + 1] = 0x75; // u
  buf[pos + 2] = HEX[c >>> 12]!;
  buf[pos + 3] = HEX[(c >>> 8) & 15]!;
  buf[pos + 4] = HEX[(c >>> 4) & 15]!;
  buf[pos + 5] = HEX[c & 15]!;
  return pos + 6;
}

/**
 * A string as JSON.stringify quotes it (well-formed: a lone surrogate is `\udxxx`), in UTF-8. Plain
 * text in a JS loop (no call out per string); a long string with nothing to escape in one native write.
 */
export function writeString(out: ByteSink, s: string): void {
  const n = s.length;
  // At most 6 bytes per unit (`\u001f`, a lone surrogate's escape); 3 for any other.
  out.room(n * 6 + 2);
  const buf = out.buf;
  let pos = out.pos;
  buf[pos++] = 0x22;
  if (n >= NATIVE_FROM && !SPECIAL.test(s)) pos += buf.write(s, pos);
  else {
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20 && c !== 0x22 && c !== 0x5c) buf[pos++] = c;
        else if (c >= 0x20) (buf[pos] = 0x5c), (buf[pos + 1] = c), (pos += 2);
        else if (SHORT_ESCAPE[c] !== 0) (buf[pos] = 0x5c), (buf[pos + 1] = SHORT_ESCAPE[c]!), (pos += 2);
        else pos = unicodeEscape(buf, pos, c);
      } else if (c < 0x800) {
        buf[pos] = 0xc0 | (c >>> 6);
        buf[pos + 1] = 0x80 | (c & 63);
        pos += 2;
      } else if (c < 0xd800 || c > 0xdfff) {
        buf[pos] = 0xe0 | (c >>> 12);
        buf[pos + 1] = 0x80 | ((c >>> 6) & 63);
        buf[pos + 2] = 0x80 | (c & 63);
        pos += 3;
      } else {
        const d = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (d >= 0xdc00 && d <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          buf[pos] = 0xf0 | (cp >>> 18);
          buf[pos + 1] = 0x80 | ((cp >>> 12) & 63);
          buf[pos + 2] = 0x80 | ((cp >>> 6) & 63);
          buf[pos + 3] = 0x80 | (cp & 63);
          pos += 4;
          i++;
        } else pos = unicodeEscape(buf, pos, c);
      }
    }
  }
  buf[pos++] = 0x22;
  out.pos = pos;
}

/** Bytes of ASCII text (a key with its quotes and colon, punctuation): made once per shape. */
export function writeAscii(out: ByteSink, bytes: Uint8Array): void {
  const n = bytes.length;
  out.room(n);
  const buf = out.buf;
  let pos = out.pos;
  for (let i = 0; i < n; i++) buf[pos++] = bytes[i]!;
  out.pos = pos;
}

export function writeByte(out: ByteSink, b: number): void {
  out.room(1);
  out.buf[out.pos++] = b;
}

/** A number as JSON.stringify writes it: an int32 digit by digit, any other through String; NaN and infinities are null. */
export function writeJsonNumber(out: ByteSink, v: number): void {
  if ((v | 0) === v) {
    out.room(11);
    const buf = out.buf;
    let pos = out.pos;
    if (v < 0) buf[pos++] = 0x2d; // -
    let a = v < 0 ? -v : v;
    let digits = 1;
    for (let t = a; t >= 10; t = (t - (t % 10)) / 10) digits++;
    for (let at = pos + digits - 1; at >= pos; at--) {
      const digit = a % 10;
      buf[at] = 0x30 + digit;
      a = (a - digit) / 10;
    }
    out.pos = pos + digits;
    return;
  }
  const text = Number.isFinite(v) ? String(v) : 'null';
  out.room(text.length);
  out.pos += out.buf.write(text, out.pos, 'latin1');
}

const NULL = Uint8Array.of(0x6e, 0x75, 0x6c, 0x6c);
const TRUE = Uint8Array.of(0x74, 0x72, 0x75, 0x65);
const FALSE = Uint8Array.of(0x66, 0x61, 0x6c, 0x73, 0x65);

export function writeNull(out: ByteSink): void {
  writeAscii(out, NULL);
}

/** A value JSON.stringify would drop from an object (and write as null in an array). */
const skipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * Any value as JSON.stringify(v) writes it (`null` for what it would leave out at the top): own
 * enumerable keys in their order, a key with an undefined value left out, undefined in an array
 * null. A value with toJSON (none comes from JSON.parse) is handed to JSON.stringify itself.
 */
export function writeValue(out: ByteSink, v: unknown): void {
  if (v === null || skipped(v)) return writeNull(out);
  switch (typeof v) {
    case 'string':
      return writeString(out, v);
    case 'number':
      return writeJsonNumber(out, v);
    case 'boolean':
      return writeAscii(out, v ? TRUE : FALSE);
    case 'object':
      break;
    default: {
      // bigint: JSON.stringify throws, as it should here.
      const text = JSON.stringify(v);
      out.room(text.length * 3);
      out.pos += out.buf.write(text, out.pos);
      return;
    }
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    const text = JSON.stringify(v) ?? 'null';
    out.room(text.length * 3);
    out.pos += out.buf.write(text, out.pos);
    return;
  }
  if (Array.isArray(v)) {
    writeByte(out, 0x5b); // [
    for (let i = 0; i < v.length; i++) {
      if (i > 0) writeByte(out, 0x2c);
      writeValue(out, v[i]);
    }
    return writeByte(out, 0x5d);
  }
  const o = v as Record<string, unknown>;
  writeByte(out, 0x7b); // {
  let first = true;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (skipped(x)) continue;
    if (!first) writeByte(out, 0x2c);
    first = false;
    writeString(out, k);
    writeByte(out, 0x3a);
    writeValue(out, x);
  }
  writeByte(out, 0x7d);
}

/** A growing Buffer as a ByteSink (tests, and text made apart from an arena). */
export class ByteBuffer implements ByteSink {
  buf = Buffer.allocUnsafe(256);
  pos = 0;
  room(n: number): void {
    if (this.buf.length - this.pos >= n) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  text(): string {
    return this.buf.toString('utf8', 0, this.pos);
  }
}

/** Each member name as it opens its member in a JSON object: its JSON string and a colon. */
const memberKeys = new Map<string, Buffer>();

/** `name`'s key bytes for memberString. */
export function memberKey(name: string): Buffer {
  let key = memberKeys.get(name);
  if (key === undefined) memberKeys.set(name, (key = Buffer.from(`${JSON.stringify(name)}:`)));
  return key;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The string value of the member `key` (memberKey) at the top level of the JSON object `bytes` (as
 * JSON.stringify writes it: no space around the colon), when it has no escape; else null (the
 * caller parses the object).
 */
export function memberString(bytes: Buffer, key: Uint8Array): string | null {
  const end = bytes.length;
  let depth = 0;
  for (let p = 0; p < end; p++) {
    const c = bytes[p]!;
    if (c === QUOTE) {
      if (depth === 1 && startsWith(bytes, p, key)) {
        const q = p + key.length;
        if (bytes[q] !== QUOTE) return null;
        for (let r = q + 1; r < end; r++) {
          if (bytes[r] === BACKSLASH) return null;
          if (bytes[r] === QUOTE) return bytes.toString('utf8', q + 1, r);
        }
        return null;
      }
      // Past the string (a key or a value), its escapes included.
      for (p++; p < end && bytes[p] !== QUOTE; p++) if (bytes[p] === BACKSLASH) p++;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return null;
}

/** True when `bytes` hold `key` at `p`. */
function startsWith(bytes: Uint8Array, p: number, key: Uint8Array): boolean {
  for (let i = 0; i < key.length; i++) if (bytes[p + i] !== key[i]) return false;
  return true;
}
