// Reads the data files (or in-memory arrays), validates every record and links them (CONTRACT 1, 7).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { Backref, CollectionName, LinkContext, LinkedRecord, SourceRecord } from '../resources/types.ts';
import { checkObject, formatProblem, type Problem, type RefSite } from './validate.ts';

/** A data directory, or arrays per collection (embedding: validated exactly like files). */
export type DataInput = string | Readonly<Partial<Record<CollectionName, unknown>>>;

export type Sources = Record<CollectionName, SourceRecord[]>;

/** Invalid data: every problem found, each with file, record index and field. */
export class DataError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    const shown = problems.slice(0, 20).map(formatProblem).join('\n  ');
    const more = problems.length > 20 ? `\n  ... and ${problems.length - 20} more` : '';
    super(`invalid data: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n  ${shown}${more}`);
  }
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

async function readRaw(input: DataInput, problems: Problem[]): Promise<Partial<Record<CollectionName, unknown>>> {
  if (typeof input !== 'string') return structuredClone(input) as Partial<Record<CollectionName, unknown>>;
  const raw: Partial<Record<CollectionName, unknown>> = {};
  await Promise.all(
    RESOURCE_LIST.map(async (def) => {
      let text: string;
      try {
        text = await readFile(join(input, def.file), 'utf8');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        problems.push({ file: def.file, index: null, field: null, reason: code === 'ENOENT' ? 'file not found' : `cannot read: ${code}` });
        return;
      }
      try {
        raw[def.name] = JSON.parse(text);
      } catch (err) {
        problems.push({ file: def.file, index: null, field: null, reason: parseErrorReason(text, err as Error) });
      }
    }),
  );
  return raw;
}

/** Validates every collection, checks unique `_id`/`slug` and that every reference resolves. */
export async function readSources(input: DataInput): Promise<{ sources: Sources; refs: Map<SourceRecord, RefSite[]> }> {
  const problems: Problem[] = [];
  const raw = await readRaw(input, problems);
  const sources = {} as Sources;
  const refs = new Map<SourceRecord, RefSite[]>();
  const slugs = new Map<CollectionName, Set<string>>();
  // A file that could not be read is one problem, not one per reference into it.
  const unreadable = new Set<string>();
  for (const def of RESOURCE_LIST) {
    const records: SourceRecord[] = (sources[def.name] = []);
    const seenSlugs = new Set<string>();
    slugs.set(def.name, seenSlugs);
    const list = raw[def.name];
    if (list === undefined) {
      unreadable.add(def.name);
      if (typeof input !== 'string') problems.push({ file: def.file, index: null, field: null, reason: 'collection missing' });
      continue;
    }
    if (!Array.isArray(list)) {
      unreadable.add(def.name);
      problems.push({ file: def.file, index: null, field: null, reason: 'must be a JSON array of records' });
      continue;
    }
    const ids = new Set<string>();
    for (let i = 0; i < list.length; i++) {
      const rec = list[i] as Record<string, unknown>;
      if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
        problems.push({ file: def.file, index: i, field: null, reason: 'must be an object' });
        continue;
      }
      const found = { problems: [] as [string, string][], refs: [] as RefSite[] };
      checkObject(def.source, rec, '', found);
      for (const [field, reason] of found.problems) problems.push({ file: def.file, index: i, field, reason });
      if (typeof rec._id === 'string') {
        if (ids.has(rec._id)) problems.push({ file: def.file, index: i, field: '_id', reason: `duplicate _id ${JSON.stringify(rec._id)}` });
        ids.add(rec._id);
      }
      if (typeof rec.slug === 'string') {
        if (seenSlugs.has(rec.slug)) problems.push({ file: def.file, index: i, field: 'slug', reason: `duplicate slug ${JSON.stringify(rec.slug)}` });
        seenSlugs.add(rec.slug);
      }
      records.push(rec as SourceRecord);
      if (found.refs.length > 0) refs.set(rec as SourceRecord, found.refs);
    }
  }
  for (const def of RESOURCE_LIST) {
    sources[def.name].forEach((rec, i) => {
      for (const site of refs.get(rec) ?? []) {
        if (!unreadable.has(site.collection) && !slugs.get(site.collection as CollectionName)?.has(site.slug)) {
          problems.push({ file: def.file, index: i, field: site.field, reason: `no ${site.collection} record with slug ${JSON.stringify(site.slug)}` });
        }
      }
    });
  }
  if (problems.length > 0) throw new DataError(problems);
  return { sources, refs };
}

/** Everything linking needs, built once per load: slug maps and back-references. */
function linkContext(sources: Sources, refs: Map<SourceRecord, RefSite[]>): LinkContext {
  const bySlug = new Map<CollectionName, Map<string, SourceRecord>>();
  for (const def of RESOURCE_LIST) bySlug.set(def.name, new Map(sources[def.name].map((r) => [r.slug, r])));
  // key: `${target collection}\0${slug}\0${from collection}`
  const back = new Map<string, Backref[]>();
  for (const def of RESOURCE_LIST) {
    for (const rec of sources[def.name]) {
      for (const site of refs.get(rec) ?? []) {
        const key = `${site.collection}\0${site.slug}\0${def.name}`;
        let list = back.get(key);
        if (!list) back.set(key, (list = []));
        list.push({ record: rec, holder: site.holder });
      }
    }
  }
  return {
    get: (collection, slug) => bySlug.get(collection)?.get(slug),
    referrers: (collection, slug, from) => back.get(`${collection}\0${slug}\0${from}`) ?? [],
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
