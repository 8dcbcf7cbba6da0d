// Checks one data record against its source schema and lists every problem (CONTRACT 7).
import { PATTERNS, SLUG } from '../resources/patterns.ts';
import { canonicalTimestamp } from '../resources/iso-time.ts';
import type { ObjectSchema, Schema } from '../resources/schema.ts';

export interface Problem {
  /** The data file, e.g. `outfits.json`. */
  readonly file: string;
  /** 0-based index of the record in the file, or null for a problem with the whole file. */
  readonly index: number | null;
  /** Path of the field inside the record (`cast[2].celebrity`), or null. */
  readonly field: string | null;
  readonly reason: string;
}

/** A reference found while validating, resolved once every collection is read. */
export interface RefSite {
  readonly collection: string;
  readonly slug: string;
  readonly field: string;
  readonly holder: Readonly<Record<string, unknown>>;
}

/** What validating one record finds: problems as [field, reason], and the references it holds. */
export interface Findings {
  readonly problems: [field: string, reason: string][];
  readonly refs: RefSite[];
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = new RegExp(PATTERNS.timestamp);
const URL_START = new RegExp(PATTERNS.urlStart);

/** Formats a problem the way `data check` prints it: `file, record N, field: reason`. */
export function formatProblem(p: Problem): string {
  return `${p.file}${p.index === null ? '' : `, record ${p.index}`}${p.field === null ? '' : `, ${p.field}`}: ${p.reason}`;
}

/** Records a problem. A module function, not a closure per call: checkValue runs for every field of every record. */
function fail(out: Findings, path: string, reason: string): void {
  out.problems.push([path, reason]);
}

/**
 * The path of a field: `parent.key`, or `parent[key]` for an array element. Built only when a problem
 * or a reference needs it: joining a path for every field of a million records was a measurable cost.
 */
function pathOf(parent: string, key: string | number): string {
  return typeof key === 'number' ? `${parent}[${key}]` : parent === '' ? key : `${parent}.${key}`;
}

const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * The fast path of the URL rule: a host of letters, digits, dots and hyphens ending in a letter (so
 * never read as an IPv4 number), no `xn--` label, and a path of unreserved characters. Every such
 * string is one URL.canParse accepts; anything else is asked of URL.canParse itself.
 */
const PLAIN_URL = /^https?:\/\/(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*(?:\/[A-Za-z0-9._~\/-]*)?$/;

/** The URL rule of `format: 'url'`: an absolute http or https URL. */
export function isUrl(value: string): boolean {
  return (PLAIN_URL.test(value) && !value.includes('xn--')) || (URL_START.test(value) && URL.canParse(value));
}

/** Where YYYY-MM-DD has its digits. */
const DATE_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9];

/** The rule of `format: 'date'`: YYYY-MM-DD, a day that exists. */
export function isDate(value: string): boolean {
  // Nearly every date: YYYY-MM-DD with a month of 1-12 and a day of 1-28, a day every month has,
  // told from the units without the regex's match and a Date.
  if (value.length === 10 && value.charCodeAt(4) === 0x2d && value.charCodeAt(7) === 0x2d) {
    let digits = true;
    for (const i of DATE_DIGITS) {
      const c = value.charCodeAt(i);
      if (c < 0x30 || c > 0x39) digits = false;
    }
    const month = (value.charCodeAt(5) - 0x30) * 10 + value.charCodeAt(6) - 0x30;
    const day = (value.charCodeAt(8) - 0x30) * 10 + value.charCodeAt(9) - 0x30;
    if (digits && month >= 1 && month <= 12 && day >= 1 && day <= 28) return true;
  }
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
  return d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]!;
}

/**
 * Validates `value` against `schema`; pushes problems to `out.problems` and references to `out.refs`.
 * Timestamps are rewritten in place to `toISOString()` form, so they are served as CONTRACT 1 says.
 * The field's path is `pathOf(parent, key)`; `key` is also where the value sits in `holder`.
 */
function checkValue(
  schema: Schema,
  value: unknown,
  parent: string,
  out: Findings,
  holder: Record<string, unknown>,
  key: string | number,
): void {
  switch (schema.type) {
    case 'string': {
      if (typeof value !== 'string') return fail(out, pathOf(parent, key), `must be a string, got ${typeName(value)}`);
      if (schema.enum && !schema.enum.includes(value)) return fail(out, pathOf(parent, key), `must be one of ${schema.enum.join(', ')}`);
      switch (schema.format) {
        case 'slug':
          if (!SLUG.test(value)) return fail(out, pathOf(parent, key), 'must be a slug: lower-case letters and digits separated by single hyphens');
          break;
        case 'url':
          if (!isUrl(value)) return fail(out, pathOf(parent, key), 'must be an absolute http or https URL');
          break;
        case 'date':
          if (!isDate(value)) return fail(out, pathOf(parent, key), 'must be a date YYYY-MM-DD');
          break;
        case 'timestamp': {
          const ms = timestampMs(value);
          if (!Number.isFinite(ms)) return fail(out, pathOf(parent, key), 'must be an ISO 8601 UTC timestamp such as 2026-11-22T10:54:22.000Z');
          if (value.length !== 24) holder[key] = new Date(ms).toISOString();
          break;
        }
      }
      if (schema.ref) out.refs.push({ collection: schema.ref, slug: value, field: pathOf(parent, key), holder });
      return;
    }
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return fail(out, pathOf(parent, key), `must be a number, got ${typeName(value)}`);
      if (schema.type === 'integer' && !Number.isSafeInteger(value)) return fail(out, pathOf(parent, key), 'must be an integer');
      if (schema.min !== undefined && value < schema.min) return fail(out, pathOf(parent, key), `must be at least ${schema.min}`);
      if (schema.max !== undefined && value > schema.max) return fail(out, pathOf(parent, key), `must be at most ${schema.max}`);
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') fail(out, pathOf(parent, key), `must be true or false, got ${typeName(value)}`);
      return;
    case 'array': {
      if (!Array.isArray(value)) return fail(out, pathOf(parent, key), `must be an array, got ${typeName(value)}`);
      const items = value as unknown[];
      const path = pathOf(parent, key);
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (item === null || item === undefined) fail(out, path, `[${i}] must not be null`);
        else checkValue(schema.items, item, path, out, items as unknown as Record<string, unknown>, i);
      }
      return;
    }
    case 'map': {
      if (typeName(value) !== 'object') return fail(out, pathOf(parent, key), `must be an object, got ${typeName(value)}`);
      const map = value as Record<string, unknown>;
      const path = pathOf(parent, key);
      for (const k of Object.keys(map)) {
        if (map[k] !== null) checkValue(schema.values, map[k], path, out, map, k);
      }
      return;
    }
    case 'object':
      if (typeName(value) !== 'object') return fail(out, pathOf(parent, key), `must be an object, got ${typeName(value)}`);
      return checkObject(schema, value as Record<string, unknown>, pathOf(parent, key), out);
  }
}

/** Validates the properties of an object; unknown properties are reported, so a typo never passes silently. */
export function checkObject(schema: ObjectSchema, value: Record<string, unknown>, path: string, out: Findings): void {
  for (const name of schema.required ?? []) {
    if (value[name] === undefined || value[name] === null) out.problems.push([pathOf(path, name), 'is required']);
  }
  if (schema.oneOf && schema.oneOf.every((name) => value[name] === undefined || value[name] === null)) {
    out.problems.push([path || '(record)', `needs one of ${schema.oneOf.join(', ')}`]);
  }
  for (const name in value) {
    const prop = schema.properties[name];
    if (!prop) out.problems.push([pathOf(path, name), 'is not a known field']);
    else if (value[name] !== null && value[name] !== undefined) checkValue(prop, value[name], path, out, value, name);
  }
}

/**
 * The time of an ISO 8601 UTC timestamp, NaN when it is not one. One as toISOString writes it (nearly
 * every one) is read without the regex and the date parser.
 */
export function timestampMs(value: string): number {
  const ms = canonicalTimestamp(value);
  return ms === ms ? ms : TIMESTAMP.test(value) ? Date.parse(value) : NaN;
}

/** Whether a schema holds a timestamp anywhere (memo: asked once per schema node). */
const holdsTimestamp = new WeakMap<Schema, boolean>();
function hasTimestamp(schema: Schema): boolean {
  let got = holdsTimestamp.get(schema);
  if (got === undefined) {
    got =
      schema.type === 'string' ? schema.format === 'timestamp'
      : schema.type === 'array' ? hasTimestamp(schema.items)
      : schema.type === 'map' ? hasTimestamp(schema.values)
      : schema.type === 'object' ? Object.values(schema.properties).some(hasTimestamp)
      : false;
    holdsTimestamp.set(schema, got);
  }
  return got;
}

/** The timestamp at `holder[key]` rewritten as checkValue does for a valid one; anything else is left alone. */
function normalizeValue(schema: Schema, holder: Record<string, unknown>, key: string | number): void {
  const value = holder[key];
  if (value === null || value === undefined) return;
  switch (schema.type) {
    case 'string':
      if (typeof value === 'string' && value.length !== 24) {
        const ms = timestampMs(value);
        if (Number.isFinite(ms)) holder[key] = new Date(ms).toISOString();
      }
      return;
    case 'array':
      if (Array.isArray(value)) for (let i = 0; i < value.length; i++) normalizeValue(schema.items, value as unknown as Record<string, unknown>, i);
      return;
    case 'map':
      if (typeName(value) === 'object') for (const k of Object.keys(value)) normalizeValue(schema.values, value as Record<string, unknown>, k);
      return;
    case 'object':
      if (typeName(value) === 'object') normalizeObject(schema, value as Record<string, unknown>);
      return;
  }
}

/** An object schema's properties that hold a timestamp (memo: asked once per schema, not per record). */
const timestampProps = new WeakMap<ObjectSchema, readonly (readonly [string, Schema])[]>();

function normalizeObject(schema: ObjectSchema, value: Record<string, unknown>): void {
  let props = timestampProps.get(schema);
  if (props === undefined) timestampProps.set(schema, (props = Object.entries(schema.properties).filter(([, prop]) => hasTimestamp(prop))));
  for (let i = 0; i < props.length; i++) normalizeValue(props[i]![1], value, props[i]![0]);
}

/**
 * What validation changes in a record, without the validation: its timestamps rewritten in
 * `toISOString()` form (checkObject does it in place as it checks them). For a record an earlier
 * read of the same file already validated (load.ts reads celebrities twice), so it is served as
 * that read's checkObject would leave it. Null when the schema holds no timestamp.
 */
export function timestampNormalizer(schema: ObjectSchema): ((record: Record<string, unknown>) => void) | null {
  return hasTimestamp(schema) ? (record) => normalizeObject(schema, record) : null;
}
