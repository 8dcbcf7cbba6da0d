// JSON Schema (2020-12) of each data file, from the same source schema the loader validates with
// (src/data/validate.ts), so an editor flags what `data check` would. What a schema of one file
// cannot say, `data check` still does: unique _id and slug, and references that resolve.
import { PATTERNS } from './patterns.ts';
import type { ObjectSchema, Schema, StringSchema } from './schema.ts';
import type { ResourceDefinition } from './types.ts';

export type JsonSchema = Record<string, unknown>;

/** What differs between renderings of the schema language: strings, objects, map values. */
export interface Rendering {
  string(schema: StringSchema): JsonSchema;
  /** `value` renders a property's schema (present, not null) the same way. */
  object(schema: ObjectSchema, value: (schema: Schema) => JsonSchema): JsonSchema;
  mapValue(value: JsonSchema): JsonSchema;
}

/** JSON Schema (2020-12) of a present value, in one rendering: numbers, booleans and arrays are the same in all. */
export function render(schema: Schema, how: Rendering): JsonSchema {
  switch (schema.type) {
    case 'string':
      return how.string(schema);
    case 'integer':
    case 'number': {
      const out: JsonSchema = { type: schema.type };
      if (schema.min !== undefined) out.minimum = schema.min;
      if (schema.max !== undefined) out.maximum = schema.max;
      return out;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'array':
      // No element is null: the loader refuses one, and the serializer maps each through its shape.
      return { type: 'array', items: render(schema.items, how) };
    case 'map':
      return { type: 'object', additionalProperties: how.mapValue(render(schema.values, how)) };
    case 'object':
      return how.object(schema, (s) => render(s, how));
  }
}

/** The loader's own patterns (src/data/validate.ts). */
const { slug: SLUG, urlStart: URL_START, timestamp: TIMESTAMP } = PATTERNS;

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

/** A data file as the loader reads it (src/data/validate.ts). */
const DATA_FILE: Rendering = {
  string(schema) {
    const out: JsonSchema = { type: 'string' };
    if (schema.enum) out.enum = [...schema.enum];
    if (schema.format === 'slug') out.pattern = SLUG;
    if (schema.format === 'url') Object.assign(out, { pattern: URL_START, description: 'An absolute http or https URL' });
    if (schema.format === 'date') Object.assign(out, { pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date' });
    if (schema.format === 'timestamp') Object.assign(out, { pattern: TIMESTAMP, description: 'ISO 8601 UTC, e.g. 2026-11-22T10:54:22.000Z' });
    if (schema.format === 'html') out.contentMediaType = 'text/html';
    if (schema.ref) out.description = `The slug of a record in ${schema.ref}.json`;
    return out;
  },
  object(schema, value) {
    const required = schema.required ?? [];
    const properties: Record<string, JsonSchema> = {};
    // Optional fields may be absent or null; required ones must be there and not null.
    for (const [name, prop] of Object.entries(schema.properties)) properties[name] = required.includes(name) ? value(prop) : nullable(value(prop));
    const out: JsonSchema = { type: 'object', properties, required: [...required], additionalProperties: false };
    if (schema.oneOf) out.anyOf = schema.oneOf.map((name) => ({ required: [name], properties: { [name]: { not: { type: 'null' } } } }));
    return out;
  },
  mapValue: nullable, // the loader skips a null value in a map
};

/** The schema of `def.file`: a JSON array of records in the source shape. */
export function dataFileSchema(def: ResourceDefinition): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${def.name}.schema.json`,
    title: def.file,
    description: `The ${def.name} of a celebrity-api data directory. \`celebrity-api data check\` also checks unique _id and slug, and that references resolve.`,
    type: 'array',
    items: render(def.source, DATA_FILE),
  };
}
