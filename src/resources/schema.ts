// The small schema language that resource definitions use to describe their data files.
// One description drives validation (src/data/validate.ts), the OpenAPI document and, through the
// exact types these helpers keep, the typed client (src/client/types.ts).

export type Schema =
  | StringSchema
  | { readonly type: 'integer'; readonly min?: number; readonly max?: number }
  | { readonly type: 'number'; readonly min?: number; readonly max?: number }
  | { readonly type: 'boolean' }
  | { readonly type: 'array'; readonly items: Schema }
  | ObjectSchema
  | { readonly type: 'map'; readonly values: Schema };

export interface StringSchema {
  readonly type: 'string';
  /**
   * url: absolute http(s) URL; date: YYYY-MM-DD; timestamp: ISO 8601 UTC with milliseconds;
   * slug: ^[a-z0-9]+(-[a-z0-9]+)*$ (CONTRACT 7); html: markup, served as is.
   */
  readonly format?: 'url' | 'date' | 'timestamp' | 'slug' | 'html';
  readonly enum?: readonly string[];
  /** The slug of a record in another collection (CONTRACT 7: references must resolve). */
  readonly ref?: string;
}

export interface ObjectSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, Schema>>;
  /** Properties that must be present and non-null; every other one may be missing or null. */
  readonly required?: readonly string[];
  /**
   * At least one of these must be present (a movie cast member is either a celebrity of the data
   * set or a plain name).
   */
  readonly oneOf?: readonly string[];
}

// Each helper returns the exact type of what it builds (not just Schema), so property names, required
// lists and enums survive into the types of responses and parameters.
type Bounds = { readonly min?: number; readonly max?: number };
const bounds = (min?: number, max?: number): Bounds => ({ ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) });

export const str = (format?: StringSchema['format']): StringSchema => (format ? { type: 'string', format } : { type: 'string' });
export const ref = (collection: string): StringSchema => ({ type: 'string', format: 'slug', ref: collection });
export const int = (min?: number, max?: number): { readonly type: 'integer' } & Bounds => ({ type: 'integer', ...bounds(min, max) });
export const num = (min?: number, max?: number): { readonly type: 'number' } & Bounds => ({ type: 'number', ...bounds(min, max) });
export const bool: { readonly type: 'boolean' } = { type: 'boolean' };
export const arrayOf = <const I extends Schema>(items: I): { readonly type: 'array'; readonly items: I } => ({ type: 'array', items });
export const strings = arrayOf(str());
export const urls = arrayOf(str('url'));
type Obj<P, R> = { readonly type: 'object'; readonly properties: P; readonly required: R; readonly oneOf?: readonly string[] };
// Two signatures: without `required`, the type says none is (an omitted argument would infer the constraint).
export function obj<const P extends Readonly<Record<string, Schema>>>(properties: P): Obj<P, readonly []>;
export function obj<const P extends Readonly<Record<string, Schema>>, const R extends readonly (keyof P & string)[]>(
  properties: P,
  required: R,
  oneOf?: readonly (keyof P & string)[],
): Obj<P, R>;
export function obj(given: Readonly<Record<string, Schema>>, required: readonly string[] = [], oneOf?: readonly string[]): ObjectSchema {
  // No prototype: a record's field named `__proto__`, `constructor` or `toString` finds nothing here.
  const properties = Object.assign(Object.create(null) as Record<string, Schema>, given);
  return oneOf ? { type: 'object', properties, required, oneOf } : { type: 'object', properties, required };
}
export const map = <const V extends Schema>(values: V): { readonly type: 'map'; readonly values: V } => ({ type: 'map', values });
