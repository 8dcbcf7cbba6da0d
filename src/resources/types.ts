// What a collection is, as data: the loader, query engine, handlers and OpenAPI read these.
import { parseIsoTime } from './iso-time.ts';
import type { ObjectSchema, Schema } from './schema.ts';

export const COLLECTIONS = ['celebrities', 'outfits', 'news', 'movies', 'reviews'] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

/** A record as it stands in a data file, after validation. */
export type SourceRecord = Readonly<Record<string, unknown>> & { readonly _id: string; readonly slug: string };
/**
 * A record with its derived fields filled in (embedded objects, age, filmography...). May carry
 * internal fields that no output shape lists (news `views`).
 */
export type LinkedRecord = Record<string, unknown> & { readonly _id: string; readonly slug: string };

/**
 * A copy of `r` (its own fields, in their order) for link() to set its derived fields on: what
 * `{ ...r }` makes. Object.assign, not a spread: Node 20's V8 spreads a review (15 fields) or a
 * celebrity in a slow path, 6.5 µs a review against 0.5 (134k reviews at 100k: about 0.8 s of the
 * first start; Node 26: 0.2 against 0.5 µs). A record with an own `__proto__` field (JSON.parse
 * makes one; Object.assign would set the copy's prototype with it) is spread.
 */
export function recordCopy(r: SourceRecord): Record<string, unknown> & { _id: string; slug: string } {
  return Object.hasOwn(r, '__proto__') ? { ...r } : Object.assign({}, r);
}

export interface Backref {
  /** The referring record. */
  readonly record: SourceRecord;
  /** The object that holds the reference: the record itself, or an element such as a cast entry. */
  readonly holder: Readonly<Record<string, unknown>>;
}

export interface LinkContext {
  /** A source record of another collection by slug (references are validated before linking). */
  get(collection: CollectionName, slug: string): SourceRecord | undefined;
  /** Records of collection `from` that reference `slug` of `collection`, in file order. */
  referrers(collection: CollectionName, slug: string, from: CollectionName): readonly Backref[];
}

export interface LateField {
  readonly field: string;
  /** The record's key (a birth date as yyyymmdd), or null when the value is null. */
  key(r: LinkedRecord): number | null;
  /** The value served on the UTC day `today` (yyyymmdd). */
  value(key: number, today: number): number;
}

/** One entry of an output shape: a field of the linked record, or some fields of an object-valued one. */
export type OutputField = string | EmbeddedField;
export interface EmbeddedField {
  readonly name: string;
  /** The collection the embedded record comes from; absent for an object of the record itself (review `author`). */
  readonly from?: CollectionName;
  /** The fields of the embedded record that this shape shows, in this order. */
  readonly pick: readonly string[];
}

export type FilterDef =
  /** Whole-value match, case- and accent-insensitive; an array matches if any element does (CONTRACT 3). */
  | { readonly kind: 'text'; readonly param: string; readonly get: (r: LinkedRecord) => string | readonly string[] | null }
  /**
   * Exact match on a slug. `embed`: the slug is that of the record this field embeds (an object of
   * another collection): the postings are then numbered by that record's id, and no key is kept.
   */
  | { readonly kind: 'slug'; readonly param: string; readonly get: (r: LinkedRecord) => string | null; readonly embed?: string }
  /** One of a fixed set of values, anything else is a 400. */
  | { readonly kind: 'enum'; readonly param: string; readonly values: readonly string[]; readonly get: (r: LinkedRecord) => string | null }
  /** `true` or `false` exactly; false selects only the records that are not flagged. */
  | { readonly kind: 'boolean'; readonly param: string; readonly get: (r: LinkedRecord) => boolean | null }
  /** A numeric interval given by two parameters, each optional, with defaults at the bounds. */
  | {
      readonly kind: 'range';
      readonly minParam: string;
      readonly maxParam: string;
      readonly lowest: number;
      readonly highest: number;
      readonly get: (r: LinkedRecord) => number | null;
    };

export interface SortDef {
  readonly name: string;
  /** `text` sorts with a case- and accent-insensitive collation; `number` numerically (timestamps as ms). */
  readonly type: 'number' | 'text';
  readonly dir: 'asc' | 'desc';
  /** Records with a null key come last in either direction; ties break on `_id` ascending. */
  readonly key: (r: LinkedRecord) => number | string | null;
  /**
   * A number key that no answer shows (news `views`): the index keeps each record's key (indexes.ts
   * CollectionIndex `sortKeys`), so a patch can place an inserted or edited record in this order.
   */
  readonly kept?: boolean;
}

export interface ResourceDefinition {
  readonly name: CollectionName;
  /** The data file, relative to the data directory. */
  readonly file: string;
  /** Shape of one record of the data file. */
  readonly source: ObjectSchema;
  /**
   * The output fields that are not source fields (derived ones), with their types. `required` lists
   * those that are never null: derived from a required reference, or always built (CONTRACT 1).
   */
  readonly derived: ObjectSchema;
  /**
   * The collections whose references to this one `link` reads through `ctx.referrers` (celebrities:
   * movies, for the filmography). The loader keeps back-references for these only, and links this
   * collection once they are read.
   */
  readonly referrers?: readonly CollectionName[];
  /**
   * The fields of this collection's records that other collections' links read, beside `slug` and
   * the `pick` of the fields that embed them (celebrities: `name`, for a movie's cast). While a load
   * keeps a collection for others to link to, it keeps only these of each record once the
   * collection is indexed (src/data/load.ts); test/data/load-kept.test.ts checks that they suffice.
   */
  readonly readByLinks?: readonly string[];
  /** Builds the response-ready record. Pure: the same source and context give the same result. */
  link(record: SourceRecord, ctx: LinkContext): LinkedRecord;
  /**
   * A field that depends on the day it is served (celebrity `age`): left out of the linked record
   * and filled per request from a per-record key, so it is right on any day without re-serializing.
   */
  readonly late?: LateField;
  readonly listFields: readonly OutputField[];
  readonly detailFields: readonly OutputField[];
  readonly filters: readonly FilterDef[];
  /** The first one is the default (`latest`). */
  readonly sorts: readonly SortDef[];
  /** The text that `search` matches, before folding. */
  readonly searchText: (r: LinkedRecord) => string;
}

/** The schema of an output field: derived fields first (they replace a source field of the same name). */
export function outputSchema(def: ResourceDefinition, name: string): Schema | undefined {
  return def.derived.properties[name] ?? def.source.properties[name];
}

/** True when an output field is never null: required in the source, or a derived field marked required. */
export function isRequiredOutput(def: ResourceDefinition, name: string): boolean {
  const own = Object.hasOwn(def.derived.properties, name) ? def.derived : def.source;
  return own.required?.includes(name) ?? false;
}

/** Milliseconds since the epoch of an ISO timestamp stored in a linked record, or null. */
export const timeKey = (value: unknown): number | null => (typeof value === 'string' ? parseIsoTime(value) : null);

/** `latest` and `oldest`, the first two sorts of every collection, on a timestamp field (CONTRACT 3). */
export const byTime = (field: string): readonly [SortDef & { readonly name: 'latest' }, SortDef & { readonly name: 'oldest' }] => {
  // One function for both: the index builder computes a key shared by sorts once per record.
  const key = (r: LinkedRecord) => timeKey(r[field]);
  return [
    { name: 'latest', type: 'number', dir: 'desc', key },
    { name: 'oldest', type: 'number', dir: 'asc', key },
  ];
};
