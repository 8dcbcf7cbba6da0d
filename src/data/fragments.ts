// The pre-serialized JSON of every record of a collection, back to back in one Buffer: the heap
// holds a few large objects instead of millions of small ones, so garbage collection stays cheap at
// a million records. A field that depends on the serving day (celebrity `age`) is a gap filled per
// request from a per-record key, so the data is right on any day without re-serializing.
import type { LateField } from '../resources/types.ts';

export interface Fragments {
  readonly bytes: Buffer;
  /** Record i is `bytes[starts[i], starts[i + 1])`. */
  readonly starts: Float64Array;
  /** Where the late value goes inside record i (an offset into `bytes`), or null without a late field. */
  readonly gaps: Float64Array | null;
  readonly late: LateField | null;
  /** The late field's key of each record (NaN: the value is null). */
  readonly keys: Float64Array | null;
}

/** yyyymmdd of the UTC day of `ms`: late fields are computed from it. */
export function utcYmd(ms: number): number {
  const d = new Date(ms);
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
}

/** Collects the JSON text of each record into one growing Buffer. */
export class FragmentBuilder {
  private buf = Buffer.allocUnsafe(1 << 20);
  private pos = 0;
  private readonly starts: Float64Array;
  private readonly gaps: Float64Array | null;
  private readonly keys: Float64Array | null;
  private count = 0;

  constructor(
    size: number,
    private readonly late: LateField | null,
  ) {
    this.starts = new Float64Array(size + 1);
    this.gaps = late ? new Float64Array(size) : null;
    this.keys = late ? new Float64Array(size) : null;
  }

  private put(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: make room for the worst case, then write once.
    if (this.buf.length - this.pos < text.length * 3) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + text.length * 3));
      this.buf.copy(bigger, 0, 0, this.pos);
      this.buf = bigger;
    }
    this.pos += this.buf.write(text, this.pos);
  }

  /** Adds the next record: its whole JSON, or the text before and after its late value, and the late key. */
  add(head: string, tail: string | null = null, key: number | null = null): void {
    this.starts[this.count] = this.pos;
    this.put(head);
    if (this.gaps && this.keys) {
      this.gaps[this.count] = this.pos;
      this.keys[this.count] = key ?? NaN;
      this.put(tail ?? '');
    }
    this.count++;
  }

  finish(): Fragments {
    this.starts[this.count] = this.pos;
    // Copy to the exact size: the doubling leaves up to half the buffer unused.
    return { bytes: Buffer.from(this.buf.subarray(0, this.pos)), starts: this.starts, gaps: this.gaps, late: this.late, keys: this.keys };
  }
}

/** The late value of record `id` on day `today` (yyyymmdd), as JSON text. */
function lateText(f: Fragments, id: number, today: number): string {
  const key = f.keys![id]!;
  return key !== key ? 'null' : String(f.late!.value(key, today));
}

/** Bytes of record `id` as served on day `today`. */
export function fragmentLength(f: Fragments, id: number, today: number): number {
  const n = f.starts[id + 1]! - f.starts[id]!;
  return f.gaps === null ? n : n + lateText(f, id, today).length;
}

/** Copies record `id` as served on day `today` into `out` at `pos`; returns the position after it. */
export function writeFragment(f: Fragments, id: number, today: number, out: Buffer, pos: number): number {
  const start = f.starts[id]!;
  const end = f.starts[id + 1]!;
  if (f.gaps === null) return pos + f.bytes.copy(out, pos, start, end);
  const gap = f.gaps[id]!;
  pos += f.bytes.copy(out, pos, start, gap);
  pos += out.write(lateText(f, id, today), pos, 'latin1');
  return pos + f.bytes.copy(out, pos, gap, end);
}

/** Record `id` alone: a view without copying when nothing is late. */
export function fragment(f: Fragments, id: number, today: number): Buffer {
  if (f.gaps === null) return f.bytes.subarray(f.starts[id]!, f.starts[id + 1]!);
  const out = Buffer.allocUnsafe(fragmentLength(f, id, today));
  writeFragment(f, id, today, out, 0);
  return out;
}
