// JSON Schema (2020-12, as OpenAPI 3.1 uses it) of what the serializer emits, read from the same
// definitions and the same src/data/shape.ts lookups, so the document cannot drift from the responses.
import { PATTERNS } from '../resources/patterns.ts';
import { embeddedSchema } from '../data/shape.ts';
import { RESOURCES } from '../resources/index.ts';
import { render, type JsonSchema, type Rendering } from '../resources/json-schema.ts';
import type { Schema } from '../resources/schema.ts';
import { isRequiredOutput, outputSchema, type OutputField, type ResourceDefinition } from '../resources/types.ts';

export type { JsonSchema };

export const SLUG_PATTERN = PATTERNS.slug;

const STRING_FORMATS: Readonly<Record<string, JsonSchema>> = {
  url: { format: 'uri' },
  date: { format: 'date' },
  timestamp: { format: 'date-time' },
  slug: { pattern: SLUG_PATTERN, minLength: 1 },
  html: { contentMediaType: 'text/html' },
};

/** A response value as the serializer writes it (src/data/shape.ts). */
const RESPONSE: Rendering = {
  string: (schema) => ({ type: 'string', ...(schema.format ? STRING_FORMATS[schema.format] : {}), ...(schema.enum ? { enum: [...schema.enum] } : {}) }),
  object: (schema) => objectSchema(schema.properties, schema.required ?? []),
  mapValue: (value) => value,
};

/** The JSON Schema of a value that is present (not null). */
const valueSchema = (schema: Schema): JsonSchema => render(schema, RESPONSE);

/** Every property present (CONTRACT 1); the ones the data may lack are nullable. */
function objectSchema(properties: Readonly<Record<string, Schema | undefined>>, required: readonly string[]): JsonSchema {
  const props: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(properties)) props[name] = member(schema, required.includes(name));
  return { type: 'object', properties: props, required: Object.keys(props), additionalProperties: false };
}

/**
 * A field as the serializer emits it (src/data/shape.ts): an array the data lacks is [], anything
 * else null, objects included (CONTRACT 1); a required field is never null.
 */
function member(schema: Schema | undefined, required: boolean): JsonSchema {
  if (schema === undefined) return {}; // unreachable for valid definitions; accept anything rather than lie
  const value = valueSchema(schema);
  return required || schema.type === 'array' ? value : nullable(value);
}

function nullable(value: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...value, type: [value.type, 'null'] };
  if (Array.isArray(value.enum)) out.enum = [...value.enum, null];
  return out;
}

/** An embedded object (outfit `celebrity`, review `author`): the picked fields, all present. */
function embedded(def: ResourceDefinition, field: Exclude<OutputField, string>): JsonSchema {
  // Picked fields are nullable by the rules of the record (or the object) they come from.
  const own = def.source.properties[field.name];
  const required = field.from
    ? field.pick.filter((name) => isRequiredOutput(RESOURCES[field.from!], name))
    : own?.type === 'object' ? (own.required ?? []) : [];
  const value = objectSchema(embeddedSchema(def, field), required);
  // The serializer gives null when the object is absent; a required field or reference never is.
  return isRequiredOutput(def, field.name) ? value : nullable(value);
}

/** The JSON Schema of one record in the list (L) or detail (D) shape of `def`. */
export function recordSchema(def: ResourceDefinition, fields: readonly OutputField[]): JsonSchema {
  const props: Record<string, JsonSchema> = {};
  for (const field of fields) {
    if (typeof field === 'string') props[field] = member(outputSchema(def, field), isRequiredOutput(def, field));
    else props[field.name] = embedded(def, field);
  }
  return { type: 'object', properties: props, required: Object.keys(props), additionalProperties: false };
}

