// Reads the data files (or in-memory arrays), validates every record and links them (CONTRACT 1, 7),
// one collection at a time: a collection is handed to the indexer as soon as what it links to is
// read, and its records are let go once indexed, so only the collections others link to stay whole.
import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { Schema } from '../resources/schema.ts';
import type { Backref, CollectionName, LinkContext, LinkedRecord, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import { collectArray, collectFile, type Collected, type EachRecord } from './collect.ts';
import { UnitKeys } from './string-keys.ts';
import { SourceDigester } from './record-groups.ts';
import { formatProblem, type Problem } from './validate.ts';

/** A data directory, or arrays per collection (embedding: validated exactly like files). */
export type DataInput = string | Readonly<Partial<Record<CollectionName, unknown>>>;

/** Invalid data: every problem found, each with file, record index and field. */
export class DataError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    const shown = problems.slice(0, 20).map(formatProblem).join('\n  ');
    const more = problems.length > 20 ? `\n  ... and ${problems.length - 20} more` : '';
    super(`invalid data: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n  ${shown}${more}`);
  }
}

/** Reads of a directory whose files keep changing under the loader before it gives up. */
const READ_ATTEMPTS = 3;

/** A file as it was before reading: compared with the path afterwards, it tells an edit during the load. */
type FileIdentity = Pick<BigIntStats, 'dev' | 'ino' | 'size' | 'mtimeNs' | 'ctimeNs'> | null;

const identities = (dir: string): Promise<FileIdentity[]> => Promise.all(RESOURCE_LIST.map((def) => stat(join(dir, def.file), { bigint: true }).catch(() => null)));

function sameFiles(a: readonly FileIdentity[], b: readonly FileIdentity[]): boolean {
  return a.every((x, i) => {
    const y = b[i];
    if (!x || !y) return !x && !y;
    return x.dev === y.dev && x.ino === y.ino && x.size === y.size && x.mtimeNs === y.mtimeNs && x.ctimeNs === y.ctimeNs;
  });
}

/** The collections a schema's `ref` fields point to. */
function refTargets(schema: Schema, into = new Set<CollectionName>()): Set<CollectionName> {
  if (schema.type === 'string' && schema.ref) into.add(schema.ref as CollectionName);
  else if (schema.type === 'array') refTargets(schema.items, into);
  else if (schema.type === 'map') refTargets(schema.values, into);
  else if (schema.type === 'object') for (const s of Object.values(schema.properties)) refTargets(s, into);
  return into;
}

/** What linking a collection needs read first: what it refers to, and whose references to it link() reads. */
const NEEDS: ReadonlyMap<CollectionName, ReadonlySet<CollectionName>> = new Map(
  RESOURCE_LIST.map((def) => {
    const needs = refTargets(def.source);
    for (const from of def.referrers ?? []) needs.add(from);
    return [def.name, needs];
  }),
);

const NONE: readonly Backref[] = [];

/**
 * The fields of a collection's records that links of others read: `slug`, its `readByLinks`, and
 * what embedding fields pick of it. Once a collection is indexed, a load keeps only these for the
 * collections still to link to it (at 1M, celebrities and movies held whole were about 3 GB of heap).
 */
export function keptFields(def: ResourceDefinition): readonly string[] {
  const fields = new Set(['slug', ...(def.readByLinks ?? [])]);
  for (const other of RESOURCE_LIST) {
    for (const f of [...other.listFields, ...other.detailFields]) if (typeof f !== 'string' && f.from === def.name) for (const p of f.pick) fields.add(p);
  }
  return [...fields];
}

/** A function that copies the kept fields of a record (those it has) into a small object of their own. */
function projection(def: ResourceDefinition): (r: SourceRecord) => SourceRecord {
  const fields = keptFields(def);
  return (r) => {
    const out: Record<string, unknown> = {};
    for (const f of fields) if (Object.hasOwn(r, f)) out[f] = r[f];
    return out as SourceRecord;
  };
}

/**
 * A collection the loader does not read (after an edit, one that is not rebuilt, from the boot cache
 * or the live snapshot): references into it are checked with `has`, and links read its records
 * through `get` (src/data/known.ts decodes them from the served JSON).
 */
export interface KnownCollection {
  has(slug: string): boolean;
  get(slug: string): SourceRecord | undefined;
}
export type KnownCollections = Readonly<Partial<Record<CollectionName, KnownCollection>>>;

/**
 * The collections a load must read to index `only` when `known` may stand in for the others: `only`,
 * those whose references `only` reads back (`referrers`: known ones have no records to read them
 * from), and every reference target that is not known; again for each one added.
 */
export function collectionsToRead(only: ReadonlySet<CollectionName> | null, known: KnownCollections): Set<CollectionName> {
  if (only === null) return new Set(RESOURCE_LIST.map((d) => d.name));
  const read = new Set(only);
  for (let grew = true; grew; ) {
    grew = false;
    for (const def of RESOURCE_LIST) {
      if (!read.has(def.name)) continue;
      const add = [...(def.referrers ?? []), ...[...refTargets(def.source)].filter((t) => !known[t])];
      for (const name of add) if (!read.has(name)) (read.add(name), (grew = true));
    }
  }
  return read;
}

/** Slugs and records of the collections read so far, and back-references for the `referrers` each definition declares. */
class Links implements LinkContext {
  constructor(private readonly known: KnownCollections) {}
  private readonly records = new Map<CollectionName, readonly SourceRecord[]>();
  /** Record ids by slug (not a Map: string-keys.ts). */
  private readonly ids = new Map<CollectionName, UnitKeys>();
  /** `${target}>${from}` -> referring records by target record id, in file order. */
  private readonly back = new Map<string, Backref[][]>();

  add(def: ResourceDefinition, got: Collected): void {
    // Valid data (the caller checks): each record has its own slug, so the slugs as read number the
    // records in file order; from an array of records that are not all objects, numbered again.
    let ids = got.slugs;
    if (ids.size !== got.records.length) {
      ids = new UnitKeys(got.records.length);
      for (const r of got.records) ids.add(r.slug);
    }
    this.records.set(def.name, got.records);
    this.ids.set(def.name, ids);
    // Valid data only (the caller checks): every record an object, so record i is refs[i]'s.
    for (const target of RESOURCE_LIST) {
      if (!target.referrers?.includes(def.name)) continue;
      // A target that stands in for its file (known: from the boot cache) is not linked in this load,
      // so nothing asks for its back-references (movies rebuilt for reviews, celebrities cached).
      if (!this.ids.has(target.name) && this.known[target.name] !== undefined) continue;
      const table: Backref[][] = [];
      this.back.set(`${target.name}>${def.name}`, table);
      got.refs.forEach((sites, i) => {
        for (const site of sites ?? []) {
          if (site.collection !== target.name) continue;
          (table[this.ids.get(target.name)!.find(site.slug)] ??= []).push({ record: got.records[i]!, holder: site.holder });
        }
      });
    }
  }

  /**
   * A collection just indexed: its own links are done, so the back-references to it go, and of its
   * records only what links of others read stays (when they were not kept that way already).
   */
  indexed(def: ResourceDefinition, projected: boolean): void {
    for (const key of this.back.keys()) if (key.startsWith(`${def.name}>`)) this.back.delete(key);
    const records = this.records.get(def.name);
    if (records && !projected) this.records.set(def.name, records.map(projection(def)));
  }

  drop(name: CollectionName): void {
    this.records.delete(name);
    this.ids.delete(name);
    for (const key of this.back.keys()) if (key.startsWith(`${name}>`)) this.back.delete(key);
  }

  get(collection: CollectionName, slug: string): SourceRecord | undefined {
    const ids = this.ids.get(collection);
    if (ids === undefined) return this.known[collection]?.get(slug);
    const id = ids.find(slug);
    return id < 0 ? undefined : this.records.get(collection)![id];
  }

  referrers(collection: CollectionName, slug: string, from: CollectionName): readonly Backref[] {
    const id = this.ids.get(collection)?.find(slug) ?? -1;
    return (id >= 0 && this.back.get(`${collection}>${from}`)?.[id]) || NONE;
  }
}

/** Takes a collection's linked records one at a time, in file order; keeps what it needs, never the record. */
export interface CollectionSink<T> {
  add(record: LinkedRecord): void;
  finish(): T;
}

/** Starts the sink of one collection; `hint.bytes` is its file's size (0 for arrays), for sizing buffers. */
export type Indexer<T> = (def: ResourceDefinition, hint: IndexHint) => CollectionSink<T>;
/** `sources`: fed the file's records as they are read (a directory's load), for the index's record groups. */
export interface IndexHint {
  readonly bytes: number;
  readonly sources?: SourceDigester;
}

/** An Indexer over a function of the whole array of linked records (tests, loadLinked). */
export function collecting<T>(fn: (def: ResourceDefinition, records: LinkedRecord[]) => T): Indexer<T> {
  return (def) => {
    const records: LinkedRecord[] = [];
    return { add: (r) => records.push(r), finish: () => fn(def, records) };
  };
}

/**
 * One pass over the data. Each collection is read once its reference targets are read (so each
 * reference is checked as it is read) and validated; a collection whose links are ready is linked
 * and handed to its sink record by record as it is read, and is held whole only when another
 * collection links to it. Throws DataError with every problem: record problems by collection in
 * file order, then unresolved references.
 */
async function pass<T>(input: DataInput, index: Indexer<T>, only: ReadonlySet<CollectionName> | null, known: KnownCollections | null, onKept?: OnKept): Promise<Record<CollectionName, T>> {
  const read = collectionsToRead(known === null ? null : only, known ?? {});
  const copy = typeof input === 'string' ? null : (structuredClone(input) as Partial<Record<CollectionName, unknown>>);
  const got = new Map<CollectionName, Collected>();
  const built = {} as Record<CollectionName, T>;
  /** Indexed, or (outside `only`) linked to and let go without being indexed; a known collection is never read. */
  const done = new Set<CollectionName>(RESOURCE_LIST.filter((d) => !read.has(d.name)).map((d) => d.name));
  const links = new Links(known ?? {});
  const refProblems = new Map<CollectionName, Problem[]>();
  let failed = false;
  /** Read, or known without reading. */
  const have = (name: CollectionName) => got.has(name) || !read.has(name);
  const ready = (name: CollectionName) => [...NEEDS.get(name)!].every(have);
  const neededLater = (name: CollectionName) => RESOURCE_LIST.some((d) => d.name !== name && !done.has(d.name) && NEEDS.get(d.name)!.has(name));
  const sinkFor = (def: ResourceDefinition, bytes: number, sources?: SourceDigester): CollectionSink<T> | null => (!only || only.has(def.name) ? index(def, { bytes, sources }) : null);
  /** Collections kept for others as projections from the start (indexed as they were read). */
  const projected = new Set<CollectionName>();
  const finish = (def: ResourceDefinition, sink: CollectionSink<T> | null) => {
    done.add(def.name);
    if (sink) built[def.name] = sink.finish();
    links.indexed(def, projected.has(def.name));
  };
  /**
   * Collections read from a file before their links were ready (celebrities wait for movies): held
   * meanwhile as only what links of others read, and read again from the file to be linked. Held
   * whole, at 1M, they were 1.2 GB of heap all through the read of movies. An edit between the two
   * reads is seen by loadCollections (the files' identity before and after) and the load done again.
   */
  const reread = new Map<CollectionName, { path: string; bytes: number }>();
  /** Collections read earlier whose links are now ready: linked from their kept records, or read again. */
  const buildWaiting = async () => {
    for (const def of RESOURCE_LIST) {
      if (failed || !got.has(def.name) || done.has(def.name) || !ready(def.name)) continue;
      const again = reread.get(def.name);
      const sources = again === undefined ? undefined : new SourceDigester();
      const sink = sinkFor(def, again?.bytes ?? 0, sources);
      if (again === undefined) {
        if (sink) for (const r of got.get(def.name)!.records) sink.add(def.link(r, links));
      } else if (sink) {
        let live: CollectionSink<T> | null = sink;
        // Validated by the first read: only what validation changes is done again (timestamps). An edit
        // in between shows in the files' identity once the load is done, which then reads it all again.
        const each: EachRecord = (r, _i, _sites, valid) => (valid ? live?.add(def.link(r, links)) : (live = null));
        const second = await collectFile(def, again.path, { keep: false, validated: true, digester: sources, each });
        if (second.problems.length > 0) {
          // Changed since the first read: loadCollections sees the new identity and reads it all again.
          got.set(def.name, { ...got.get(def.name)!, problems: second.problems });
          failed = true;
          return;
        }
      }
      finish(def, sink);
    }
    for (const def of RESOURCE_LIST) if (done.has(def.name) && !neededLater(def.name)) links.drop(def.name);
  };

  const pending = RESOURCE_LIST.filter((d) => read.has(d.name));
  /** Read, and waiting for `name` before it can be linked. */
  const waitsFor = (name: CollectionName) => RESOURCE_LIST.some((d) => got.has(d.name) && !done.has(d.name) && NEEDS.get(d.name)!.has(name));
  while (pending.length > 0) {
    // The first collection (in the order of SPEC) whose reference targets are all read (or known),
    // one that a collection read already waits for first: that one is then linked, and its records,
    // held whole until then, shrink to what links of others read (celebrities wait for movies).
    const readable = (d: ResourceDefinition) => [...refTargets(d.source)].every(have);
    const first = pending.findIndex((d) => readable(d) && waitsFor(d.name));
    const at = first >= 0 ? first : pending.findIndex(readable);
    if (at < 0) throw new Error(`collections that refer to each other: ${pending.map((d) => d.name).join(', ')}`);
    const def = pending.splice(at, 1)[0]!;
    const path = copy ? null : join(input as string, def.file);
    const bytes = path ? await stat(path).then((s) => s.size, () => 0) : 0;
    const streamed = ready(def.name);
    const sources = path !== null && streamed && !failed ? new SourceDigester() : undefined;
    let sink = streamed && !failed ? sinkFor(def, bytes, sources) : null;
    const refs: Problem[] = [];
    const keep = !streamed || neededLater(def.name);
    // Not linkable yet and read from a file: only what links read is held, and the file is read again (buildWaiting).
    const again = !streamed && path !== null && !failed;
    const project = keep && (streamed || again) ? projection(def) : undefined;
    /** Told of each kept record as it is read, while the file is valid so far. */
    let keptTo = again ? (onKept?.(def) ?? null) : null;
    let lastKept: SourceRecord | null = null;
    const each: EachRecord = (record, i, sites, valid) => {
      for (const site of sites ?? []) {
        const name = site.collection as CollectionName;
        const target = got.get(name);
        if (target === undefined ? !known![name]!.has(site.slug) : target.readable && !target.slugs.has(site.slug)) {
          refs.push({ file: def.file, index: i, field: site.field, reason: `no ${site.collection} record with slug ${JSON.stringify(site.slug)}` });
        }
      }
      if (!valid || refs.length > 0) {
        // Invalid data: nothing more is built or sent.
        sink = null;
        keptTo = null;
      } else {
        sink?.add(def.link(record, links));
        keptTo?.add(lastKept!);
      }
    };
    if (again) reread.set(def.name, { path, bytes });
    if (keep && (streamed || again)) projected.add(def.name);
    const options = { keep, each, project: project && keptTo ? (r: SourceRecord) => (lastKept = project(r)) : project, digester: sink ? sources : undefined };
    const collected = path ? await collectFile(def, path, options) : collectArray(def, copy![def.name], options);
    got.set(def.name, collected);
    refProblems.set(def.name, refs);
    if (collected.problems.length > 0 || refs.length > 0) failed = true;
    if (failed) continue;
    if (options.keep) links.add(def, collected);
    keptTo?.finish();
    if (streamed) finish(def, sink);
    await buildWaiting();
    // Slugs stay for checking references into the collections indexed, while a collection still to
    // read may refer to them (2.7M of them for outfits at 1M); records live on only in `links`.
    for (const [name, c] of got) {
      if (!done.has(name)) continue;
      const referred = pending.some((d) => refTargets(d.source).has(name));
      if (c.records.length > 0 || (!referred && c.slugs.size > 0)) got.set(name, { ...c, records: [], refs: [], slugs: referred ? c.slugs : new UnitKeys() });
    }
  }
  if (failed) {
    const problems = RESOURCE_LIST.flatMap((def) => got.get(def.name)?.problems ?? []);
    for (const def of RESOURCE_LIST) problems.push(...(refProblems.get(def.name) ?? []));
    throw new DataError(problems);
  }
  return built;
}

export interface LoadCollectionsOptions {
  /**
   * Index only these collections (after an edit, those it affects); every other file is still read
   * and validated (for reference checks and what links embed) unless `known` stands in for it. The
   * result has only these keys.
   */
  readonly only?: ReadonlySet<CollectionName>;
  /**
   * Collections that need not be read (with `only`: those not rebuilt, from the boot cache): their
   * files are neither read nor validated unless a collection of `only` reads their references back.
   */
  readonly known?: KnownCollections;
  /** Runs after each pass over the files, before the check that they did not change (a test's hook to edit them). */
  readonly afterRead?: () => Promise<void>;
  /** Told of each collection read from its file before it can be linked, valid, as the records links keep of it. */
  readonly onKept?: OnKept;
}

/**
 * A collection about to be read from its file before its links are ready (celebrities, before
 * movies): a sink told of its records as links keep them (the fields links of others read), each as
 * it is read, in file order, so record i is the index's record i once it is built, while the file
 * is valid so far; `finish` once it is read whole and valid (never for invalid data). A pass done
 * again (files edited) asks again, and tells the new sink from record 0.
 */
export type OnKept = (def: ResourceDefinition) => { add(record: SourceRecord): void; finish(): void } | null;

/**
 * Reads, validates, links and indexes every collection. For a directory, data edited while loading
 * gives the old version or the new one, never a mix: when any file changed between the stat before
 * and the end, it is all read again.
 */
export async function loadCollections<T>(input: DataInput, index: Indexer<T>, options: LoadCollectionsOptions = {}): Promise<Record<CollectionName, T>> {
  const { only = null, afterRead, known = null } = options;
  if (typeof input !== 'string') return pass(input, index, only, known);
  for (let attempt = 1; ; attempt++) {
    const before = await identities(input);
    let result: Record<CollectionName, T> | null = null;
    let error: unknown = null;
    try {
      result = await pass(input, index, only, known, options.onKept);
    } catch (err) {
      error = err;
    }
    await afterRead?.();
    if (sameFiles(before, await identities(input))) {
      if (error) throw error;
      return result!;
    }
    if (attempt >= READ_ATTEMPTS) {
      throw new DataError([{ file: '(data directory)', index: null, field: null, reason: `the files changed during each of ${READ_ATTEMPTS} reads; try again once they are written` }]);
    }
  }
}

/** Reads and validates; throws DataError listing every problem. */
export async function readSources(input: DataInput, afterRead?: () => Promise<void>): Promise<Record<CollectionName, LinkedRecord[]>> {
  return loadCollections(input, collecting((_def, records) => records), { afterRead });
}

/** Reads, validates and links: every record with its derived fields (the indexes keep only their JSON). */
export async function loadLinked(input: DataInput): Promise<Record<CollectionName, LinkedRecord[]>> {
  return loadCollections(input, collecting((_def, records) => records));
}
