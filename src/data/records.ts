// Reads a data file (a JSON array of records) in chunks and cuts it into records by scanning bytes
// (strings, escapes, depth): the file is never one string, so its size is bounded by neither V8's
// longest string nor the heap, and each record is parsed alone and can be forgotten once written.
import { isUtf8 } from 'node:buffer';
import type { BigIntStats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { GrowingF64 } from './fragments.ts';
import { Scratch, scratchBuffer } from './scratch.ts';

/** Bytes read per call: large enough that a read is one system call per few thousand records. */
const CHUNK = 8 << 20;
const MIN_CHUNK = 64 << 10;
/**
 * Bytes of records parsed at once (one JSON.parse): small beside the young generation (16 MB), and
 * small enough that the batch's text (up to 2 bytes per unit, with its brackets) stays a regular
 * object of the young generation, below V8's large-object size (128 KB): a text of 512 KB was a
 * large object mapped on its own and unmapped once dead, so each batch faulted in fresh pages (at
 * 100k, 300k of the first start's 1.08M page faults, ~2 us of system CPU each here).
 */
const PARSE_BYTES = 32 << 10;
/**
 * The largest record accepted, in bytes of JSON. The biggest generated record is about 12 KB; a
 * record past this is a broken file (an unclosed string swallowing the rest), and stopping here
 * gives its file and index instead of the heap running out.
 */
export const MAX_RECORD_BYTES = 16 << 20;

/** Why a file could not be cut into records; the loader turns it into a Problem. */
export class RecordsError extends Error {
  constructor(
    /** The record the problem is in, or null for the file as a whole. */
    readonly index: number | null,
    readonly reason: string,
    /** For a JSON syntax error, the file offset of the byte at fault, so the loader can give line and column. */
    readonly offset: number | null = null,
  ) {
    super(reason);
  }
}

const WS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WS[c] = 1;
const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, OPEN_OBJ = 0x7b, CLOSE_OBJ = 0x7d, OPEN_ARR = 0x5b, CLOSE_ARR = 0x5d;

/**
 * Inside a JSON string at `i`: the index just past its closing quote (the next quote that no odd run
 * of backslashes escapes), or -1 when the string does not close before `len`.
 */
function stringEnd(buf: Buffer, i: number, len: number): number {
  for (;;) {
    const q = buf.indexOf(QUOTE, i);
    if (q < 0 || q >= len) return -1;
    let k = q - 1;
    while (buf[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** The reason for a file whose first character is not `[`, as the loader words it. */
export const NOT_AN_ARRAY = 'must be a JSON array of records';

// Where scanning stands between chunks (a record can span them).
/** Before the opening `[`. */
const START = 0;
/** After `[` or a comma: a record (or, right after `[`, the closing `]`) comes next. */
const VALUE = 1;
/** Inside a record that is an object or array. */
const NESTED = 2;
/** Inside a record that is a bare string, number or literal (a problem, but one per record). */
const SCALAR = 3;
/** After a record: a comma or the closing `]`. */
const AFTER = 4;
/** After the closing `]`: only whitespace. */
const END = 5;

/** The byte offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629). */
export function invalidUtf8At(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    let need: number, min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) (need = 1), (min = 0x80);
    else if (b >= 0xe0 && b <= 0xef) (need = 2), (min = 0x800);
    else if (b >= 0xf0 && b <= 0xf4) (need = 3), (min = 0x10000);
    else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** A version of a file: what the loader compares to tell an edit (load.ts). */
export type FileIdentity = Pick<BigIntStats, 'dev' | 'ino' | 'size' | 'mtimeNs' | 'ctimeNs'>;

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * A file's records as an earlier read cut them (cutRecords): record k is the file's bytes
 * [starts[k], ends[k]), every one an object of valid UTF-8 within the size limit, in a file that is
 * a well-formed array; of the version `identity`, taken before those bytes were read.
 */
export interface RecordCuts {
  readonly identity: FileIdentity;
  readonly count: number;
  readonly starts: Float64Array;
  readonly ends: Float64Array;
}

/**
 * Cuts `path` into records and keeps only their byte ranges (typed arrays of a Scratch: no JS object
 * per record), each chunk's records told to `onSlices` as readRecords tells them; null when the file
 * is not a well-formed array of objects, or changed while it was read: its read then finds and words
 * the problem as always. For a thread with nothing to do until what links read has come: the read
 * that follows takes the cuts instead of scanning the bytes again (build-thread.ts).
 */
export async function cutRecords(
  path: string,
  onSlices?: (buf: Buffer, starts: readonly number[], ends: readonly number[]) => void,
  { chunkBytes = CHUNK, maxRecordBytes = MAX_RECORD_BYTES }: { chunkBytes?: number; maxRecordBytes?: number } = {},
): Promise<RecordCuts | null> {
  const fh = await open(path, 'r');
  let identity: FileIdentity;
  try {
    identity = await fh.stat({ bigint: true });
  } finally {
    await fh.close();
  }
  const scratch = new Scratch();
  const starts = new GrowingF64(0, scratch);
  const ends = new GrowingF64(0, scratch);
  let objects = true;
  try {
    await readRecords(path, () => {}, {
      parse: false,
      chunkBytes,
      maxRecordBytes,
      onSlices: (buf, s, e, _first, base) => {
        for (let k = 0; k < s.length; k++) {
          if (buf[s[k]!] !== OPEN_OBJ || buf[e[k]! - 1] !== CLOSE_OBJ) objects = false;
          starts.push(base + s[k]!);
          ends.push(base + e[k]!);
        }
        onSlices?.(buf, s, e);
      },
    });
  } catch (err) {
    if (err instanceof RecordsError) return null;
    throw err;
  }
  const now = await open(path, 'r').then(async (h) => {
    try {
      return await h.stat({ bigint: true });
    } finally {
      await h.close();
    }
  });
  if (!objects || !sameIdentity(identity, now)) return null;
  const count = starts.length;
  return { identity, count, starts: starts.copyTo(scratch.float64(count, true)), ends: ends.copyTo(scratch.float64(count, true)) };
}

/**
 * Calls `onBatch` with the records of `path` in order, a chunk's worth at a time, each parsed with
 * JSON.parse: `first` is the index of `records[0]` in the file. Throws RecordsError for a file that
 * is not an array, a syntax error, invalid UTF-8 or a record over MAX_RECORD_BYTES; a read error
 * as it comes from the file system.
 */
export async function readRecords(
  path: string,
  onBatch: (records: unknown[], first: number) => void,
  {
    maxRecordBytes = MAX_RECORD_BYTES,
    chunkBytes: chunkAtMost = CHUNK,
    parseBytes = PARSE_BYTES,
    onSlices,
    parse = true,
    onBytes,
    cuts,
    onCutsTaken,
  }: {
    maxRecordBytes?: number;
    chunkBytes?: number;
    parseBytes?: number;
    /**
     * Told of the records complete in each chunk, as byte ranges of `buf` (valid UTF-8), before they
     * are parsed; `base` is the file offset of buf[0].
     */
    onSlices?: (buf: Buffer, starts: readonly number[], ends: readonly number[], first: number, base: number) => void;
    /** False: records are only cut (and told to onSlices), never parsed; `onBatch` is not called. */
    parse?: boolean;
    /** Told of every byte of the file, in order, as it is read (a digest of the file: content-digest.ts). */
    onBytes?: (bytes: Uint8Array) => void;
    /**
     * The file's records as cut before (cutRecords): taken when the file is still that version (and
     * then only its records' bytes are read, neither scanned nor checked again), else ignored.
     */
    cuts?: RecordCuts;
    /** Told when `cuts` are taken, before the first record. */
    onCutsTaken?: () => void;
  } = {},
): Promise<void> {
  const fh = await open(path, 'r');
  try {
    if (cuts && !onBytes && sameIdentity(cuts.identity, await fh.stat({ bigint: true }))) {
      onCutsTaken?.();
      return await readCut(fh, cuts, onBatch, { chunkBytes: chunkAtMost, parseBytes, onSlices, parse });
    }
    // No larger than the file (one read then finds its end): a small file's load allocates no 8 MB,
    // whose external memory sets off a full collection of the heap (reloads in a test suite).
    const chunkBytes = Math.min(chunkAtMost, Math.max(MIN_CHUNK, (await fh.stat()).size + 1));
    let buf = scratchBuffer(chunkBytes);
    /** Bytes of `buf` that hold data; [0, keep) is a record carried over from the last chunk. */
    let len = 0;
    /** File offset of buf[0]. */
    let base = 0;
    let at: number = START;
    let depth = 0;
    let inString = false;
    let index = 0;
    for (;;) {
      if (buf.length - len < chunkBytes / 2) {
        const bigger = scratchBuffer(Math.max(buf.length * 2, len + chunkBytes));
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, len, buf.length - len, base + len);
      const eof = bytesRead === 0;
      const scanFrom = len;
      if (bytesRead > 0) onBytes?.(buf.subarray(len, len + bytesRead));
      len += bytesRead;
      // Records complete in this chunk: [starts[k], ends[k]) in buf.
      const starts: number[] = [];
      const ends: number[] = [];
      let recordStart = at === NESTED || at === SCALAR ? 0 : -1;
      let i = scanFrom;
      while (i < len) {
        const c = buf[i]!;
        switch (at) {
          case NESTED:
            if (inString) {
              const end = stringEnd(buf, i, len);
              i = end < 0 ? len : end;
              inString = end < 0;
              continue;
            }
            if (c === QUOTE) inString = true;
            else if (c === OPEN_OBJ || c === OPEN_ARR) depth++;
            else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
              if (--depth === 0) {
                starts.push(recordStart);
                ends.push(i + 1);
                at = AFTER;
              }
            }
            i++;
            continue;
          case SCALAR:
            if (inString) {
              const end = stringEnd(buf, i, len);
              i = end < 0 ? len : end;
              inString = end < 0;
              continue;
            }
            if (WS[c] || c === COMMA || c === CLOSE_ARR) {
              starts.push(recordStart);
              ends.push(i);
              at = AFTER;
              continue; // the comma or bracket is read in state After
            }
            i++;
            continue;
          case START:
            if (WS[c]) {
              i++;
              continue;
            }
            if (c !== OPEN_ARR) throw new RecordsError(null, NOT_AN_ARRAY, base + i);
            at = VALUE;
            i++;
            continue;
          case VALUE:
            if (WS[c]) {
              i++;
              continue;
            }
            if (c === CLOSE_ARR && index + starts.length === 0) {
              at = END;
              i++;
              continue;
            }
            if (c === COMMA || c === CLOSE_ARR) throw new RecordsError(index + starts.length, `unexpected ${String.fromCharCode(c)}`, base + i);
            recordStart = i;
            if (c === OPEN_OBJ || c === OPEN_ARR) {
              at = NESTED;
              depth = 1;
            } else {
              at = SCALAR;
              inString = c === QUOTE;
            }
            i++;
            continue;
          case AFTER:
            if (WS[c]) i++;
            else if (c === COMMA) (at = VALUE), i++;
            else if (c === CLOSE_ARR) (at = END), i++;
            else throw new RecordsError(index + starts.length - 1, 'expected , or ] after the record', base + i);
            continue;
          case END:
            if (!WS[c]) throw new RecordsError(null, 'unexpected data after the closing ]', base + i);
            i++;
            continue;
        }
      }
      for (let k = 0; k < starts.length; k++) {
        if (ends[k]! - starts[k]! > maxRecordBytes) throw new RecordsError(index + k, `record larger than ${maxRecordBytes} bytes`);
      }
      if (starts.length > 0) {
        const from = starts[0]!;
        const to = ends[ends.length - 1]!;
        // Between records there is only ASCII, so one check covers every record of the chunk.
        if (!isUtf8(buf.subarray(from, to))) {
          const bad = from + invalidUtf8At(buf.subarray(from, to));
          let k = 0;
          while (ends[k]! <= bad) k++;
          throw new RecordsError(index + k, `invalid UTF-8 at byte offset ${base + bad}`);
        }
        onSlices?.(buf, starts, ends, index, base);
        if (!parse) {
          index += starts.length;
          starts.length = 0;
        }
        // Parsed a few hundred KB at a time: the records of one parse are alive together until the
        // loader has taken them, and a whole chunk's worth outgrew the young generation, so garbage
        // collection copied every record into the old one before letting it go.
        parseBatches(buf, starts, ends, index, base, parseBytes, onBatch);
        index += starts.length;
      }
      const open = at === NESTED || at === SCALAR;
      if (eof) {
        if (at === START) throw new RecordsError(null, NOT_AN_ARRAY, base + len);
        if (open) throw new RecordsError(index, 'the file ends inside this record', base + len);
        if (at !== END) throw new RecordsError(null, 'the file ends before the closing ]', base + len);
        return;
      }
      // Carry the unfinished record to the front of the buffer; drop everything before it.
      const keepFrom = open ? recordStart : len;
      if (len - keepFrom > maxRecordBytes) throw new RecordsError(index, `record larger than ${maxRecordBytes} bytes`);
      buf.copy(buf, 0, keepFrom, len);
      base += keepFrom;
      len -= keepFrom;
    }
  } finally {
    await fh.close();
  }
}

/** Parsed a few hundred KB at a time (readRecords says why): `onBatch` with each batch of the records of `buf`, the first `index`. */
function parseBatches(buf: Buffer, starts: number[], ends: number[], index: number, base: number, parseBytes: number, onBatch: (records: unknown[], first: number) => void): void {
  for (let k = 0; k < starts.length; ) {
    let m = k + 1;
    while (m < starts.length && ends[m]! - starts[k]! <= parseBytes) m++;
    onBatch(parseBatch(buf, starts.slice(k, m), ends.slice(k, m), index + k, base), index + k);
    k = m;
  }
}

/**
 * readRecords with the records' ranges known (cutRecords, the same version of the file): a chunk's
 * worth of whole records read at a time, one byte before them left for arrayText's bracket. A record
 * that is not where the cuts say (a write the file's identity did not show) is a RecordsError, never
 * bytes parsed as some other record.
 */
async function readCut(
  fh: FileHandle,
  cuts: RecordCuts,
  onBatch: (records: unknown[], first: number) => void,
  { chunkBytes, parseBytes, onSlices, parse }: { chunkBytes: number; parseBytes: number; onSlices?: (buf: Buffer, starts: readonly number[], ends: readonly number[], first: number, base: number) => void; parse: boolean },
): Promise<void> {
  const { count, starts: at, ends: to } = cuts;
  if (count === 0) return;
  const size = Math.min(chunkBytes, to[count - 1]! - at[0]!);
  let buf = scratchBuffer(size + 2);
  for (let k = 0; k < count; ) {
    const from = at[k]!;
    let m = k + 1;
    while (m < count && to[m]! - from <= size) m++;
    const span = to[m - 1]! - from;
    if (buf.length < span + 2) buf = scratchBuffer(span + 2);
    for (let got = 0; got < span; ) {
      const { bytesRead } = await fh.read(buf, 1 + got, span - got, from + got);
      if (bytesRead === 0) throw new RecordsError(k, 'the file changed while it was read', from + got);
      got += bytesRead;
    }
    const base = from - 1;
    const starts: number[] = [];
    const ends: number[] = [];
    for (let j = k; j < m; j++) {
      const s = at[j]! - base;
      const e = to[j]! - base;
      if (buf[s] !== OPEN_OBJ || buf[e - 1] !== CLOSE_OBJ) throw new RecordsError(j, 'the file changed while it was read', base + s);
      starts.push(s);
      ends.push(e);
    }
    onSlices?.(buf, starts, ends, k, base);
    if (parse) parseBatches(buf, starts, ends, k, base, parseBytes, onBatch);
    k = m;
  }
}

/**
 * Decodes a batch's text: on Node 20 in 70% of the time of Buffer#toString (3.1 ms per MB of the
 * data here, about 2.5 s of CPU over the 808 MiB of a first start at 100k; Node 26 decodes both ways
 * alike, 4 times faster). The bytes are valid UTF-8 (checked before); a byte order mark stays a
 * character, as toString leaves it (a batch starts with `[` anyway).
 */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * `[` + the text of `buf[from, to)` + `]`: decoded with the brackets in place of the bytes on either
 * side (a separator, whitespace or bytes not read yet; put back after), so the batch's text is one
 * flat string. Joined as `[${text}]`, the string was a cons that JSON.parse flattened: a second copy
 * of every batch, 0.1-0.3 s more per 128 MB of data (issue 19). At either end of `buf`: joined.
 */
export function arrayText(buf: Buffer, from: number, to: number): string {
  if (from === 0 || to >= buf.length) return `[${buf.toString('utf8', from, to)}]`;
  const before = buf[from - 1]!;
  const after = buf[to]!;
  buf[from - 1] = 0x5b; // [
  buf[to] = 0x5d; // ]
  try {
    return UTF8.decode(buf.subarray(from - 1, to + 1));
  } finally {
    buf[from - 1] = before;
    buf[to] = after;
  }
}

/**
 * The records between the first start and the last end, parsed as one array (one JSON.parse per
 * chunk, not per record); when that fails, record by record, to name the one at fault.
 */
function parseBatch(buf: Buffer, starts: number[], ends: number[], first: number, base: number): unknown[] {
  try {
    const records = JSON.parse(arrayText(buf, starts[0]!, ends[ends.length - 1]!)) as unknown[];
    if (records.length === starts.length) return records;
  } catch {
    // find the record at fault below
  }
  for (let k = 0; k < starts.length; k++) {
    const record = buf.toString('utf8', starts[k], ends[k]);
    try {
      JSON.parse(record);
    } catch (err) {
      // V8 gives the position in the record's text: turn it into a file offset, and drop it from the
      // message, where it would read as a position in the file.
      const message = (err as Error).message;
      const pos = /position (\d+)/.exec(message);
      const at = starts[k]! + (pos ? Buffer.byteLength(record.slice(0, Number(pos[1]))) : 0);
      throw new RecordsError(first + k, message.replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, ''), base + at);
    }
  }
  throw new RecordsError(first, 'not a JSON value', base + starts[0]!);
}
