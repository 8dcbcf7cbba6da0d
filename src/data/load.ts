// Reads the data files (or in-memory arrays), validates every record and links them (CONTRACT 1, 7).
import type { BigIntStats } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { Backref, CollectionName, LinkContext, LinkedRecord, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import { NOT_AN_ARRAY, readRecords, RecordsError } from './records.ts';

/** A file as it was before reading: compared with the path afterwards, it tells an edit during the load. */
type FileIdentity = Pick<BigIntStats, 'dev' | 'ino' | 'size' | 'mtimeNs' | 'ctimeNs'>;
import { checkObject, formatProblem, type Findings, type Problem, type RefSite } from './validate.ts';

/** A data directory, or arrays per collection (embedding: validated exactly like files). */
export type DataInput = string | Readonly<Partial<Record<CollectionName, unknown>>>;

export type Sources = Record<CollectionName, SourceRecord[]>;
/** The references each record holds, by collection and record index (undefined: none). */
export type Refs = Record<CollectionName, (RefSite[] | undefined)[]>;

/** Invalid data: every problem found, each with file, record index and field. */
export class DataError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    const shown = problems.slice(0, 20).map(formatProblem).join('\n  ');
    const more = problems.length > 20 ? `\n  ... and ${problems.length - 20} more` : '';
    super(`invalid data: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n  ${shown}${more}`);
  }
}

/**
 * A file this size or smaller is re-read whole after a syntax error, so the message is JSON.parse's
 * own for the whole file, as it always was; a larger one (beyond V8's longest string) gets the
 * record's message with the line and column counted in the file.
 */
const WHOLE_REPARSE_LIMIT = 256 << 20;
/** Reads of a directory whose files keep changing under the loader before it gives up. */
const READ_ATTEMPTS = 3;

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
  const size = (await stat(path)).size;
  if (size <= WHOLE_REPARSE_LIMIT) {
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

/** Validates one record: its problems go to `problems`, its references to `refs[index]`. */
function checkRecord(def: ResourceDefinition, rec: unknown, index: number, seen: { ids: Set<string>; slugs: Set<string> }, problems: Problem[], refs: (RefSite[] | undefined)[]): boolean {
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
    problems.push({ file: def.file, index, field: null, reason: 'must be an object' });
    return false;
  }
  const r = rec as Record<string, unknown>;
  const found: Findings = { problems: [], refs: [] };
  checkObject(def.source, r, '', found);
  for (const [field, reason] of found.problems) problems.push({ file: def.file, index, field, reason });
  if (typeof r._id === 'string') {
    if (seen.ids.has(r._id)) problems.push({ file: def.file, index, field: '_id', reason: `duplicate _id ${JSON.stringify(r._id)}` });
    seen.ids.add(r._id);
  }
  if (typeof r.slug === 'string') {
    if (seen.slugs.has(r.slug)) problems.push({ file: def.file, index, field: 'slug', reason: `duplicate slug ${JSON.stringify(r.slug)}` });
    seen.slugs.add(r.slug);
  }
  if (found.refs.length > 0) refs[index] = found.refs;
  return true;
}

interface Collected {
  readonly records: SourceRecord[];
  readonly refs: (RefSite[] | undefined)[];
  readonly slugs: Set<string>;
  /** Problems of the file as a whole, or of its records. */
  readonly problems: Problem[];
  /** False when the file could not be read as an array: references into it are not checked. */
  readonly readable: boolean;
}

function collectArray(def: ResourceDefinition, list: unknown): Collected {
  const out: Collected = { records: [], refs: [], slugs: new Set(), problems: [], readable: Array.isArray(list) };
  if (!out.readable) {
    out.problems.push({ file: def.file, index: null, field: null, reason: list === undefined ? 'collection missing' : NOT_AN_ARRAY });
    return out;
  }
  const seen = { ids: new Set<string>(), slugs: out.slugs };
  (list as unknown[]).forEach((rec, i) => {
    if (checkRecord(def, rec, i, seen, out.problems, out.refs)) out.records.push(rec as SourceRecord);
  });
  return out;
}

/** Streams one data file: records are validated a chunk at a time, the file is never one string. */
async function collectFile(def: ResourceDefinition, dir: string): Promise<Collected & { identity: FileIdentity | null }> {
  const path = join(dir, def.file);
  const seen = { ids: new Set<string>(), slugs: new Set<string>() };
  const records: SourceRecord[] = [];
  const refs: (RefSite[] | undefined)[] = [];
  const problems: Problem[] = [];
  // Stat before opening: a file swapped in between is then seen as changed, never as the one read.
  const identity = await stat(path, { bigint: true }).catch(() => null);
  try {
    await readRecords(path, (batch, first) => {
      for (let k = 0; k < batch.length; k++) {
        if (checkRecord(def, batch[k], first + k, seen, problems, refs)) records.push(batch[k] as SourceRecord);
      }
    });
    return { records, refs, slugs: seen.slugs, problems, readable: true, identity };
  } catch (err) {
    // A file that could not be read whole is one problem: its records' problems are not reported.
    const problem =
      err instanceof RecordsError
        ? await recordsProblem(def, path, err)
        : { file: def.file, index: null, field: null, reason: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read: ${(err as NodeJS.ErrnoException).code}` };
    return { records: [], refs: [], slugs: new Set(), problems: [problem], readable: false, identity };
  }
}

/** True when each file read is still the one at its path, unchanged: the set is one version of the data. */
async function unchanged(dir: string, read: readonly (FileIdentity | null)[]): Promise<boolean> {
  const now = await Promise.all(RESOURCE_LIST.map((def) => stat(join(dir, def.file), { bigint: true }).catch(() => null)));
  return now.every((s, i) => {
    const was = read[i];
    if (!was || !s) return !was && !s;
    return s.dev === was.dev && s.ino === was.ino && s.size === was.size && s.mtimeNs === was.mtimeNs && s.ctimeNs === was.ctimeNs;
  });
}

/**
 * Reads the files of a directory. Data edited while loading gives the old version or the new one,
 * never a mix: when any file changed between being opened and the end, all are read again.
 * `afterRead` runs once every file is read, before the check (a test's hook to edit the files).
 */
export async function readDirectory(dir: string, afterRead?: () => Promise<void>): Promise<Collected[]> {
  for (let attempt = 1; ; attempt++) {
    const files = await Promise.all(RESOURCE_LIST.map((def) => collectFile(def, dir)));
    await afterRead?.();
    if (attempt >= READ_ATTEMPTS || (await unchanged(dir, files.map((f) => f.identity)))) {
      if (attempt >= READ_ATTEMPTS && !(await unchanged(dir, files.map((f) => f.identity)))) {
        throw new DataError([{ file: '(data directory)', index: null, field: null, reason: `the files changed during each of ${READ_ATTEMPTS} reads; try again once they are written` }]);
      }
      return files;
    }
  }
}

/** Validates every collection, checks unique `_id`/`slug` and that every reference resolves. */
export async function readSources(input: DataInput, afterRead?: () => Promise<void>): Promise<{ sources: Sources; refs: Refs }> {
  let collected: Collected[];
  if (typeof input === 'string') collected = await readDirectory(input, afterRead);
  else {
    const copy = structuredClone(input) as Partial<Record<CollectionName, unknown>>;
    collected = RESOURCE_LIST.map((def) => collectArray(def, copy[def.name]));
  }
  const problems: Problem[] = [];
  const sources = {} as Sources;
  const refs = {} as Refs;
  const slugs = new Map<string, Set<string>>();
  // A file that could not be read is one problem, not one per reference into it.
  const unreadable = new Set<string>();
  RESOURCE_LIST.forEach((def, c) => {
    const got = collected[c]!;
    sources[def.name] = got.records;
    refs[def.name] = got.refs;
    slugs.set(def.name, got.slugs);
    if (!got.readable) unreadable.add(def.name);
    for (const p of got.problems) problems.push(p);
  });
  for (const def of RESOURCE_LIST) {
    // Record problems came in file order per collection; reference problems follow them, as before.
    const list = refs[def.name];
    for (let i = 0; i < list.length; i++) {
      for (const site of list[i] ?? []) {
        if (!unreadable.has(site.collection) && !slugs.get(site.collection)?.has(site.slug)) {
          problems.push({ file: def.file, index: i, field: site.field, reason: `no ${site.collection} record with slug ${JSON.stringify(site.slug)}` });
        }
      }
    }
  }
  if (problems.length > 0) throw new DataError(problems);
  return { sources, refs };
}

const NONE: readonly Backref[] = [];

/** Everything linking needs, built once per load: slug maps and back-references by record index. */
function linkContext(sources: Sources, refs: Refs): LinkContext {
  const bySlug = new Map<string, Map<string, number>>();
  for (const def of RESOURCE_LIST) {
    const ids = new Map<string, number>();
    sources[def.name].forEach((r, id) => ids.set(r.slug, id));
    bySlug.set(def.name, ids);
  }
  // back[target collection][from collection][target record id]: the referring records, in file order.
  const back = new Map<string, Map<string, Backref[][]>>();
  for (const def of RESOURCE_LIST) {
    const records = sources[def.name];
    const list = refs[def.name];
    for (let i = 0; i < list.length; i++) {
      for (const site of list[i] ?? []) {
        let byFrom = back.get(site.collection);
        if (!byFrom) back.set(site.collection, (byFrom = new Map()));
        let table = byFrom.get(def.name);
        if (!table) byFrom.set(def.name, (table = []));
        const target = bySlug.get(site.collection)!.get(site.slug)!;
        (table[target] ??= []).push({ record: records[i]!, holder: site.holder });
      }
    }
  }
  return {
    get: (collection, slug) => {
      const id = bySlug.get(collection)?.get(slug);
      return id === undefined ? undefined : sources[collection][id];
    },
    referrers: (collection, slug, from) => {
      const id = bySlug.get(collection)?.get(slug);
      return (id !== undefined && back.get(collection)?.get(from)?.[id]) || NONE;
    },
  };
}

function linkAll(sources: Sources, ctx: LinkContext): Record<CollectionName, LinkedRecord[]> {
  const linked = {} as Record<CollectionName, LinkedRecord[]>;
  for (const def of RESOURCE_LIST) linked[def.name] = sources[def.name].map((r) => def.link(r, ctx));
  return linked;
}

/** Reads, validates and links: every record with its derived fields (the indexes keep only their JSON). */
export async function loadLinked(input: DataInput): Promise<Record<CollectionName, LinkedRecord[]>> {
  const { sources, refs } = await readSources(input);
  return linkAll(sources, linkContext(sources, refs));
}
