// Turns a linked record into its list (L) or detail (D) shape: every documented field present, in
// order, nothing else; a value the data lacks is null, [] or {} (CONTRACT 1).
import { RESOURCES } from '../resources/index.ts';
import type { Schema } from '../resources/schema.ts';
import type { LinkedRecord, OutputField, ResourceDefinition } from '../resources/types.ts';

type Shaper = (value: unknown) => unknown;

/** A function that fills the defaults of `schema` into a value; compiled once per field at load. */
function compile(schema: Schema | undefined): Shaper {
  if (!schema) return (v) => v ?? null;
  switch (schema.type) {
    case 'array': {
      const item = compile(schema.items);
      return (v) => (Array.isArray(v) ? v.map(item) : []);
    }
    case 'map':
      return (v) => (v !== null && typeof v === 'object' ? v : {});
    case 'object': {
      const props = Object.entries(schema.properties).map(([name, s]) => [name, compile(s)] as const);
      return (v) => {
        if (v === null || typeof v !== 'object') return {};
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

/** The schema of an output field: derived fields first (they replace a source field of the same name). */
export function fieldSchema(def: ResourceDefinition, name: string): Schema | undefined {
  return def.derived[name] ?? def.source.properties[name];
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

/** Compiles an output shape into a function from linked record to plain object, ready for JSON.stringify. */
export function compileShape(def: ResourceDefinition, fields: readonly OutputField[]): (r: LinkedRecord) => Record<string, unknown> {
  const steps = fields.map((field) => {
    if (typeof field === 'string') return [field, compile(fieldSchema(def, field))] as const;
    const picks = Object.entries(embeddedSchema(def, field)).map(([name, s]) => [name, compile(s)] as const);
    const shaper: Shaper = (v) => {
      if (v === null || typeof v !== 'object') return null;
      const src = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [name, s] of picks) out[name] = s(src[name]);
      return out;
    };
    return [field.name, shaper] as const;
  });
  return (r) => {
    const out: Record<string, unknown> = {};
    for (const [name, shaper] of steps) out[name] = shaper(r[name]);
    return out;
  };
}
