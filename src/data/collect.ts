// Reads one collection, from its data file or an in-memory array, and validates each record as it
// comes: problems with file, record and field, the references each record holds (CONTRACT 7).
import { open, readFile, stat } from 'node:fs/promises';
import type { ResourceDefinition, SourceRecord } from '../resources/types.ts';
import { cutRecords, NOT_AN_ARRAY, readRecords, RecordsError, type RecordCuts } from './records.ts';
import { UnitKeys } from './string-keys.ts';
import { SourceDigester } from './record-groups.ts';
import { checkObject, timestampNormalizer, type Findings, type Problem, type RefSite } from './validate.ts';
import { fastCheck, type FastCheck } from './validate-fast.ts';

/**
 * A file this size or smaller is re-read whole after a syntax error, so the message is JSON.parse's
 * own for the whole file, as it always was; a larger one (beyond V8's longest string) gets the
 * record's message with the line and column counted in the file.
 */
const WHOLE_REPARSE_LIMIT = 256 << 20;

/** One collection as read: its valid records, the references they hold, and what was wrong. */
export interface Collected {
  /** The records that are objects, in file order; empty unless `keep`. */
  readonly records: SourceRecord[];
  /** The references of record i (file index), or undefined when it holds none. Empty unless `keep`. */
  readonly refs: (RefSite[] | undefined)[];
  /** Not a Set: as units, so no slug string is held for them (string-keys.ts). */
  readonly slugs: UnitKeys;
  /** Problems of the file as a whole, or of its records, in file order. */
  readonly problems: Problem[];
  /** False when the file could not be read as an array: references into it are not checked. */
  readonly readable: boolean;
}

/** Line and column of a JSON.parse error position, which a person editing the file can jump to. */
function parseErrorReason(text: string, err: Error): string {
  const pos = /position (\d+)/.exec(err.message);
  if (!pos) return `invalid JSON: ${err.message}`;
  const before = text.slice(0, Number(pos[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `invalid JSON at line ${line}, column ${column}: ${err.message}`;
}

/** Line and column (in UTF-16 units, as an editor counts) of byte `offset` of a file, read in chunks. */
async function lineColumnAt(path: string, offset: number): Promise<[line: number, column: number]> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let line = 1;
    let column = 1;
    for (let pos = 0; pos < offset; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, offset - pos), pos);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) {
        const b = buf[i]!;
        if (b === 0x0a) (line += 1), (column = 1);
        else if ((b & 0xc0) !== 0x80) column += b >= 0xf0 ? 2 : 1; // a 4-byte sequence is two UTF-16 units
      }
      pos += bytesRead;
    }
    return [line, column];
  } finally {
    await fh.close();
  }
}

/** The problem for a file the record reader stopped on, worded as before streaming where it can be. */
async function recordsProblem(def: ResourceDefinition, path: string, err: RecordsError): Promise<Problem> {
  if (err.offset === null) return { file: def.file, index: err.index, field: null, reason: err.reason };
  if ((await stat(path)).size <= WHOLE_REPARSE_LIMIT) {
    const text = await readFile(path, 'utf8');
    try {
      if (!Array.isArray(JSON.parse(text))) return { file: def.file, index: null, field: null, reason: NOT_AN_ARRAY };
    } catch (parseErr) {
      return { file: def.file, index: null, field: null, reason: parseErrorReason(text, parseErr as Error) };
    }
  }
  if (err.reason === NOT_AN_ARRAY) return { file: def.file, index: null, field: null, reason: NOT_AN_ARRAY };
  const [line, column] = await lineColumnAt(path, err.offset);
  return { file: def.file, index: err.index, field: null, reason: `invalid JSON at line ${line}, column ${column}: ${err.reason}` };
}

/**
 * Called with each record that is an object, once validated (timestamps normalized), with its
 * references and whether the collection is free of problems so far: the loader links and indexes
 * it then, and a collection nobody links to is never held whole.
 */
export type EachRecord = (record: SourceRecord, index: number, refs: RefSite[] | undefined, valid: boolean) => void;

export interface CollectOptions {
  /** Keep the records and their references in the result (for collections that others link to). */
  readonly keep: boolean;
  /** What is kept of a record (by default the record itself): a collection already indexed as it is read needs only what links read. */
  readonly project?: (record: SourceRecord) => SourceRecord;
  readonly each?: EachRecord;
  /** Given the bytes of each record as they are read, for the source digests of its groups (record-groups.ts). */
  readonly digester?: SourceDigester;
  /**
   * The file was read and validated earlier in this load (load.ts: celebrities, read again to be
   * linked), and its identity is compared once the load is done (an edit in between: the load is
   * done again): a record is not validated again, only what validation changes in it is done
   * (timestamps normalized). No references are collected, so not with `keep`.
   */
  readonly validated?: boolean;
}

/** Each schema's compiled check (validate-fast.ts), made once per thread; null: checkObject alone. */
const compiled = new WeakMap<ResourceDefinition['source'], FastCheck | null>();
function fastCheckOf(schema: ResourceDefinition['source']): FastCheck | null {
  let check = compiled.get(schema);
  if (check === undefined) compiled.set(schema, (check = fastCheck(schema)));
  return check;
}

/** The references the fast check finds, taken out when it passes: a record without any allocates nothing. */
const found: RefSite[] = [];

/** Validates records one at a time, in file order, into a Collected. */
class Collector {
  readonly out: Collected = { records: [], refs: [], slugs: new UnitKeys(), problems: [], readable: true };
  /** The `_id`s so far, for the duplicate check alone: as units, so each string dies with its record (string-keys.ts). */
  private readonly ids = new UnitKeys();
  /** For a file validated earlier (options.validated): what validation would change in a record, or nothing. */
  private readonly normalize: ((record: Record<string, unknown>) => void) | null | undefined;
  private readonly fast: FastCheck | null;

  constructor(
    private readonly def: ResourceDefinition,
    private readonly options: CollectOptions,
  ) {
    if (options.validated && options.keep) throw new Error('a file validated earlier is not kept (its references are not collected)');
    if (options.validated) this.normalize = timestampNormalizer(def.source);
    this.fast = fastCheckOf(def.source);
  }

  /** Room for `records` records' keys in all (UnitKeys.reserve): made once, not doubled on the way. */
  expect(records: number): void {
    this.ids.reserve(records);
    this.out.slugs.reserve(records);
  }

  add(rec: unknown, index: number): void {
    const { def, out } = this;
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
      out.problems.push({ file: def.file, index, field: null, reason: 'must be an object' });
      return;
    }
    const r = rec as Record<string, unknown>;
    if (this.normalize !== undefined) {
      this.normalize?.(r);
      this.options.each?.(r as SourceRecord, index, undefined, out.problems.length === 0);
      return;
    }
    let refs: RefSite[] | undefined;
    if (this.fast?.(r, found)) {
      refs = found.length > 0 ? found.splice(0) : undefined;
    } else {
      // Not valid (or no fast check): checkObject finds and words each problem.
      found.length = 0;
      const all: Findings = { problems: [], refs: [] };
      checkObject(def.source, r, '', all);
      for (const [field, reason] of all.problems) out.problems.push({ file: def.file, index, field, reason });
      refs = all.refs.length > 0 ? all.refs : undefined;
    }
    // One hash lookup each (add, then the id tells whether it was there), not has() and add().
    if (typeof r._id === 'string') {
      const before = this.ids.size;
      if (this.ids.add(r._id) < before) out.problems.push({ file: def.file, index, field: '_id', reason: `duplicate _id ${JSON.stringify(r._id)}` });
    }
    if (typeof r.slug === 'string') {
      const before = out.slugs.size;
      if (out.slugs.add(r.slug) < before) out.problems.push({ file: def.file, index, field: 'slug', reason: `duplicate slug ${JSON.stringify(r.slug)}` });
    }
    if (this.options.keep) {
      if (refs) out.refs[index] = refs;
      out.records.push(this.options.project ? this.options.project(r as SourceRecord) : (r as SourceRecord));
    }
    this.options.each?.(r as SourceRecord, index, refs, out.problems.length === 0);
  }
}

/** A collection given as an array (embedding); `list` is the caller's copy, validated in place. */
export function collectArray(def: ResourceDefinition, list: unknown, options: CollectOptions): Collected {
  if (!Array.isArray(list)) {
    const reason = list === undefined ? 'collection missing' : NOT_AN_ARRAY;
    return { records: [], refs: [], slugs: new UnitKeys(), problems: [{ file: def.file, index: null, field: null, reason }], readable: false };
  }
  const c = new Collector(def, options);
  c.expect(list.length);
  (list as unknown[]).forEach((rec, i) => c.add(rec, i));
  return c.out;
}

/** Bytes of a record below which the estimate is not believed (the smallest valid record is longer). */
const LEAST_RECORD_BYTES = 128;

/**
 * How many records a file of `bytes` holds, from the first chunk's records (`starts`, `ends`: up to
 * 8 MB of them, records.ts), a little over: the per-record tables are made for it once (a load at
 * 100k doubled them about 15 times each, every copy promoted and then dead on the build thread).
 * Never more than the file could hold at LEAST_RECORD_BYTES a record (a first chunk of small records
 * and a file of large ones reserves no more than that); fewer is fine (the tables grow as before).
 */
export function expectedRecords(bytes: number, starts: readonly number[], ends: readonly number[]): number {
  const n = starts.length;
  if (n === 0) return 0;
  // Each record's share of the separators between them: the span from the first's start to the last's end.
  const per = Math.max((ends[n - 1]! - starts[0]!) / n, LEAST_RECORD_BYTES);
  return Math.max(n, Math.ceil((bytes / per) * 1.05));
}

/** A file cut ahead of its read (cutAhead): its records' ranges and their source digests. */
interface CutAhead {
  readonly cuts: RecordCuts;
  readonly sources: SourceDigester;
}
/** Files cut ahead on this thread, by path, until the next collectFile of the path takes them. */
const ahead = new Map<string, Promise<CutAhead | null>>();

/**
 * Cuts `path` into records now and digests their groups, holding only typed arrays (records.ts
 * cutRecords): the next collectFile of `path` on this thread takes the cuts and digests, when the
 * file is still that version, instead of scanning and hashing its bytes as it reads them. For a
 * thread waiting for what its collection links to (build-thread.ts); resolves once cut.
 */
export async function cutAhead(path: string): Promise<void> {
  const sources = new SourceDigester();
  const cut = cutRecords(path, (buf, starts, ends) => sources.slices(buf, starts, ends)).then(
    (cuts) => cuts && { cuts, sources },
    () => null, // the read finds and words it
  );
  ahead.set(path, cut);
  await cut;
}

/** Streams one data file: records are validated a chunk at a time, the file is never one string. */
export async function collectFile(def: ResourceDefinition, path: string, options: CollectOptions): Promise<Collected> {
  const c = new Collector(def, options);
  try {
    const digester = options.digester;
    const early = ahead.get(path);
    ahead.delete(path);
    const cut = early && (await early);
    const bytes = (await stat(path)).size;
    let estimated = false;
    let taken = false;
    await readRecords(
      path,
      (batch, first) => {
        for (let k = 0; k < batch.length; k++) c.add(batch[k], first + k);
      },
      {
        cuts: cut?.cuts,
        onCutsTaken: () => {
          taken = estimated = true;
          c.expect(cut!.cuts.count);
        },
        onSlices: (buf, starts, ends) => {
          if (!estimated) {
            estimated = true;
            c.expect(expectedRecords(bytes, starts, ends));
          }
          if (!taken) digester?.slices(buf, starts, ends);
        },
      },
    );
    if (taken) digester?.adopt(cut!.sources);
    return c.out;
  } catch (err) {
    // A file that could not be read whole is one problem: its records' problems are not reported.
    const code = (err as NodeJS.ErrnoException).code;
    const problem =
      err instanceof RecordsError
        ? await recordsProblem(def, path, err)
        : { file: def.file, index: null, field: null, reason: code === 'ENOENT' ? 'file not found' : `cannot read: ${code}` };
    return { records: [], refs: [], slugs: new UnitKeys(), problems: [problem], readable: false };
  }
}
