// Turns a linked record into its list (L) or detail (D) shape: every documented field present, in
// order, nothing else; a value the data lacks is null, or [] for an array (CONTRACT 1).
import { RESOURCES } from '../resources/index.ts';
import type { Schema } from '../resources/schema.ts';
import { outputSchema as fieldSchema, type LinkedRecord, type OutputField, type ResourceDefinition } from '../resources/types.ts';
import { writeAscii, writeByte, writeNull, writeString, writeValue, type ByteSink } from './json-bytes.ts';

type Shaper = (value: unknown) => unknown;

/** A function that fills the defaults of `schema` into a value; compiled once per field at load. */
function compile(schema: Schema | undefined): Shaper {
  if (!schema) return (v) => v ?? null;
  switch (schema.type) {
    case 'array': {
      // Validation refuses a null item, so an array of scalars is served as it is, without a copy.
      if (schema.items.type !== 'object') return (v) => (Array.isArray(v) ? v : []);
      const item = compile(schema.items);
      return (v) => (Array.isArray(v) ? v.map(item) : []);
    }
    // An object the data lacks is null, never {} (CONTRACT 1): a client tests for null, not for keys.
    case 'map':
      return (v) => (v !== null && typeof v === 'object' ? v : null);
    case 'object': {
      const props = Object.entries(schema.properties).map(([name, s]) => [name, compile(s)] as const);
      return (v) => {
        if (v === null || typeof v !== 'object') return null;
        const src = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const [name, shaper] of props) out[name] = shaper(src[name]);
        return out;
      };
    }
    default:
      return (v) => v ?? null;
  }
}

/** The schema of an embedded object's fields: from the other collection, or the record's own object. */
export function embeddedSchema(def: ResourceDefinition, field: Exclude<OutputField, string>): Record<string, Schema | undefined> {
  const pick: Record<string, Schema | undefined> = {};
  const own = def.source.properties[field.name];
  for (const name of field.pick) {
    pick[name] = field.from ? fieldSchema(RESOURCES[field.from], name) : own?.type === 'object' ? own.properties[name] : undefined;
  }
  return pick;
}

/** A record's JSON in one shape: the whole text, or the text before and after the late field's value. */
export type ShapedJson = readonly [head: string, tail: string | null];

/** A function from linked record to a fresh object holding `fields` in order, ready for one JSON.stringify. */
function objectOf(def: ResourceDefinition, fields: readonly OutputField[]): (r: LinkedRecord) => Record<string, unknown> {
  const steps = fields.map((field) => {
    if (typeof field === 'string') return [field, field, compile(fieldSchema(def, field))] as const;
    const picks = Object.entries(embeddedSchema(def, field)).map(([name, s]) => [name, compile(s)] as const);
    const embedded: Shaper = (v) => {
      if (v === null || typeof v !== 'object') return null;
      const src = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [name, s] of picks) out[name] = s(src[name]);
      return out;
    };
    return [field.name, field.name, embedded] as const;
  });
  return (r) => {
    const out: Record<string, unknown> = {};
    for (const [name, from, shaper] of steps) out[name] = shaper(r[from]);
    return out;
  };
}

/** One shape of a collection: the whole JSON text, or the text around the late field's value. */
function compileShape(def: ResourceDefinition, fields: readonly OutputField[]): (r: LinkedRecord) => ShapedJson {
  const late = def.late?.field;
  const at = fields.findIndex((f) => (typeof f === 'string' ? f : f.name) === late);
  if (at < 0) {
    const whole = objectOf(def, fields);
    return (r) => [JSON.stringify(whole(r)), null];
  }
  const before = objectOf(def, fields.slice(0, at));
  const after = objectOf(def, fields.slice(at + 1));
  const key = `"${late}":`;
  return (r) => {
    const head = JSON.stringify(before(r));
    const tail = JSON.stringify(after(r));
    return [head.length === 2 ? `{${key}` : `${head.slice(0, -1)},${key}`, tail.length === 2 ? '}' : `,${tail.slice(1)}`];
  };
}

/**
 * Compiles the list and detail shapes of a collection into one function from linked record to the
 * JSON text of both. Each shape is one object stringified whole: V8 writes it into one string, where
 * joining a string per field cost a third of a first start at 100k.
 */
export function compileShapes(def: ResourceDefinition): (r: LinkedRecord) => { list: ShapedJson; detail: ShapedJson } {
  const list = compileShape(def, def.listFields);
  const detail = compileShape(def, def.detailFields);
  return (r) => ({ list: list(r), detail: detail(r) });
}

/**
 * The fields `fields` of a shape as JSON text without the braces (`"a":1,"b":[]`; '' for none),
 * from one JSON.stringify of an object holding just them. The index builder joins such runs into a
 * list item and the detail-only text, so where each run starts is known without scanning the text,
 * and the fields a detail shares with its list item are serialized once (issue 19). No late field
 * may be among `fields`.
 */
export function compileFields(def: ResourceDefinition, fields: readonly OutputField[]): (r: LinkedRecord) => string {
  if (fields.length === 0) return () => '';
  const object = objectOf(def, fields);
  return (r) => {
    const json = JSON.stringify(object(r));
    return json.slice(1, json.length - 1);
  };
}

/** Writes one shaped value (what a Shaper returns, stringified) into a byte sink. */
type Writer = (out: ByteSink, value: unknown) => void;

const writeScalar: Writer = (out, v) => (v === null || v === undefined ? writeNull(out) : typeof v === 'string' ? writeString(out, v) : writeValue(out, v));

/** The writer of a schema's shaped value: what `compile(schema)` gives, as JSON.stringify writes it, without making it. */
function compileWriter(schema: Schema | undefined): Writer {
  if (!schema) return writeScalar;
  switch (schema.type) {
    case 'array': {
      const item = schema.items.type === 'object' ? compileWriter(schema.items) : writeScalar;
      return (out, v) => {
        if (!Array.isArray(v)) return writeAscii(out, EMPTY_ARRAY);
        writeByte(out, 0x5b);
        for (let i = 0; i < v.length; i++) {
          if (i > 0) writeByte(out, 0x2c);
          item(out, v[i]);
        }
        writeByte(out, 0x5d);
      };
    }
    case 'map':
      return (out, v) => (v !== null && typeof v === 'object' ? writeValue(out, v) : writeNull(out));
    case 'object':
      return objectWriter(Object.entries(schema.properties));
    default:
      return writeScalar;
  }
}

const EMPTY_ARRAY = Uint8Array.of(0x5b, 0x5d);
const ascii = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'latin1'));

/** `{"a":...,"b":...}` of the named properties of an object, null for a value that is not one. */
function objectWriter(props: readonly (readonly [string, Schema | undefined])[]): Writer {
  const keys = props.map(([name], i) => ascii(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:`));
  const writers = props.map(([, s]) => compileWriter(s));
  const names = props.map(([name]) => name);
  return (out, v) => {
    if (v === null || typeof v !== 'object') return writeNull(out);
    const src = v as Record<string, unknown>;
    if (names.length === 0) return writeAscii(out, EMPTY_OBJECT);
    for (let i = 0; i < names.length; i++) {
      writeAscii(out, keys[i]!);
      writers[i]!(out, src[names[i]!]);
    }
    writeByte(out, 0x7d);
  };
}

const EMPTY_OBJECT = Uint8Array.of(0x7b, 0x7d);

/**
 * compileFields written into a byte sink: the same text, byte for byte (test/data/json-bytes.test.ts),
 * without the object per shape, the string per run and its UTF-8 copy. `comma`: a comma before the
 * first field. `firstKey: false`: the first field's value without its key (and comma), which the
 * reader knows (detail-layout.ts keeps it once per collection). No late field may be among `fields`.
 */
export function compileFieldsWriter(def: ResourceDefinition, fields: readonly OutputField[], comma = false, firstKey = true): (r: LinkedRecord, out: ByteSink) => void {
  const keys = fields.map((field, i) => ascii(i === 0 && !firstKey ? '' : `${i > 0 || comma ? ',' : ''}${JSON.stringify(typeof field === 'string' ? field : field.name)}:`));
  const names = fields.map((field) => (typeof field === 'string' ? field : field.name));
  const writers = fields.map((field) => (typeof field === 'string' ? compileWriter(fieldSchema(def, field)) : objectWriter(Object.entries(embeddedSchema(def, field)))));
  return (r, out) => {
    for (let i = 0; i < names.length; i++) {
      writeAscii(out, keys[i]!);
      writers[i]!(out, r[names[i]!]);
    }
  };
}

/**
 * Properties `props` of an object value as objectWriter writes them, without the braces (`"a":1,"b":[]`;
 * a comma first with `comma`): the pieces of an array item whose other properties are another
 * collection's text (detail-layout.ts refs).
 */
export function propsWriter(props: readonly (readonly [string, Schema | undefined])[], comma: boolean): (out: ByteSink, v: Record<string, unknown>) => void {
  const keys = props.map(([name], i) => ascii(`${i > 0 || comma ? ',' : ''}${JSON.stringify(name)}:`));
  const writers = props.map(([, s]) => compileWriter(s));
  const names = props.map(([name]) => name);
  return (out, v) => {
    for (let i = 0; i < names.length; i++) {
      writeAscii(out, keys[i]!);
      writers[i]!(out, v[names[i]!]);
    }
  };
}
