// Texts a build keeps until its finish as their UTF-16 units back to back, with an offset each, not
// as a JS string each (issue 19): at 100k the builder's `_id`s (and search texts) lived from their
// record's `add` to the collection's `finish`, so each string was promoted to the old generation and
// then dead; here they are a few chunks of the build's scratch (scratch.ts), let go with it.
import { endianness } from 'node:os';
import type { Scratch } from './scratch.ts';
import { GrowingI32 } from './fragments.ts';

/** Text i is `units[starts[i], starts[i + 1])`: one byte a unit when every unit is below 256, else two. */
export interface UnitTexts {
  readonly units: Uint8Array | Uint16Array;
  readonly starts: Int32Array;
}

/** Units per chunk (a text longer than that gets a chunk of its own). */
const CHUNK_UNITS = 64 << 10;

/** Texts added one at a time (`add`), joined once into one array of units (`finish`). */
export class UnitTextsBuilder {
  private full: (Uint8Array | Uint16Array)[] = [];
  private a: Uint8Array | Uint16Array;
  private pos = 0;
  private total = 0;
  /** Some unit is 256 or more: every chunk is a Uint16Array. */
  private wide = false;
  private readonly ends: GrowingI32;

  constructor(private readonly scratch: Scratch) {
    this.a = scratch.uint8(CHUNK_UNITS, true);
    this.ends = new GrowingI32(0, scratch);
  }

  /** Texts added. */
  get length(): number {
    return this.ends.length;
  }

  add(s: string): void {
    const n = s.length;
    if (this.a.length - this.pos < n) this.next(n);
    let a = this.a;
    let p = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0xff && !this.wide) {
        this.pos = p;
        this.widen();
        a = this.a;
      }
      a[p++] = c;
    }
    this.pos = p;
    this.total += n;
    this.ends.push(this.total);
  }

  /** A new chunk with room for `n` units. */
  private next(n: number): void {
    this.full.push(this.a.subarray(0, this.pos));
    const size = Math.max(n, CHUNK_UNITS);
    this.a = this.wide ? this.scratch.uint16(size, true) : this.scratch.uint8(size, true);
    this.pos = 0;
  }

  /** Every chunk as 16-bit units from here on (a unit of 256 or more is met). */
  private widen(): void {
    this.wide = true;
    this.full = this.full.map((c) => {
      const w = this.scratch.uint16(c.length, true);
      w.set(c);
      return w;
    });
    const w = this.scratch.uint16(this.a.length, true);
    w.set(this.a.subarray(0, this.pos));
    this.a = w;
  }

  /**
   * The texts as one array of units and their starts; from `scratch` when given (for the build's
   * working arrays), else arrays of their own. Nothing may be added after.
   */
  finish(scratch: Scratch | null = null): UnitTexts {
    const n = this.ends.length;
    const starts = scratch === null ? new Int32Array(n + 1) : scratch.int32(n + 1);
    this.ends.copyTo(starts.subarray(1));
    this.ends.release();
    const total = this.total;
    const units = this.wide ? (scratch === null ? new Uint16Array(total) : scratch.uint16(total)) : scratch === null ? new Uint8Array(total) : scratch.uint8(total);
    let at = 0;
    for (const c of this.full) {
      units.set(c, at);
      at += c.length;
    }
    units.set(this.a.subarray(0, this.pos), at);
    this.full = [];
    this.a = new Uint8Array(0);
    this.pos = 0;
    return { units, starts };
  }
}

/** A Uint16Array's bytes are UTF-16LE here (every platform Node builds for but big-endian ones). */
const LITTLE_ENDIAN = endianness() === 'LE';

/** Text `i` of `t`, decoded: one string made natively, not from an array of its units. */
export function textOf(t: UnitTexts, i: number): string {
  const from = t.starts[i]!;
  const n = t.starts[i + 1]! - from;
  const u = t.units;
  if (u instanceof Uint8Array) return Buffer.from(u.buffer, u.byteOffset + from, n).toString('latin1');
  if (LITTLE_ENDIAN) return Buffer.from(u.buffer, u.byteOffset + from * 2, n * 2).toString('utf16le');
  let s = '';
  for (let p = 0; p < n; p++) s += String.fromCharCode(u[from + p]!);
  return s;
}

/** `texts` as UnitTexts (tests and callers that have strings). */
export function unitTextsOf(texts: readonly string[], scratch: Scratch): UnitTexts {
  const b = new UnitTextsBuilder(scratch);
  for (const t of texts) b.add(t);
  return b.finish(scratch);
}
