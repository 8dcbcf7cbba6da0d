// What a collection's records were made from, by groups of RECORD_GROUP records in file order (issue
// 19: after an edit of one record, only that record is rebuilt, src/data/patch.ts): per group, a
// digest of its source bytes (SHA-256, native: the bytes of each group hashed once as the file is
// read, about 0.15 s per 256 MB) and digests of what the indexes take of its records and do not keep
// per record: the _id and filter values, and apart the sort keys (patch.ts compares the slug, search
// text, embedded ids and range value with the index's own). A group whose source digest is unchanged
// holds the same records; one whose source changed but whose digests (and those values) did not
// changes only the records' JSON, never an order, a posting or a search gram.
import { createHash, type Hash } from 'node:crypto';
import { GrowingI32 } from './fragments.ts';

/** Records per group: a changed group's records are parsed, validated and written again, the others copied. */
export const RECORD_GROUP = 64;

export interface RecordGroups {
  /** 4 words (128 bits of SHA-256) per group of the source bytes of its records; null: built from arrays. */
  readonly sources: Uint32Array | null;
  /** 2 words per group: the digest of the _id and filter values of its records (IndexDigest). */
  readonly keys: Uint32Array;
  /** 2 words per group: the digest of the sort keys of its records. */
  readonly sorts: Uint32Array;
}

export const groupCount = (records: number): number => Math.ceil(records / RECORD_GROUP);

/**
 * The source digests of a file's groups, fed the records of each chunk as the reader cuts them
 * (records.ts readRecords `onSlices`): each record's bytes, back to back without what separates them,
 * so a group's digest is that of its records alone, the same however the reader's chunks cut the file
 * (with the separators between a group's first and last record in one chunk, a group cut by a chunk's
 * end differed from the same group read whole, so an edit that moved the chunks' ends made a few
 * groups look changed). The same digest is the same records: a group matched against one of valid
 * records, JSON objects, whose bytes back to back cut into those objects alone (each ends where its
 * braces close, and the first starts the bytes). A hash update per record: about 15 ms more per 270k
 * records than one per group.
 */
export class SourceDigester {
  private hash: Hash | null = null;
  private words = new GrowingI32(64);
  /** Records seen. */
  count = 0;
  /** Called with each group as it completes: its number and its 4 words. */
  onGroup: ((g: number, digest: Uint32Array) => void) | null = null;

  slices(buf: Uint8Array, starts: readonly number[], ends: readonly number[]): void {
    for (let k = 0; k < starts.length; k++) {
      (this.hash ??= createHash('sha256')).update(buf.subarray(starts[k], ends[k]));
      if (++this.count % RECORD_GROUP === 0) this.flush();
    }
  }

  /** Takes over what `from` was fed (the same file's records, hashed by an earlier read of them: collect.ts); `from` is left empty. */
  adopt(from: SourceDigester): void {
    if (this.count !== 0) throw new Error('a digester already fed takes over no other');
    this.hash = from.hash;
    this.words.release();
    this.words = from.words;
    this.count = from.count;
    from.hash = null;
    from.words = new GrowingI32(0);
    from.count = 0;
  }

  private flush(): void {
    const d = this.hash!.digest();
    this.hash = null;
    const digest = new Uint32Array(4);
    for (let w = 0; w < 4; w++) this.words.push((digest[w] = d.readUInt32LE(w * 4)));
    this.onGroup?.(this.words.length / 4 - 1, digest);
  }

  /** The digests of the groups of `records` records, or null when that is not how many were read. */
  finish(records: number): Uint32Array | null {
    if (this.hash !== null) this.flush();
    return records === this.count ? unsigned(this.words.finish()) : null;
  }
}

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);

/**
 * The index digest of each group: what the indexes take of its records, mixed in as each record is
 * added (two 32-bit multiplicative lanes: about 0.1 µs per record).
 */
export class IndexDigest {
  private a = 0;
  private b = 0;
  private words = new GrowingI32(64);
  private n = 0;

  /** Before a record's values. */
  begin(): void {
    if (this.n % RECORD_GROUP === 0) (this.a = 0x811c9dc5), (this.b = 0x2545f491);
  }

  int(x: number): void {
    this.a = Math.imul(this.a ^ x, 0x01000193);
    this.a ^= this.a >>> 15;
    this.b = Math.imul(this.b ^ x, 0x5bd1e995);
    this.b ^= this.b >>> 13;
  }

  num(v: number): void {
    if (v !== v) return this.int(0x7ff80001);
    F64[0] = v;
    this.int(U32[0]!);
    this.int(U32[1]!);
  }

  str(s: string | null | undefined): void {
    if (s === null || s === undefined) return this.int(-1);
    this.int(s.length);
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 13;
    }
    this.a = a;
    this.b = b;
  }

  /** A filter's value as the record gives it (a string, a number, a list of them, or none). */
  value(v: unknown): void {
    if (Array.isArray(v)) {
      this.int(-2);
      this.int(v.length);
      for (const x of v) this.value(x);
    } else if (v === null || v === undefined) this.int(-1);
    else this.str(String(v));
  }

  /** After a record's values. */
  end(): void {
    this.n++;
    if (this.n % RECORD_GROUP === 0) this.words.push(this.a), this.words.push(this.b);
  }

  finish(): Uint32Array {
    if (this.n % RECORD_GROUP !== 0) this.words.push(this.a), this.words.push(this.b), (this.n = Math.ceil(this.n / RECORD_GROUP) * RECORD_GROUP);
    return unsigned(this.words.finish());
  }
}

/** The same words read as unsigned (the digests are bits, kept as Uint32Array). */
const unsigned = (words: Int32Array): Uint32Array => new Uint32Array(words.buffer, words.byteOffset, words.length);
