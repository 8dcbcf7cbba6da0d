// A set of strings, each with a dense id, for the load's per-record keys (_id and slug checks, links
// by slug, search texts) without a Map or Set: from V8 14 (Node 26) a Map or Set internalizes every
// string key it is given, looked up or added, so ~1M distinct keys doubled V8's string table (one
// malloc'd block) up to 16 MiB, and the frees of its old 1, 2, 4 and 8 MiB blocks raised glibc's
// mmap threshold to 8 MiB (scratch.ts: every block below it then comes from malloc's heaps, which
// keep it resident once freed). Here the keys stay in a plain array and the slots are a JS array of
// small integers: on V8's heap, never malloc'd, and no string is internalized.
import { Scratch } from './scratch.ts';

/** A string's hash for the slots (FNV-1a over its UTF-16 units, then mixed): a non-negative small integer. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mixed(h);
}

/** FNV-1a's state mixed into hashOf's result. */
function mixed(h: number): number {
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & 0x3fffffff;
}

const MIN_SLOTS = 16;

/** Zeros that zeros() copies from; never changed. */
const ZERO_BLOCK = 1 << 14;
let zeroBlock: number[] | null = null;

/**
 * `n` zeros as a packed array of small integers, made in one allocation of its exact size: copies of
 * a block of zeros joined by one concat. Pushed one at a time (as before), the array was grown and
 * copied about 30 times on its way to 2M slots, and a load at 100k allocated 321 MB of V8's heap
 * in these tables (most of it in the large-object space, which counts towards the next full
 * collection) for a few tens of MB kept; and each push was 5x slower than the copy.
 */
export function zeros(n: number): number[] {
  let z = zeroBlock;
  if (z === null) {
    z = zeroBlock = [];
    for (let i = 0; i < ZERO_BLOCK; i++) z.push(0);
  }
  if (n <= ZERO_BLOCK) return z.slice(0, n);
  const more: number[][] = [];
  for (let left = n - ZERO_BLOCK; left > 0; left -= ZERO_BLOCK) more.push(left >= ZERO_BLOCK ? z : z.slice(0, left));
  return z.concat(...more);
}

/**
 * Distinct strings with ids 0, 1, 2... in the order they were added.
 *
 * A slot holds the key's id + 1 in its low bits (those of the mask) and the rest of the key's hash
 * above them, so a probe tells a different key by its slot alone: the key's string is read only
 * when the hashes agree (at 100k, reading the string of each key probed past, a cache miss each,
 * was most of the load's time in this table). The hashes are kept by id too, so growing the table
 * reads no string.
 */
export class StringKeys {
  /**
   * The keys by id, then zeros: made by reserve() at the size expected (one allocation, not grown
   * by copies of a push at a time, each promoted at 100k), pushed past it when there are more.
   */
  private list: (string | number)[] = [];
  private count = 0;
  /**
   * hashOf of each key, by id, in an array of the most keys the table holds before it grows (half its slots, and one): made with the
   * slots, not grown a push at a time (on Node 26 each step of a large array's growth is a new
   * object in the young generation's large-object space, and enough of them set off a scavenge).
   */
  private hashes: number[];
  /** Open addressing, linear probing, at most half full: 0, or (hash & ~mask) | (id + 1). */
  private slots: number[];
  private mask: number;

  constructor(expected = 0) {
    this.slots = zeros(MIN_SLOTS);
    this.hashes = zeros((MIN_SLOTS >> 1) + 1);
    this.mask = MIN_SLOTS - 1;
    this.reserve(expected);
  }

  get size(): number {
    return this.count;
  }

  /** The keys, by id. */
  keys(): readonly string[] {
    if (this.list.length > this.count) this.list.length = this.count;
    return this.list as string[];
  }

  /**
   * Room for `expected` keys in all, made once: the slots and hashes at their final size (rebuilt
   * once, not doubled on the way: each doubling's arrays were promoted and then dead at 100k), and
   * the key list. More keys than expected are still added (the table grows as before).
   */
  reserve(expected: number): void {
    let n = this.slots.length;
    while (n < expected * 2) n *= 2;
    if (n > this.slots.length) this.rehash(n);
    if (expected > this.list.length) {
      const list = zeros(expected) as (string | number)[];
      for (let id = 0; id < this.count; id++) list[id] = this.list[id]!;
      this.list = list;
    }
  }

  /** The id of `s`, or -1. */
  find(s: string): number {
    const { slots, list: keys, mask } = this;
    const h = hashOf(s);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const at = slots[i]!;
      if (at === 0) return -1;
      if (((at ^ h) & ~mask) === 0 && keys[(at & mask) - 1] === s) return (at & mask) - 1;
    }
  }

  has(s: string): boolean {
    return this.find(s) >= 0;
  }

  /** The id of `s`, added when absent (then it is `size - 1`). */
  add(s: string): number {
    const { slots, list: keys, mask } = this;
    const h = hashOf(s);
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const at = slots[i]!;
      if (at === 0) break;
      if (((at ^ h) & ~mask) === 0 && keys[(at & mask) - 1] === s) return (at & mask) - 1;
    }
    const id = this.count++;
    this.hashes[id] = h;
    if (id < keys.length) keys[id] = s;
    else keys.push(s);
    slots[i] = (h & ~mask) | (id + 1);
    if (this.count * 2 > slots.length) this.rehash(slots.length * 2);
    return id;
  }

  /** The slots and hashes made again for `n` slots. */
  private rehash(n: number): void {
    const slots = zeros(n);
    const mask = n - 1;
    const was = this.hashes;
    const hashes = zeros((n >> 1) + 1);
    for (let id = 0; id < this.count; id++) {
      const h = (hashes[id] = was[id]!);
      let i = h & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = (h & ~mask) | (id + 1);
    }
    this.slots = slots;
    this.hashes = hashes;
    this.mask = mask;
  }
}

/** Units per chunk of UnitKeys (a longer key gets a chunk of its own). */
const KEY_CHUNK_UNITS = 64 << 10;

/**
 * Distinct strings with ids 0, 1, 2... in the order added, as StringKeys, but each kept as its UTF-16
 * units (one byte a unit while every unit is below 256) in chunks of a Scratch, with typed slots: no
 * string is held. For keys kept for a file until it is read (collect.ts: each record's `_id` and
 * slug, a duplicate check, and the slugs references and links into it find): a string held that long
 * was promoted to the old generation and then dead (at 100k, ~16 MB for the 270k outfits' `_id`s
 * alone, with StringKeys' arrays), where it can now die young with its record.
 */
export class UnitKeys {
  private readonly scratch = new Scratch();
  /** The chunks, the last one being filled. */
  private chunks: (Uint8Array | Uint16Array)[] = [];
  private pos = 0;
  /** Some unit is 256 or more: every chunk is a Uint16Array. */
  private wide = false;
  /** Key i is chunks[chunkOf[i]] from startOf[i], lengthOf[i] units. */
  private chunkOf: Int32Array = new Int32Array(0);
  private startOf: Int32Array = new Int32Array(0);
  private lengthOf: Int32Array = new Int32Array(0);
  private count = 0;
  /** Open addressing, linear probing, at most half full: 0, or (hash & ~mask) | (id + 1). */
  private slots: Int32Array;
  private mask: number;

  constructor(expected = 0) {
    this.slots = new Int32Array(MIN_SLOTS);
    this.mask = MIN_SLOTS - 1;
    this.reserve(expected);
  }

  get size(): number {
    return this.count;
  }

  /** Room for `expected` keys in all, made once (more are still added: the tables grow). */
  reserve(expected: number): void {
    let n = this.slots.length;
    while (n < expected * 2) n *= 2;
    if (n > this.slots.length) this.rehash(n);
    if (expected > this.chunkOf.length) this.room(expected);
  }

  /** The id of `s`, or -1. */
  find(s: string): number {
    const h = hashOf(s);
    const { slots, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const at = slots[i]!;
      if (at === 0) return -1;
      if (((at ^ h) & ~mask) === 0 && this.equal((at & mask) - 1, s)) return (at & mask) - 1;
    }
  }

  has(s: string): boolean {
    return this.find(s) >= 0;
  }

  /** The id of `s`, added when absent (then it is `size - 1`). */
  add(s: string): number {
    const h = hashOf(s);
    const { slots, mask } = this;
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const at = slots[i]!;
      if (at === 0) break;
      if (((at ^ h) & ~mask) === 0 && this.equal((at & mask) - 1, s)) return (at & mask) - 1;
    }
    const id = this.count++;
    if (id === this.chunkOf.length) this.room(Math.max(16, id * 2));
    this.put(id, s);
    slots[i] = (h & ~mask) | (id + 1);
    if (this.count * 2 > slots.length) this.rehash(slots.length * 2);
    return id;
  }

  /** Whether key `id` is `s`. */
  private equal(id: number, s: string): boolean {
    const n = this.lengthOf[id]!;
    if (n !== s.length) return false;
    const c = this.chunks[this.chunkOf[id]!]!;
    const from = this.startOf[id]!;
    for (let k = 0; k < n; k++) if (c[from + k] !== s.charCodeAt(k)) return false;
    return true;
  }

  /** Key `id`'s units written. */
  private put(id: number, s: string): void {
    const n = s.length;
    let c = this.chunks[this.chunks.length - 1];
    if (c === undefined || c.length - this.pos < n) {
      const size = Math.max(n, Math.min(KEY_CHUNK_UNITS, Math.max(1024, this.chunkOf.length * 8)));
      this.chunks.push((c = this.wide ? this.scratch.uint16(size) : this.scratch.uint8(size)));
      this.pos = 0;
    }
    let p = this.pos;
    for (let k = 0; k < n; k++) {
      const u = s.charCodeAt(k);
      if (u > 0xff && !this.wide) {
        this.widen();
        c = this.chunks[this.chunks.length - 1]!;
      }
      c[p++] = u;
    }
    this.chunkOf[id] = this.chunks.length - 1;
    this.startOf[id] = this.pos;
    this.lengthOf[id] = n;
    this.pos = p;
  }

  /** Every chunk as 16-bit units from here on (a unit of 256 or more is met). */
  private widen(): void {
    this.wide = true;
    this.chunks = this.chunks.map((c) => {
      const w = this.scratch.uint16(c.length);
      w.set(c);
      return w;
    });
  }

  /** The per-key arrays made for `n` keys. */
  private room(n: number): void {
    const grow = (a: Int32Array) => {
      const b = this.scratch.int32(n);
      b.set(a.subarray(0, this.count));
      return b;
    };
    this.chunkOf = grow(this.chunkOf);
    this.startOf = grow(this.startOf);
    this.lengthOf = grow(this.lengthOf);
  }

  /** The slots made again for `n` slots, each key's hash made again from its units. */
  private rehash(n: number): void {
    const slots = this.scratch.int32(n);
    const mask = n - 1;
    for (let id = 0; id < this.count; id++) {
      const c = this.chunks[this.chunkOf[id]!]!;
      const from = this.startOf[id]!;
      const end = from + this.lengthOf[id]!;
      let h = 0x811c9dc5;
      for (let k = from; k < end; k++) h = Math.imul(h ^ c[k]!, 0x01000193);
      h = mixed(h);
      let i = h & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = (h & ~mask) | (id + 1);
    }
    this.slots = slots;
    this.mask = mask;
  }
}
