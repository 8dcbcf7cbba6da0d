// The small schema language that resource definitions use to describe their data files.
// One description drives validation (src/data/validate.ts) and the OpenAPI document.

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

export const str = (format?: StringSchema['format']): StringSchema => (format ? { type: 'string', format } : { type: 'string' });
export const ref = (collection: string): StringSchema => ({ type: 'string', format: 'slug', ref: collection });
export const int = (min?: number, max?: number): Schema => ({ type: 'integer', ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) });
export const num = (min?: number, max?: number): Schema => ({ type: 'number', ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) });
export const bool: Schema = { type: 'boolean' };
export const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
export const strings: Schema = arrayOf(str());
export const urls: Schema = arrayOf(str('url'));
export const obj = (properties: Record<string, Schema>, required: readonly string[] = [], oneOf?: readonly string[]): ObjectSchema =>
  oneOf ? { type: 'object', properties, required, oneOf } : { type: 'object', properties, required };
export const map = (values: Schema): Schema => ({ type: 'map', values });
