// Strings as typed arrays (STYLE habit 2): every string's UTF-16 units back to back, an offset per
// string, and an open-addressing hash table of their numbers. A million slugs are three typed arrays
// instead of a million Map entries and strings: nothing for the garbage collector to trace, nothing
// to rebuild when the boot cache maps them back, and a lookup compares units without decoding.
import { scratchInt32 } from './scratch.ts';
import { recordOffsetsOf, U32_OFFSETS_LIMIT, type Offsets, type RecordOffsets } from './fragments.ts';

export interface StringTable {
  /** Units of every string back to back: one byte each when every unit is below 256, else two. */
  readonly units: Uint8Array | Uint16Array;
  /** String i is `units[starts[i], starts[i + 1])` (4 bytes each below 2^32 units: fragments.ts offsetsOf). */
  readonly starts: Offsets;
  /** Open addressing, a power of two long, at most half full: string number, or -1 for an empty slot. */
  readonly slots: Int32Array;
}

/** FNV-1a over UTF-16 units: the same hash whether the units come from a string or the table. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function hashUnits(units: Uint8Array | Uint16Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ units[i]!, 0x01000193);
  return h >>> 0;
}

function equals(t: StringTable, k: number, s: string): boolean {
  const start = t.starts[k]!;
  if (t.starts[k + 1]! - start !== s.length) return false;
  const units = t.units;
  for (let i = 0; i < s.length; i++) if (units[start + i] !== s.charCodeAt(i)) return false;
  return true;
}

/** The hash slots of the strings of `units`/`starts`; -1 when two are equal (the caller decides). */
function fillSlots(units: Uint8Array | Uint16Array, starts: Offsets, withSlots: boolean): Int32Array {
  const count = starts.length - 1;
  if (!withSlots) return new Int32Array(0);
  let size = 8;
  while (size < count * 2) size *= 2;
  const slots = new Int32Array(size).fill(-1);
  const mask = size - 1;
  for (let k = 0; k < count; k++) {
    let h = hashUnits(units, starts[k]!, starts[k + 1]!) & mask;
    while (slots[h] !== -1) h = (h + 1) & mask;
    slots[h] = k;
  }
  return slots;
}

/** A table of `list` in order (string i is number i); `withSlots: false` keeps the strings without a hash table. */
export function stringTable(list: readonly string[], withSlots = true): StringTable {
  let total = 0;
  let wide = false;
  for (const s of list) {
    total += s.length;
    if (!wide) for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) wide = true;
  }
  const units = wide ? new Uint16Array(total) : new Uint8Array(total);
  // The offsets' final kind up front: a Float64Array converted at the end was a temporary of 8 bytes
  // a string, whose free raised glibc's mmap threshold (scratch.ts).
  const at: Offsets = total < U32_OFFSETS_LIMIT ? new Uint32Array(list.length + 1) : new Float64Array(list.length + 1);
  let pos = 0;
  for (let k = 0; k < list.length; k++) {
    const s = list[k]!;
    at[k] = pos;
    for (let i = 0; i < s.length; i++) units[pos++] = s.charCodeAt(i);
  }
  at[list.length] = pos;
  return { units, starts: at, slots: fillSlots(units, at, withSlots) };
}

/**
 * A table without slots of the texts of `units` (text i is `units[starts[i], starts[i + 1])`), those
 * `skip` has a bit for left empty: what stringTable(list, false) makes of those texts, without a
 * string each (indexes.ts: the builder keeps its search texts as units).
 */
export function stringTableOfUnits(units: Uint8Array | Uint16Array, starts: Int32Array, skip: Uint32Array | null): StringTable {
  const count = starts.length - 1;
  const skipped = (k: number) => skip !== null && (skip[k >>> 5]! & (1 << (k & 31))) !== 0;
  let total = 0;
  let wide = false;
  for (let k = 0; k < count; k++) {
    if (skipped(k)) continue;
    total += starts[k + 1]! - starts[k]!;
    if (!wide && units instanceof Uint16Array) for (let p = starts[k]!; p < starts[k + 1]!; p++) if (units[p]! > 0xff) wide = true;
  }
  const out = wide ? new Uint16Array(total) : new Uint8Array(total);
  const at: Offsets = total < U32_OFFSETS_LIMIT ? new Uint32Array(count + 1) : new Float64Array(count + 1);
  let pos = 0;
  for (let k = 0; k < count; k++) {
    at[k] = pos;
    if (skipped(k)) continue;
    out.set(units.subarray(starts[k]!, starts[k + 1]!), pos);
    pos += starts[k + 1]! - starts[k]!;
  }
  at[count] = pos;
  return { units: out, starts: at, slots: new Int32Array(0) };
}

/** The number of `s` in the table, or -1. */
export function lookup(t: StringTable, s: string): number {
  const mask = t.slots.length - 1;
  if (mask < 0) return -1;
  let h = hashString(s) & mask;
  for (let k = t.slots[h]!; k !== -1; k = t.slots[h]!) {
    if (equals(t, k, s)) return k;
    h = (h + 1) & mask;
  }
  return -1;
}

export function count(t: StringTable): number {
  return t.starts.length - 1;
}

/** String `k`, decoded (for tests, logs and the rare path; requests compare units instead). */
export function stringAt(t: StringTable, k: number): string {
  const u = t.units.subarray(t.starts[k]!, t.starts[k + 1]!);
  let s = '';
  for (let i = 0; i < u.length; i += 4096) s += String.fromCharCode(...u.subarray(i, i + 4096));
  return s;
}

/** True when string `k` contains `needle` (both UTF-16 units, as String.prototype.includes compares). */
export function includes(t: StringTable, k: number, needle: string): boolean {
  const start = t.starts[k]!;
  const last = t.starts[k + 1]! - needle.length;
  if (needle.length === 0) return true;
  const units = t.units;
  const first = needle.charCodeAt(0);
  outer: for (let p = start; p <= last; p++) {
    if (units[p] !== first) continue;
    for (let i = 1; i < needle.length; i++) if (units[p + i] !== needle.charCodeAt(i)) continue outer;
    return true;
  }
  return false;
}

/**
 * True when string `k` holds `needle` at unit `at` (a compare of the needle's length, no scan). `at`
 * may lie anywhere: past the string's end (or before its start) is simply false.
 */
export function includesAt(t: StringTable, k: number, needle: string, at: number): boolean {
  const start = t.starts[k]!;
  if (at < 0 || at + needle.length > t.starts[k + 1]! - start) return false;
  const units = t.units;
  const p = start + at;
  for (let i = 0; i < needle.length; i++) if (units[p + i] !== needle.charCodeAt(i)) return false;
  return true;
}

/** Checks a table read back from the boot cache: lengths agree, and every slot names a distinct string. */
export function consistent(t: StringTable): boolean {
  const count = t.starts.length - 1;
  if (count < 0 || t.starts[0] !== 0 || t.starts[count] !== t.units.length) return false;
  if (t.slots.length === 0) return true;
  if ((t.slots.length & (t.slots.length - 1)) !== 0 || t.slots.length < count * 2) return false;
  let filled = 0;
  for (let h = 0; h < t.slots.length; h++) {
    const k = t.slots[h]!;
    if (k < -1 || k >= count) return false;
    if (k !== -1) filled++;
  }
  return filled === count;
}

/**
 * The slugs of a collection without a copy of their text (issue 19): each record's list item holds
 * `"slug":"<slug>"`, and a slug is `[a-z0-9]+(-[a-z0-9]+)*` (validate.ts), so its bytes there are its
 * UTF-16 units and it ends at the next `"`. The table keeps where it starts in its list item and the
 * hash slots; its text is read from the list arena (`bytes`, `starts`: the list's Fragments).
 * The slots are 4/3 of the records, not a power of two at least twice them (10.5 -> 4.2 MB at 100k):
 * a slot holds the record number and, above it, the low bits of the slug's hash (the slot comes
 * from its high bits), so a probe past a slot of another slug compares those bits, not a random list
 * item: at 100k, a slug not there reads the arena about once in 500 lookups (0.5 -> 0.25 µs), one
 * that is there once (1.2-1.6 µs either way, the list item's cache miss).
 */
export interface SlugTable {
  /** Slug of record k starts at `starts[k] + at[k]` in the list arena (2 bytes each where every one is below 65,536). */
  readonly at: RecordOffsets;
  /** Linear probing from `home()`: -1 for an empty slot, else record number | the hash's low bits << `bits`. */
  readonly slots: Int32Array;
  /** Bits of the record number in a slot (slotBits). */
  readonly bits: number;
}

const QUOTE = 0x22;
const SLUG_KEY = Buffer.from('"slug":"', 'latin1');

/** Slots per record of a slug table: at most 3/4 full. */
export function slugSlots(count: number): number {
  return count === 0 ? 0 : Math.ceil((count * 4) / 3) + 1;
}

/** The bits of a record number of a table of `count` records; the hash fills the rest of 31. */
export function slotBits(count: number): number {
  return Math.max(1, 32 - Math.clz32(count));
}

/** The slot a hash starts probing at: its high bits scaled to the table (any size, not a power of two). */
function home(h: number, size: number): number {
  return Math.floor((h * size) / 4294967296);
}

/** FNV-1a over the bytes from `p` to the closing quote: the units' hash hashString gives the slug. */
function hashQuoted(bytes: Uint8Array, p: number): number {
  let h = 0x811c9dc5;
  for (let c = bytes[p]!; c !== QUOTE; c = bytes[++p]!) h = Math.imul(h ^ c, 0x01000193);
  return h >>> 0;
}

/**
 * The slug table of records whose list items are `bytes[starts[k], starts[k + 1])` and whose slugs
 * are `slugs` (used to find and check each one: the first `"slug":"` key of the item followed by
 * exactly that slug and a quote). Throws when a list item does not show its slug so.
 */
export function slugTable(bytes: Buffer, starts: Offsets, slugs: readonly string[]): SlugTable {
  const count = slugs.length;
  // A scratch block (scratch.ts): at 100k this array (4 bytes per outfit) is let go once narrowed to
  // 16 bits, and the free of an array of its own raised glibc's mmap threshold.
  const at = new Uint32Array(scratchInt32(count).buffer, 0, count);
  for (let k = 0; k < count; k++) {
    const start = starts[k]!;
    const end = starts[k + 1]!;
    const s = slugs[k]!;
    let p = indexOfIn(bytes, SLUG_KEY, start, end);
    while (p !== -1 && !quotedEquals(bytes, p + SLUG_KEY.length, s)) p = indexOfIn(bytes, SLUG_KEY, p + 1, end);
    if (p === -1 || p + SLUG_KEY.length + s.length >= end) throw new Error(`list item ${k} does not show its slug ${JSON.stringify(s)}`);
    at[k] = p + SLUG_KEY.length - start;
  }
  const narrow = recordOffsetsOf(at);
  return slugTableAt(bytes, starts, narrow === at ? at.slice() : narrow);
}

/** The slug table of records whose slugs lie at `at` in their list items (as slugTable finds them). */
export function slugTableAt(bytes: Buffer, starts: Offsets, at: RecordOffsets): SlugTable {
  const count = at.length;
  const size = slugSlots(count);
  const bits = slotBits(count);
  const slots = new Int32Array(size).fill(-1);
  for (let k = 0; k < count; k++) {
    const h = hashQuoted(bytes, starts[k]! + at[k]!);
    let p = home(h, size);
    while (slots[p] !== -1) if (++p === size) p = 0;
    slots[p] = k | ((h << bits) & 0x7fffffff);
  }
  return { at, slots, bits };
}

/**
 * Where `needle` first is in `bytes[from, to)`, or -1. Buffer#indexOf gives a wrong answer past 2 GiB
 * (its result is a 32-bit integer: a match at 2^31 + n comes back as n - 2^31, on Node 20 and 26 alike;
 * the outfits list arena is 2.36 GB at 1M), so there it searches a view of the range instead.
 */
export function indexOfIn(bytes: Buffer, needle: Uint8Array | number, from: number, to: number): number {
  if (to <= 0x7fffffff) {
    const p = bytes.indexOf(needle, from);
    return p >= from && p < to ? p : -1; // a match past 2 GiB (outside the range) may come back negative
  }
  const p = bytes.subarray(from, to).indexOf(needle);
  return p < 0 ? -1 : from + p;
}

/** True when the bytes at `p` are the units of `s` followed by a quote. */
function quotedEquals(bytes: Uint8Array, p: number, s: string): boolean {
  for (let i = 0; i < s.length; i++) if (bytes[p + i] !== s.charCodeAt(i)) return false;
  return bytes[p + s.length] === QUOTE;
}

/** The record whose slug is `s`, or -1. */
export function lookupSlug(t: SlugTable, bytes: Uint8Array, starts: Offsets, s: string): number {
  const slots = t.slots;
  const size = slots.length;
  if (size === 0) return -1;
  const bits = t.bits;
  const mask = (1 << bits) - 1;
  const h = hashString(s);
  const tag = (h << bits) & 0x7fffffff;
  let p = home(h, size);
  for (let v = slots[p]!; v !== -1; v = slots[p]!) {
    if ((v & ~mask) === tag) {
      const k = v & mask;
      if (quotedEquals(bytes, starts[k]! + t.at[k]!, s)) return k;
    }
    if (++p === size) p = 0;
  }
  return -1;
}

/** The slug of record `k`, decoded (for tests, logs and the rare path). */
export function slugAt(t: SlugTable, bytes: Buffer, starts: Offsets, k: number): string {
  const p = starts[k]! + t.at[k]!;
  const end = indexOfIn(bytes, QUOTE, p, starts[k + 1]!);
  return bytes.toString('latin1', p, end < 0 ? p : end);
}
