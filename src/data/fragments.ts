// The pre-serialized JSON of every record of a collection, back to back in one Buffer: the heap
// holds a few large objects instead of millions of small ones, so garbage collection stays cheap at
// a million records. A field that depends on the serving day (celebrity `age`) is a gap filled per
// request from a per-record key, so the data is right on any day without re-serializing.
import { constants } from 'node:buffer';
import type { LateField } from '../resources/types.ts';
import type { ByteSink } from './json-bytes.ts';
import { roomBuffer, sendBuffer, sendRoomOf, type SendRoom } from './send-buffer.ts';
import { scratchBuffer, type Scratch } from './scratch.ts';

/**
 * Byte offsets into an arena: 4 bytes each while the arena is under 4 GiB (every arena at 100k),
 * 8 when it is not (an arena at 1M can pass 4 GiB on a Node whose Buffers may). Which one an arena
 * has is decided once, when it is finished; the boot cache keeps it as it is.
 */
export type Offsets = Uint32Array | Float64Array;
/** The first offset a Uint32Array cannot hold. */
export const U32_OFFSETS_LIMIT = 2 ** 32;

/** `values` (offsets up to `end`) as the narrowest Offsets that holds them: a copy, or `values` itself. */
export function offsetsOf(values: Float64Array, end: number): Offsets {
  return end < U32_OFFSETS_LIMIT ? new Uint32Array(values) : values;
}

/**
 * Byte offsets within one record (a field boundary, a hole): 2 bytes each when every one of an
 * array is below 65,536 (list items and detail-only texts at 100k are a few KB), else 4.
 */
export type RecordOffsets = Uint16Array | Uint32Array;

/** `values` as the narrowest RecordOffsets that holds them (a copy, or `values` itself). */
export function recordOffsetsOf(values: Uint32Array): RecordOffsets {
  for (let i = 0; i < values.length; i++) if (values[i]! > 0xffff) return values;
  return new Uint16Array(values);
}

export interface Fragments {
  readonly bytes: Buffer;
  /** Record i is `bytes[starts[i], starts[i + 1])`. */
  readonly starts: Offsets;
  /**
   * Where the late value goes inside record i (an offset into `bytes`), or, with `embed`, where its
   * embedded record goes; null without either.
   */
  readonly gaps: Offsets | null;
  readonly late: LateField | null;
  /** The late field's key of each record (NaN: the value is null). */
  readonly keys: Float64Array | null;
  /** A field embedded from another collection's records, kept as their ids (ListEmbed); absent or null: none. */
  readonly embed?: ListEmbed | null;
}

/**
 * A list item's field that embeds another collection's record (an outfit's celebrity: its name, slug
 * and picture), not kept as text (issue 19: 37 MB of the outfits' list arena at 100k): at the record's
 * gap go `head` (`,"celebrity":`) and the record's fields as the other collection's list item has
 * them, in braces (`null` for none), copied from that arena at join time, as a detail's embed is.
 */
export interface ListEmbed {
  /** The field's key with its leading comma: `,"celebrity":`. */
  readonly head: Buffer;
  /** The number of its embed among the index's (indexes.ts CollectionIndex `embeds`). */
  readonly slot: number;
  /** The embedded record's id of each record (-1: null): the embed's `ids`. */
  readonly ids: Int32Array;
  /** Where the embedded records' text is read (null until the index is linked: indexes.ts linkEmbeds). */
  readonly source: EmbedSource | null;
}

/**
 * The run of fields each record of another collection shows when embedded: record t's are
 * `bytes[starts[t] + cuts[t * stride + from] + 1, starts[t] + cuts[t * stride + to])` (its list item
 * between two of its field cuts, without the leading comma: detail-layout.ts).
 */
export interface EmbedSource {
  readonly bytes: Buffer;
  readonly starts: Offsets;
  readonly cuts: RecordOffsets;
  readonly stride: number;
  readonly from: number;
  readonly to: number;
}

/**
 * The typed-array methods a join calls per record, held here: `out.set` and `out.copyWithin` were
 * generic property loads (megamorphic: V8 had seen every Buffer of the process at those sites), a
 * LoadIC call each per record, where a call of a known function is a compare and a direct call.
 */
const typedArraySet = Uint8Array.prototype.set;
const typedArrayCopyWithin = Uint8Array.prototype.copyWithin;

/** The source of an embed, or a clear error: an index read or patched but not linked is not served. */
function sourceOf(e: ListEmbed): EmbedSource {
  if (e.source === null) throw new Error('a list item embeds records of a collection it is not linked to');
  return e.source;
}

/** Bytes of the embedded record `t` (-1: none) as written at a gap, its head included. */
function embedLength(e: ListEmbed, s: EmbedSource, t: number): number {
  if (t < 0) return e.head.length + 4;
  const at = t * s.stride;
  return e.head.length + 1 + s.cuts[at + s.to]! - s.cuts[at + s.from]!;
}

/** Writes the embedded record `t` (-1: none), its head first, at `pos`; returns the position after it. */
function writeEmbedded(e: ListEmbed, s: EmbedSource, t: number, out: Uint8Array, pos: number): number {
  const head = e.head;
  for (let i = 0; i < head.length; i++) out[pos++] = head[i]!;
  if (t < 0) {
    out[pos] = 0x6e; // null
    out[pos + 1] = 0x75;
    out[pos + 2] = 0x6c;
    out[pos + 3] = 0x6c;
    return pos + 4;
  }
  const at = t * s.stride;
  const start = s.starts[t]!;
  const a = start + s.cuts[at + s.from]! + 1;
  const b = start + s.cuts[at + s.to]!;
  out[pos++] = 0x7b; // {
  typedArraySet.call(out, new Uint8Array(s.bytes.buffer, s.bytes.byteOffset + a, b - a), pos);
  pos += b - a;
  out[pos++] = 0x7d; // }
  return pos;
}

/** yyyymmdd of the UTC day of `ms`: late fields are computed from it. */
export function utcYmd(ms: number): number {
  const d = new Date(ms);
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
}

/**
 * Growing arrays (below) double up to this many bytes, then take further chunks of it: each one
 * freed on the way is under glibc's smallest mmap threshold (128 KiB), so it comes from and goes back
 * to its heap and never raises that threshold. Doubling to the end freed arrays of 1-6 MB as they
 * grew and trimmed, and each such free left every later array of the load below its size in the C
 * heap, whose freed memory stayed resident at ready (issue 19, scratch.ts).
 */
const GROWING_CHUNK_BYTES = 64 << 10;

/**
 * A typed array of numbers pushed one by one: a first array, doubled up to a chunk, then chunks:
 * views of `scratch`'s blocks when it has one (then none of them is the C heap's, whose freed memory
 * stays resident: scratch.ts), else arrays of their own. Each finish lets go of the chunks.
 */
abstract class Growing<A extends Float64Array | Int32Array> {
  /** The chunks before `a`, full. */
  private full: A[] = [];
  protected a: A;
  protected pos = 0;
  length = 0;
  constructor(
    capacity: number,
    private readonly make: (length: number) => A,
    private readonly chunkOf: ((length: number) => A) | null,
  ) {
    this.a = make(Math.min(Math.max(capacity, 16), GROWING_CHUNK_BYTES / 8));
  }
  // (`push` is each subclass's own, so that its store sees one kind of array.)
  abstract push(v: number): void;
  /** Makes room for the next value: `a` doubled while under a chunk, else a new chunk. */
  protected next(): void {
    const chunk = GROWING_CHUNK_BYTES / this.a.BYTES_PER_ELEMENT;
    if (this.full.length === 0 && this.a.length < chunk) {
      const b = this.make(Math.min(this.a.length * 2, chunk));
      b.set(this.a);
      this.a = b;
      return;
    }
    this.full.push(this.a);
    this.a = this.chunkOf ? this.chunkOf(chunk) : this.make(chunk);
    this.pos = 0;
  }
  /** The value pushed last. */
  get last(): number {
    return this.a[this.pos - 1]!;
  }
  /** The largest value pushed (0 when none). */
  max(): number {
    let m = 0;
    for (const c of this.full) for (let i = 0; i < c.length; i++) if (c[i]! > m) m = c[i]!;
    for (let i = 0; i < this.pos; i++) if (this.a[i]! > m) m = this.a[i]!;
    return m;
  }
  /** The values pushed, copied into `into` (of `length` or more) from index 0; `into`. */
  copyTo<T extends Float64Array | Int32Array | Uint32Array | Uint16Array>(into: T): T {
    let at = 0;
    for (const c of this.full) {
      into.set(c, at);
      at += c.length;
    }
    into.set(this.a.subarray(0, this.pos), at);
    return into;
  }
  /** Lets go of the values (after a finish or copyTo): nothing may be read or pushed after it. */
  release(): void {
    this.full = [];
    this.a = this.make(0);
    this.pos = 0;
    this.length = 0;
  }
  /** The values as an array of exactly `length`: the array itself when it is exactly full (and its own), else a copy. */
  finish(): A {
    const a = this.a;
    const done = this.full.length === 0 && this.pos === a.length && a.byteLength === a.buffer.byteLength ? a : this.copyTo(this.make(this.length));
    this.release();
    return done;
  }
  /** The values as a Uint32Array (each one 0 or more). */
  finishU32(): Uint32Array {
    const done = this.copyTo(new Uint32Array(this.length));
    this.release();
    return done;
  }
  /** The values as the narrowest RecordOffsets that holds them (recordOffsetsOf), copied once. */
  finishRecordOffsets(): RecordOffsets {
    const done = this.copyTo(this.max() > 0xffff ? new Uint32Array(this.length) : new Uint16Array(this.length));
    this.release();
    return done;
  }
}

/** A Float64Array pushed one value at a time (Growing); `finish` makes it exactly its length. */
export class GrowingF64 extends Growing<Float64Array> {
  constructor(capacity: number, scratch: Scratch | null = null) {
    super(capacity, (n) => new Float64Array(n), scratch && ((n) => scratch.float64(n, true)));
  }
  push(v: number): void {
    if (this.pos === this.a.length) this.next();
    this.a[this.pos++] = v;
    this.length++;
  }
  /** As offsets into an arena of `end` bytes (offsetsOf), copied once. */
  finishOffsets(end: number): Offsets {
    return end < U32_OFFSETS_LIMIT ? this.finishU32() : this.finish();
  }
}

/** An Int32Array pushed one value at a time (Growing); `finish` makes it exactly its length. */
export class GrowingI32 extends Growing<Int32Array> {
  constructor(capacity: number, scratch: Scratch | null = null) {
    super(capacity, (n) => new Int32Array(n), scratch && ((n) => scratch.int32(n, true)));
  }
  push(v: number): void {
    if (this.pos === this.a.length) this.next();
    this.a[this.pos++] = v;
    this.length++;
  }
}

/** Bytes written into one chunk before the next starts: no doubling copies, at most one chunk unused. */
const CHUNK_BYTES = 32 << 20;

/**
 * The arena a builder appends its full chunks to: a resizable ArrayBuffer, which reserves address
 * space up front and takes memory only as it grows, in place. The finished arena is a view of it,
 * so a finish copies nothing: before, every chunk and the exact-size copy were alive together
 * until a garbage collection, twice the arena (+2.4 GB for the outfits list at 1M). Null where this
 * Node has no resizable ArrayBuffer of that size (the chunks are then copied into one Buffer).
 */
function reserveArena(): ArrayBuffer | null {
  // Node 20 allows 4 GiB, the longest Buffer it has; later Nodes more (a 1M arena is under 4 GiB anyway).
  for (const max of [Math.min(constants.MAX_LENGTH, 2 ** 34), 2 ** 32 - 1]) {
    try {
      return new (ArrayBuffer as new (length: number, options: { maxByteLength: number }) => ArrayBuffer)(0, { maxByteLength: max });
    } catch {
      // try the next size
    }
  }
  return null;
}

/**
 * Collects the JSON text of each record, chunk after chunk, then into one Buffer of the exact size.
 * A record is added as text (`add`) or written through the ByteSink (`begin`, then the bytes, `gap`
 * at its late value's place), where the writer reads `at` for the byte offsets of the cuts a reader
 * needs to copy part of it (a detail's run of list fields).
 */
export class FragmentBuilder implements ByteSink {
  private chunks: Buffer[] = [];
  /** The chunk being written: a ByteSink, so a record's JSON can be written into it directly (json-bytes.ts). */
  buf: Buffer;
  pos = 0;
  /** Bytes in the chunks before `buf`. */
  private base = 0;
  /** Where the full chunks go (reserveArena), or null: then they are kept in `chunks` until finish. */
  private arena: ArrayBuffer | null = reserveArena();
  private readonly starts: GrowingF64;
  private readonly gaps: GrowingF64 | null;
  private readonly keys: GrowingF64 | null;

  /** `scratch`: where the offsets' chunks come from (Growing); `gapped`: each record has a gap (a late value's, or an embedded record's: ListEmbed). */
  constructor(
    size: number,
    private readonly late: LateField | null,
    bytes = CHUNK_BYTES,
    scratch: Scratch | null = null,
    gapped = late !== null,
  ) {
    this.starts = new GrowingF64(size + 1, scratch);
    this.gaps = gapped ? new GrowingF64(size, scratch) : null;
    this.keys = late ? new GrowingF64(size, scratch) : null;
    // A scratch buffer (scratch.ts): sized from the data file (9-26 MB at 10k), the chunk's free once
    // the arena was done raised glibc's mmap threshold to its size, and every later array of the load
    // came from malloc's heaps, whose freed memory stayed resident (10k, Node 26: 107 MB at ready).
    this.buf = scratchBuffer(Math.min(Math.max(bytes, 1 << 16), CHUNK_BYTES));
  }

  /** Bytes written so far: the offset in the finished arena of the next byte. */
  get at(): number {
    return this.base + this.pos;
  }

  /** Makes sure `n` more bytes fit in `buf` from `pos`: else the next chunk starts (a record may span two). */
  room(n: number): void {
    if (this.buf.length - this.pos >= n) return;
    if (this.arena !== null) this.append();
    else this.chunks.push(this.buf.subarray(0, this.pos));
    this.base += this.pos;
    // The chunk is reused once its bytes are in the arena: one chunk's memory for the whole build.
    if (this.arena === null || this.buf.length < n) this.buf = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, n));
    this.pos = 0;
  }

  /** Copies `buf[0, pos)` to the end of the arena, which grows in place. */
  private append(): void {
    const arena = this.arena as ArrayBuffer & { resize(n: number): void; readonly maxByteLength: number };
    const end = this.base + this.pos;
    if (end > arena.maxByteLength) throw new RangeError(`an arena of more than ${arena.maxByteLength} bytes`);
    arena.resize(end);
    this.buf.copy(new Uint8Array(arena, this.base, this.pos), 0, 0, this.pos);
  }

  private put(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: make room for the worst case, then write once.
    this.room(text.length * 3);
    this.pos += this.buf.write(text, this.pos);
  }

  /** Starts the next record, to be written through the ByteSink; `gap` marks its late value's place. */
  begin(): void {
    this.starts.push(this.at);
  }

  /** The late value of the record being written goes here, with `key` (or its embedded record: no key). */
  gap(key: number | null): void {
    this.gaps!.push(this.at);
    this.keys?.push(key ?? NaN);
  }

  /** Adds the next record: its whole JSON, or the text before and after its late value, and the late key. */
  add(head: string, tail: string | null = null, key: number | null = null): void {
    this.starts.push(this.at);
    this.put(head);
    if (this.gaps && this.keys) {
      this.gaps.push(this.at);
      this.keys.push(key ?? NaN);
      this.put(tail ?? '');
    }
  }

  get count(): number {
    return this.starts.length;
  }

  finish(): Fragments {
    this.starts.push(this.at);
    let bytes: Buffer;
    if (this.arena !== null) {
      // The last chunk's bytes appended; the arena as it is, a view of exactly its bytes.
      this.append();
      bytes = Buffer.from(this.arena, 0, this.at);
      this.arena = null;
    } else {
      // One exact-size copy; each chunk is let go as soon as it is copied.
      bytes = Buffer.allocUnsafeSlow(this.at);
      this.chunks.push(this.buf.subarray(0, this.pos));
      let at = 0;
      for (let i = 0; i < this.chunks.length; i++) {
        at += this.chunks[i]!.copy(bytes, at);
        this.chunks[i] = EMPTY_BUFFER;
      }
      this.chunks = [];
    }
    this.buf = Buffer.alloc(0);
    const end = bytes.length;
    return { bytes, starts: this.starts.finishOffsets(end), gaps: this.gaps?.finishOffsets(end) ?? null, late: this.late, keys: this.keys?.finish() ?? null };
  }
}

const EMPTY_BUFFER = Buffer.alloc(0);

/** The late value of record `id` on day `today` (yyyymmdd), as JSON text. */
export function lateText(f: Fragments, id: number, today: number): string {
  const key = f.keys![id]!;
  return key !== key ? 'null' : String(f.late!.value(key, today));
}

/** The late value of record `id` on `today`, NaN for null: computed once per item and send. */
export function lateValue(f: Fragments, id: number, today: number): number {
  const key = f.keys![id]!;
  return key !== key ? NaN : f.late!.value(key, today);
}

/** An integer short enough to write digit by digit (an age, a page number); anything else goes through String. */
const isSmallInteger = (v: number): boolean => v === Math.trunc(v) && v > -1e9 && v < 1e9;

/** Bytes of a number's JSON text (`null` for NaN), without making the text. */
export function numberLength(v: number): number {
  if (v !== v) return 4;
  if (!isSmallInteger(v)) return String(v).length;
  let n = v < 0 ? 2 : 1;
  for (let a = v < 0 ? -v : v; a >= 10; a = (a - (a % 10)) / 10) n++;
  return n;
}

/** Writes a number's JSON text (`null` for NaN) at `pos`, an integer digit by digit (no string, no native call); returns the position after it. */
export function writeNumber(v: number, out: Buffer, pos: number): number {
  if (v !== v) return pos + out.write('null', pos, 'latin1');
  if (!isSmallInteger(v)) return pos + out.write(String(v), pos, 'latin1');
  if (v < 0) out[pos++] = 0x2d; // -
  let a = v < 0 ? -v : v;
  const end = pos + numberLength(a);
  for (let at = end - 1; at >= pos; at--) {
    const digit = a % 10;
    out[at] = 0x30 + digit;
    a = (a - digit) / 10;
  }
  return end;
}

/** Bytes of record `id` as served on day `today`. */
export function fragmentLength(f: Fragments, id: number, today: number): number {
  const n = f.starts[id + 1]! - f.starts[id]!;
  const e = f.embed;
  if (e != null) return n + embedLength(e, sourceOf(e), e.ids[id]!);
  return f.gaps === null ? n : n + numberLength(lateValue(f, id, today));
}

/** Copies record `id` as served on day `today` into `out` at `pos`; returns the position after it. */
export function writeFragment(f: Fragments, id: number, today: number, out: Buffer, pos: number): number {
  const start = f.starts[id]!;
  const end = f.starts[id + 1]!;
  if (f.gaps === null) return pos + f.bytes.copy(out, pos, start, end);
  const gap = f.gaps[id]!;
  pos += f.bytes.copy(out, pos, start, gap);
  const e = f.embed;
  pos = e != null ? writeEmbedded(e, sourceOf(e), e.ids[id]!, out, pos) : writeNumber(lateValue(f, id, today), out, pos);
  return pos + f.bytes.copy(out, pos, gap, end);
}

/**
 * Arenas of more bytes than this have their page's records touched ahead of the join, and their cuts
 * read from one array (recordCuts): a smaller one (a 10k collection's, 3 MB) stays in the CPU's
 * last-level cache, where the touch is only more work (a page in cache: 3.28 -> 3.64 µs).
 */
let largeArenaBytes = 16 << 20;

/** Sets the size above which an arena is joined as a large one (tests: the large path on small data). */
export function joinLargeAbove(bytes: number): void {
  largeArenaBytes = bytes;
}

/** A record without a late value (its key NaN) in the cuts' key column. */
const NO_KEY = 0xffffffff;

/**
 * The cuts of each record of a large arena with a late field, interleaved: its start, its end, its
 * late value's gap and key, 4 words per record (16 bytes: 1.6 MB for 100k celebrities), made on the
 * first page joined from it and kept with it. Read from `starts`, `gaps` and `keys`, three arrays,
 * a record's cuts were three cache lines on three memory pages, missed for each record of a first
 * page (a page's records are scattered over the collection); here, one line. Null (the three arrays
 * then) when an offset or a key does not fit a word: an arena of 4 GiB or more, a key that is not a
 * whole number below 2^32 - 1. Made once per thread and arena, by its first join (at a start, that of
 * the first pages compressed ahead: http/compressed-bodies.ts warm; on a worker thread of --threads,
 * its first request for a page): 2-7 ms of CPU at 100k (Node 20).
 */
function recordCuts(f: Fragments, a: Arena): Uint32Array | null {
  if (a.cuts === undefined) a.cuts = makeCuts(f);
  return a.cuts;
}

/**
 * What a join reads of an arena besides its records, read once per arena, not per page (each a
 * generic property load or a getter call: 4 per page): its ArrayBuffer and offset there, whether its
 * bytes are touched ahead (touchRecords), its room for bodies, and its cuts once made (recordCuts).
 */
interface Arena {
  /** recordCuts's answer, undefined until a join of a large arena asks. */
  cuts: Uint32Array | null | undefined;
  readonly memory: ArrayBuffer;
  readonly base: number;
  readonly touch: boolean;
  /**
   * Its room for bodies (send-buffer.ts SendRoom), or null: the boot cache's reader makes one after the
   * group of sections a list arena is in. None in a first start's resizable ArrayBuffer
   * (FragmentBuilder): V8 writes a byte there slowly, and a join writes its commas and digits byte by
   * byte (a 20-record join in one process, Node 20: 2.97 -> 3.94 µs where plain memory gives 2.49;
   * Node 26: 2.96 -> 4.13).
   */
  readonly room: SendRoom | null;
}

/**
 * By arena, for as long as it lives: one WeakMap lookup a page. Was: the last arena joined, kept in
 * module variables (cutsFor, roomArena), which held its whole memory after a reload replaced it, until
 * a join of another arena.
 */
const arenas = new WeakMap<Fragments, Arena>();

function arenaOf(f: Fragments): Arena {
  let a = arenas.get(f);
  if (a === undefined) {
    const bytes = f.bytes;
    const memory = bytes.buffer as ArrayBuffer;
    a = { cuts: undefined, memory, base: bytes.byteOffset, touch: !(memory as ArrayBuffer & { readonly resizable?: boolean }).resizable, room: sendRoomOf(memory) };
    arenas.set(f, a);
  }
  return a;
}

function makeCuts(f: Fragments): Uint32Array | null {
  const { starts, gaps, keys } = f;
  if (gaps === null || keys === null || !(starts instanceof Uint32Array) || !(gaps instanceof Uint32Array)) return null;
  const n = starts.length - 1;
  const c = new Uint32Array(n * 4);
  for (let id = 0, at = 0; id < n; id++, at += 4) {
    const key = keys[id]!;
    if (key === key && !(key >= 0 && key < NO_KEY && Math.trunc(key) === key)) return null;
    c[at] = starts[id]!;
    c[at + 1] = starts[id + 1]!;
    c[at + 2] = gaps[id]!;
    c[at + 3] = key === key ? key : NO_KEY;
  }
  return c;
}

/**
 * joinFragments of a large arena with its cuts interleaved (recordCuts): the same bytes. A page of 20
 * celebrities at 100k, from memory no cache holds, in one process (Node 20, load 3): 7.8-10.5 ->
 * 6.6-8.9 µs (Node 26: 10.0 -> 8.9).
 */
function joinCuts(f: Fragments, a: Arena, c: Uint32Array, ids: ArrayLike<number>, today: number, head: Buffer, headLength: number, tail: Uint8Array): Buffer {
  const n = ids.length;
  const bytes = f.bytes;
  // Every record's cuts first, then a byte of every line of its bytes (touchRecords).
  let t = 0;
  for (let i = 0; i < n; i++) t += c[ids[i]! << 2]!;
  if (a.touch) {
    for (let i = 0; i < n; i++) {
      const at = ids[i]! << 2;
      const end = c[at + 1]!;
      for (let p = c[at]!; p < end; p += 64) t += bytes[p]!;
      t += bytes[end - 1]!;
    }
  }
  touched ^= t;
  if (pageValues.length < n) {
    pageValues = new Float64Array(n);
    pageWidths = new Uint8Array(n);
  }
  const values = pageValues;
  const widths = pageWidths;
  const late = f.late!;
  let length = headLength + tail.length + (n > 0 ? n - 1 : 0);
  for (let i = 0; i < n; i++) {
    const at = ids[i]! << 2;
    const key = c[at + 3]!;
    const v = key === NO_KEY ? NaN : late.value(key, today);
    const width = numberLength(v);
    values[i] = v;
    widths[i] = width;
    length += c[at + 1]! - c[at]! + width;
  }
  const arena = a.memory;
  const base = a.base;
  const room = a.room;
  const body = room === null ? null : roomBuffer(room, length);
  if (body !== null) {
    // In the arena's own memory: each record by copyWithin, no view of its bytes.
    const all = room!.all;
    let at = body.byteOffset; // where the room made it (a ring: send-buffer.ts SendRoom)
    copyHead(all, head, headLength, at);
    at += headLength;
    for (let i = 0; i < n; i++) {
      if (i > 0) all[at++] = 0x2c; // ,
      const k = ids[i]! << 2;
      const gap = base + c[k + 2]!;
      const end = base + c[k + 1]!;
      typedArrayCopyWithin.call(all, at, base + c[k]!, gap);
      at = writeNumber(values[i]!, all, at + gap - base - c[k]!);
      typedArrayCopyWithin.call(all, at, gap, end);
      at += end - gap;
    }
    for (let i = 0; i < tail.length; i++) all[at++] = tail[i]!;
    return body;
  }
  const out = sendBuffer(length);
  copyHead(out, head, headLength, 0);
  let pos = headLength;
  for (let i = 0; i < n; i++) {
    if (i > 0) out[pos++] = 0x2c; // ,
    const at = ids[i]! << 2;
    const start = c[at]!;
    const size = c[at + 1]! - start;
    typedArraySet.call(out, new Uint8Array(arena, base + start, size), pos);
    // The whole record, then its tail moved right by the value's width, the digits between.
    const gap = pos + c[at + 2]! - start;
    const after = pos + size;
    const width = widths[i]!;
    typedArrayCopyWithin.call(out, gap + width, gap, after);
    writeNumber(values[i]!, out, gap);
    pos = after + width;
  }
  for (let i = 0; i < tail.length; i++) out[pos++] = tail[i]!;
  return out;
}

/** Copies `head[0, headLength)` to `out` at `at` (each join's page envelope). */
function copyHead(out: Buffer, head: Buffer, headLength: number, at: number): void {
  typedArraySet.call(out, headLength === head.length ? head : new Uint8Array(head.buffer, head.byteOffset, headLength), at);
}

/** What touchRecords read, kept so that its loads are not optimized away. */
let touched = 0;

/**
 * Reads the cuts of records `ids`, then a byte of every cache line of their bytes, in loops that do
 * nothing else: the CPU has many of the page's cache misses in flight at once, where the passes that
 * follow (a call per record for its copy) would wait for them one record at a time. At 100k, a page
 * of 20 records from memory no cache holds, in one process: 9.6-10.8 -> 7.8-9.1 µs (issue 20).
 * Not the bytes of an arena in a resizable ArrayBuffer (a first start's, until a restart reads the
 * boot cache): V8 reads those one by one slowly (Node 20: +0.5 µs a page instead of -1.2).
 */
function touchRecords(f: Fragments, ids: ArrayLike<number>, n: number): void {
  const { starts, gaps, keys, bytes } = f;
  let t = 0;
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    t += starts[id]!;
    if (gaps !== null) t += gaps[id]! + (keys === null ? 0 : keys[id]!);
  }
  if (!(bytes.buffer as ArrayBuffer & { readonly resizable?: boolean }).resizable) {
    for (let i = 0; i < n; i++) {
      const id = ids[i]!;
      const end = starts[id + 1]!;
      for (let p = starts[id]!; p < end; p += 64) t += bytes[p]!;
      t += bytes[end - 1]!;
    }
  }
  touched ^= t; // read again by the next call: the loads stay
}

/** The late values of a page's records and their widths in digits, reused from send to send (a page is at most a few hundred records). */
let pageValues = new Float64Array(256);
let pageWidths = new Uint8Array(256);

/**
 * `head[0, headLength)`, then records `ids` as served on `today` joined by commas, then `tail` (a
 * few bytes), in one buffer of the exact size: one pass measures (each late value and its width
 * computed once, kept for the second pass), one writes (a copy per record, its tail moved right in
 * place for its late value's digits).
 *
 * Each record is copied by `set` of a Uint8Array over its bytes rather than `Buffer#copy`: on Node 20
 * that makes the same view, after argument checks and property loads that had seen every Buffer of
 * the process (megamorphic); 20 records at 100k, in one process: 3.8 -> 2.9 µs (Node 26: the same,
 * 3.1).
 */
export function joinFragments(f: Fragments, ids: ArrayLike<number>, today: number, head: Buffer, headLength: number, tail: Uint8Array): Buffer {
  const n = ids.length;
  const starts = f.starts;
  const gaps = f.gaps;
  const bytes = f.bytes;
  if (f.embed != null) return joinEmbedded(f, f.embed, ids, head, headLength, tail);
  const a = arenaOf(f);
  const arena = a.memory;
  const base = a.base;
  if (bytes.length > largeArenaBytes) {
    const c = gaps === null ? null : recordCuts(f, a);
    if (c !== null) return joinCuts(f, a, c, ids, today, head, headLength, tail);
    touchRecords(f, ids, n);
  }
  let length = headLength + tail.length + (n > 0 ? n - 1 : 0);
  if (gaps === null) {
    for (let i = 0; i < n; i++) {
      const id = ids[i]!;
      length += starts[id + 1]! - starts[id]!;
    }
  } else {
    if (pageValues.length < n) {
      pageValues = new Float64Array(n);
      pageWidths = new Uint8Array(n);
    }
    const values = pageValues;
    const widths = pageWidths;
    const keys = f.keys!;
    const late = f.late!;
    for (let i = 0; i < n; i++) {
      const id = ids[i]!;
      const key = keys[id]!;
      const v = key !== key ? NaN : late.value(key, today);
      const width = numberLength(v);
      values[i] = v;
      widths[i] = width;
      length += starts[id + 1]! - starts[id]! + width;
    }
  }
  const room = a.room;
  const body = room === null ? null : roomBuffer(room, length);
  if (body !== null) {
    // In the arena's own memory: each record by copyWithin (two around its gap), no view of its bytes.
    const all = room!.all;
    let at = body.byteOffset; // where the room made it (a ring: send-buffer.ts SendRoom)
    copyHead(all, head, headLength, at);
    at += headLength;
    for (let i = 0; i < n; i++) {
      if (i > 0) all[at++] = 0x2c; // ,
      const id = ids[i]!;
      const start = base + starts[id]!;
      const end = base + starts[id + 1]!;
      if (gaps === null) {
        typedArrayCopyWithin.call(all, at, start, end);
        at += end - start;
      } else {
        const gap = base + gaps[id]!;
        typedArrayCopyWithin.call(all, at, start, gap);
        at = writeNumber(pageValues[i]!, all, at + gap - start);
        typedArrayCopyWithin.call(all, at, gap, end);
        at += end - gap;
      }
    }
    for (let i = 0; i < tail.length; i++) all[at++] = tail[i]!;
    return body;
  }
  const out = sendBuffer(length);
  copyHead(out, head, headLength, 0);
  let pos = headLength;
  for (let i = 0; i < n; i++) {
    if (i > 0) out[pos++] = 0x2c; // ,
    const id = ids[i]!;
    const start = starts[id]!;
    const size = starts[id + 1]! - start;
    typedArraySet.call(out, new Uint8Array(arena, base + start, size), pos);
    if (gaps === null) {
      pos += size;
    } else {
      // The whole record copied, then its tail moved right by the value's width in place (copyWithin
      // makes no view), the value's digits between.
      const at = pos + gaps[id]! - start;
      const after = pos + size;
      const width = pageWidths[i]!;
      typedArrayCopyWithin.call(out, at + width, at, after);
      writeNumber(pageValues[i]!, out, at);
      pos = after + width;
    }
  }
  for (let i = 0; i < tail.length; i++) out[pos++] = tail[i]!;
  return out;
}

/**
 * joinFragments of list items with an embedded record at their gaps (ListEmbed): each item is its
 * bytes up to the gap, the embedded record's head and fields copied from the other collection's list
 * arena, then the rest of its bytes. The embedded records' cuts are read in a first pass (their sizes),
 * with a byte of each item's bytes when the arena is large (touchRecords). In the arena's room when it
 * has one (joinFragments): a page of 20 outfits at 10k, Node 20, 61 views made (5,866 bytes of heap) ->
 * 21 (2,021).
 */
function joinEmbedded(f: Fragments, e: ListEmbed, ids: ArrayLike<number>, head: Buffer, headLength: number, tail: Uint8Array): Buffer {
  const n = ids.length;
  const { starts, bytes } = f;
  const gaps = f.gaps!;
  const s = sourceOf(e);
  const targets = e.ids;
  if (bytes.length > largeArenaBytes) touchRecords(f, ids, n);
  let length = headLength + tail.length + (n > 0 ? n - 1 : 0);
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    length += starts[id + 1]! - starts[id]! + embedLength(e, s, targets[id]!);
  }
  const a = arenaOf(f);
  const arena = a.memory;
  const base = a.base;
  const room = a.room;
  const body = room === null ? null : roomBuffer(room, length);
  if (body !== null) {
    // In the arena's own memory (joinFragments): the item's two runs by copyWithin, no view of them;
    // the embedded record, from another arena, by a view of its bytes (writeEmbedded).
    const all = room!.all;
    let at = body.byteOffset; // where the room made it (a ring: send-buffer.ts SendRoom)
    copyHead(all, head, headLength, at);
    at += headLength;
    for (let i = 0; i < n; i++) {
      if (i > 0) all[at++] = 0x2c; // ,
      const id = ids[i]!;
      const start = base + starts[id]!;
      const gap = base + gaps[id]!;
      const end = base + starts[id + 1]!;
      typedArrayCopyWithin.call(all, at, start, gap);
      at = writeEmbedded(e, s, targets[id]!, all, at + gap - start);
      typedArrayCopyWithin.call(all, at, gap, end);
      at += end - gap;
    }
    for (let i = 0; i < tail.length; i++) all[at++] = tail[i]!;
    return body;
  }
  const out = sendBuffer(length);
  copyHead(out, head, headLength, 0);
  let pos = headLength;
  for (let i = 0; i < n; i++) {
    if (i > 0) out[pos++] = 0x2c; // ,
    const id = ids[i]!;
    const start = starts[id]!;
    const gap = gaps[id]!;
    const end = starts[id + 1]!;
    typedArraySet.call(out, new Uint8Array(arena, base + start, gap - start), pos);
    pos = writeEmbedded(e, s, targets[id]!, out, pos + gap - start);
    typedArraySet.call(out, new Uint8Array(arena, base + gap, end - gap), pos);
    pos += end - gap;
  }
  for (let i = 0; i < tail.length; i++) out[pos++] = tail[i]!;
  return out;
}

/** Record `id` alone: a view without copying when nothing is late. */
export function fragment(f: Fragments, id: number, today: number): Buffer {
  if (f.gaps === null) return f.bytes.subarray(f.starts[id]!, f.starts[id + 1]!);
  const out = sendBuffer(fragmentLength(f, id, today));
  writeFragment(f, id, today, out, 0);
  return out;
}
