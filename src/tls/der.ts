// A small DER (X.690) writer: just the types an X.509 certificate needs, each returning a Buffer.

/** Encodes a definite length: short form below 128, else long form (X.690 8.1.3). */
function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One tag-length-value. Only single-byte tags (numbers 0-30) are needed for certificates. */
function tlv(tag: number, content: Uint8Array): Buffer {
  if (!Number.isInteger(tag) || tag < 0 || tag > 0xff || (tag & 0x1f) === 0x1f) {
    throw new RangeError(`DER: unsupported tag ${tag}`);
  }
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export function sequence(...items: Uint8Array[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

/** SET OF: DER orders the elements by their encodings (X.690 11.6), so equal sets encode equally. */
export function set(...items: Uint8Array[]): Buffer {
  const sorted = items.map((item) => Buffer.from(item)).sort(Buffer.compare);
  return tlv(0x31, Buffer.concat(sorted));
}

export function boolean(value: boolean): Buffer {
  // DER fixes TRUE as 0xff (X.690 11.1).
  return tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
}

export function nullValue(): Buffer {
  return tlv(0x05, Buffer.alloc(0));
}

/**
 * INTEGER, two's complement in the fewest octets (X.690 8.3.2). Byte input is read as unsigned
 * big-endian, so a serial number with its top bit set gains a 0x00 and stays positive.
 */
export function integer(value: number | bigint | Uint8Array): Buffer {
  if (value instanceof Uint8Array) {
    let start = 0;
    while (start < value.length - 1 && value[start] === 0) start++;
    const body = Buffer.from(value.subarray(start));
    if (body.length === 0) return tlv(0x02, Buffer.from([0]));
    return tlv(0x02, body[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);
  }
  let n = BigInt(value);
  const bytes: number[] = [];
  // Emit low bytes until the remainder is pure sign extension of the last byte emitted.
  for (;;) {
    const byte = Number(n & 0xffn);
    bytes.unshift(byte);
    n >>= 8n;
    if ((n === 0n && (byte & 0x80) === 0) || (n === -1n && (byte & 0x80) !== 0)) break;
  }
  return tlv(0x02, Buffer.from(bytes));
}

/** OBJECT IDENTIFIER from dotted form: first two arcs share one octet, the rest are base 128. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((arc) => {
    if (!/^\d+$/.test(arc)) throw new TypeError(`DER: bad OID ${dotted}`);
    return BigInt(arc);
  });
  if (arcs.length < 2 || arcs[0]! > 2n || (arcs[0]! < 2n && arcs[1]! > 39n)) {
    throw new TypeError(`DER: bad OID ${dotted}`);
  }
  const out: number[] = [];
  for (const arc of [arcs[0]! * 40n + arcs[1]!, ...arcs.slice(2)]) {
    const group: number[] = [Number(arc & 0x7fn)];
    for (let rest = arc >> 7n; rest > 0n; rest >>= 7n) group.unshift(Number(rest & 0x7fn) | 0x80);
    out.push(...group);
  }
  return tlv(0x06, Buffer.from(out));
}

export function utf8String(text: string): Buffer {
  return tlv(0x0c, Buffer.from(text, 'utf8'));
}

/** PrintableString allows only A-Z a-z 0-9 space and '()+,-./:=? (X.680 41.4). */
export function printableString(text: string): Buffer {
  if (!/^[A-Za-z0-9 '()+,\-./:=?]*$/.test(text)) {
    throw new TypeError(`DER: not a PrintableString: ${JSON.stringify(text)}`);
  }
  return tlv(0x13, Buffer.from(text, 'latin1'));
}

/** IA5String is 7-bit ASCII; X.509 uses it for dNSName (RFC 5280 4.2.1.6). */
export function ia5String(text: string): Buffer {
  if (!/^[\x00-\x7f]*$/.test(text)) throw new TypeError(`DER: not an IA5String: ${JSON.stringify(text)}`);
  return tlv(0x16, Buffer.from(text, 'latin1'));
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function stamp(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('DER: invalid date');
  return (
    pad(date.getUTCMonth() + 1) +
    pad(date.getUTCDate()) +
    pad(date.getUTCHours()) +
    pad(date.getUTCMinutes()) +
    pad(date.getUTCSeconds()) +
    'Z'
  );
}

/** UTCTime YYMMDDHHMMSSZ: seconds present, no fraction, always Zulu (RFC 5280 4.1.2.5.1). */
function utcTime(date: Date): Buffer {
  return tlv(0x17, Buffer.from(pad(date.getUTCFullYear() % 100) + stamp(date), 'latin1'));
}

/** GeneralizedTime YYYYMMDDHHMMSSZ without fractional seconds (RFC 5280 4.1.2.5.2). */
function generalizedTime(date: Date): Buffer {
  return tlv(0x18, Buffer.from(pad(date.getUTCFullYear(), 4) + stamp(date), 'latin1'));
}

/** The Time choice: UTCTime through 2049, GeneralizedTime from 2050 on (RFC 5280 4.1.2.5). */
export function time(date: Date): Buffer {
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? utcTime(date) : generalizedTime(date);
}

/** BIT STRING: a leading octet says how many bits of the last octet are unused (X.690 8.6.2). */
export function bitString(bytes: Uint8Array, unusedBits = 0): Buffer {
  if (!Number.isInteger(unusedBits) || unusedBits < 0 || unusedBits > 7 || (bytes.length === 0 && unusedBits)) {
    throw new RangeError(`DER: bad unused bit count ${unusedBits}`);
  }
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

export function octetString(bytes: Uint8Array): Buffer {
  return tlv(0x04, bytes);
}

/** [n] EXPLICIT: a constructed context tag wrapping the whole inner encoding. */
export function explicit(tagNumber: number, inner: Uint8Array): Buffer {
  return tlv(0xa0 | contextNumber(tagNumber), inner);
}

/**
 * [n] IMPLICIT: the inner encoding with its tag replaced by the context tag; the constructed bit
 * is kept, so IMPLICIT SEQUENCE stays constructed and IMPLICIT IA5String stays primitive.
 */
export function implicit(tagNumber: number, inner: Uint8Array): Buffer {
  const out = Buffer.from(inner);
  out[0] = 0x80 | (out[0]! & 0x20) | contextNumber(tagNumber);
  return out;
}

function contextNumber(tagNumber: number): number {
  if (!Number.isInteger(tagNumber) || tagNumber < 0 || tagNumber > 30) {
    throw new RangeError(`DER: unsupported context tag [${tagNumber}]`);
  }
  return tagNumber;
}
