// Turns a linked record into its list (L) or detail (D) shape: every documented field present, in
// order, nothing else; a value the data lacks is null, or [] for an array (CONTRACT 1).
import { RESOURCES } from '../resources/index.ts';
import type { Schema } from '../resources/schema.ts';
import { outputSchema as fieldSchema, type LinkedRecord, type OutputField, type ResourceDefinition } from '../resources/types.ts';

type Shaper = (value: unknown) => unknown;

/** A function that fills the defaults of `schema` into a value; compiled once per field at load. */
function compile(schema: Schema | undefined): Shaper {
  if (!schema) return (v) => v ?? null;
  switch (schema.type) {
    case 'array': {
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

/**
 * Compiles the list and detail shapes of a collection into one function from linked record to the
 * JSON text of both. Text is built field by field: a value both shapes show is stringified once.
 */
export function compileShapes(def: ResourceDefinition): (r: LinkedRecord) => { list: ShapedJson; detail: ShapedJson } {
  const slots = new Map<string, (r: LinkedRecord) => string>();
  const plan = (fields: readonly OutputField[]) =>
    fields.map((field, i) => {
      const name = typeof field === 'string' ? field : field.name;
      const slot = typeof field === 'string' ? name : `${name}:${field.pick.join(',')}`;
      if (!slots.has(slot)) slots.set(slot, valueJson(def, field));
      return { prefix: `${i === 0 ? '' : ','}"${name}":`, slot, late: def.late?.field === name };
    });
  const shapes = [plan(def.listFields), plan(def.detailFields)] as const;
  const order = [...slots.keys()];
  const fns = [...slots.values()];
  const at = new Map(order.map((slot, i) => [slot, i]));
  const compiled = shapes.map((steps) => steps.map((s) => ({ ...s, index: at.get(s.slot)! })));
  const build = (steps: (typeof compiled)[number], texts: string[]): ShapedJson => {
    let text = '{';
    for (const step of steps) {
      if (step.late) {
        const head = text + step.prefix;
        text = '';
        for (const rest of steps.slice(steps.indexOf(step) + 1)) text += rest.prefix + texts[rest.index]!;
        return [head, text + '}'];
      }
      text += step.prefix + texts[step.index]!;
    }
    return [text + '}', null];
  };
  return (r) => {
    const texts = fns.map((fn) => fn(r));
    return { list: build(compiled[0]!, texts), detail: build(compiled[1]!, texts) };
  };
}

/** JSON text of one output field's value, with the defaults of its schema filled in. */
function valueJson(def: ResourceDefinition, field: OutputField): (r: LinkedRecord) => string {
  if (typeof field === 'string') {
    const shaper = compile(fieldSchema(def, field));
    return (r) => JSON.stringify(shaper(r[field])) ?? 'null';
  }
  const picks = Object.entries(embeddedSchema(def, field)).map(([name, s]) => [name, compile(s)] as const);
  return (r) => {
    const v = r[field.name];
    if (v === null || typeof v !== 'object') return 'null';
    const src = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [name, s] of picks) out[name] = s(src[name]);
    return JSON.stringify(out);
  };
}
