// A record's validation in one compiled function per schema that answers only "valid or not"
// (issue 19): nearly every record of a load is valid, and for those it does what checkObject does
// (references collected in the same order, timestamps rewritten the same way) at a fraction of its
// cost. A record it turns down is checked again by checkObject, which words every problem, so the
// messages stay checkObject's own.
import { SLUG } from '../resources/patterns.ts';
import type { ObjectSchema, Schema } from '../resources/schema.ts';
import { isDate, isUrl, timestampMs, type RefSite } from './validate.ts';

/**
 * True when checkObject(schema, record, '', out) would find no problem; it has then pushed to `refs`
 * what checkObject pushes to `out.refs`, and rewritten the record's timestamps as checkObject does.
 * False otherwise, with `refs` and the record's timestamps in any state (the caller checks again).
 */
export type FastCheck = (record: Record<string, unknown>, refs: RefSite[]) => boolean;

/** What the generated code calls, passed in as one argument. */
const HELPERS = { SLUG, isDate, isUrl, timestampMs, iso: (ms: number) => new Date(ms).toISOString() };

/** Whether a schema holds a reference anywhere: only then are the paths of its fields built. */
function holdsRef(schema: Schema): boolean {
  switch (schema.type) {
    case 'string':
      return schema.ref !== undefined;
    case 'array':
      return holdsRef(schema.items);
    case 'map':
      return holdsRef(schema.values);
    case 'object':
      return Object.values(schema.properties).some(holdsRef);
    default:
      return false;
  }
}

/**
 * Source of the functions that check a schema: one function per object schema (`o0` is the
 * record's), each a `for...in` over the object's own fields in their order (the order checkObject
 * walks them, so references come in its order too) with a `switch` on the name, so each field's
 * check is straight-line code that V8 compiles for the shapes the data has. A field no case names
 * (unknown, or `__proto__`) answers false.
 */
class Compiler {
  readonly functions: string[] = [];
  private vars = 0;

  object(schema: ObjectSchema): string {
    const names = Object.keys(schema.properties);
    // Over 31 fields the bits of `seen` would not fit a 32-bit `&`: such a schema is left to checkObject.
    if (names.length > 31) throw new RangeError('too many fields');
    const slot = this.functions.push('') - 1; // nested objects take the next slots
    const bits = (fields: readonly string[]) => fields.reduce((m, f) => m + 2 ** names.indexOf(f), 0);
    const cases = names.map((field, i) => {
      const v = this.var();
      const path = () => `(path === '' ? ${JSON.stringify(field)} : path + ${JSON.stringify(`.${field}`)})`;
      const check = this.value(schema.properties[field]!, v, 'v', JSON.stringify(field), path);
      return `case ${JSON.stringify(field)}: { const ${v} = v[k]; if (${v} !== null && ${v} !== undefined) { ${check} seen += ${2 ** i}; } break; }`;
    });
    const required = bits(schema.required ?? []);
    const oneOf = bits(schema.oneOf ?? []);
    const tail = [required ? `(seen & ${required}) === ${required}` : '', oneOf ? `(seen & ${oneOf}) !== 0` : ''].filter(Boolean).join(' && ') || 'true';
    this.functions[slot] = `function o${slot}(v, path, refs) { let seen = 0; for (const k in v) { switch (k) { ${cases.join(' ')} default: return false; } } return ${tail}; }`;
    return `o${slot}`;
  }

  private var(): string {
    return `x${this.vars++}`;
  }

  /**
   * Statements that `return false` unless `x` (not null) passes `schema`, as checkValue(schema, x,
   * ..., holder, key) would; `field()` is the expression of the field's path, asked only for a reference.
   */
  private value(schema: Schema, x: string, holder: string, key: string, field: () => string): string {
    switch (schema.type) {
      case 'string': {
        const tests = [`typeof ${x} !== 'string'`];
        if (schema.enum) tests.push(`!(${schema.enum.map((e) => `${x} === ${JSON.stringify(e)}`).join(' || ')})`);
        let after = '';
        switch (schema.format) {
          case 'slug':
            tests.push(`!H.SLUG.test(${x})`);
            break;
          case 'url':
            tests.push(`!H.isUrl(${x})`);
            break;
          case 'date':
            tests.push(`!H.isDate(${x})`);
            break;
          case 'timestamp': {
            const ms = this.var();
            after = `{ const ${ms} = H.timestampMs(${x}); if (!Number.isFinite(${ms})) return false; if (${x}.length !== 24) ${holder}[${key}] = H.iso(${ms}); }`;
            break;
          }
        }
        const ref = schema.ref ? `refs.push({ collection: ${JSON.stringify(schema.ref)}, slug: ${x}, field: ${field()}, holder: ${holder} });` : '';
        return `if (${tests.join(' || ')}) return false; ${after} ${ref}`;
      }
      case 'integer':
      case 'number': {
        const tests = [`typeof ${x} !== 'number'`, schema.type === 'integer' ? `!Number.isSafeInteger(${x})` : `!Number.isFinite(${x})`];
        if (schema.min !== undefined) tests.push(`${x} < ${schema.min}`);
        if (schema.max !== undefined) tests.push(`${x} > ${schema.max}`);
        return `if (${tests.join(' || ')}) return false;`;
      }
      case 'boolean':
        return `if (typeof ${x} !== 'boolean') return false;`;
      case 'array': {
        const i = this.var();
        const item = this.var();
        const path = this.var();
        const itemCheck = this.value(schema.items, item, x, i, () => `${path} + '[' + ${i} + ']'`);
        return (
          `if (!Array.isArray(${x})) return false; ${holdsRef(schema) ? `const ${path} = ${field()};` : ''}` +
          `for (let ${i} = 0; ${i} < ${x}.length; ${i}++) { const ${item} = ${x}[${i}]; if (${item} === null || ${item} === undefined) return false; ${itemCheck} }`
        );
      }
      case 'map': {
        const k = this.var();
        const item = this.var();
        const path = this.var();
        const itemCheck = this.value(schema.values, item, x, k, () => `${path} + '.' + ${k}`);
        return (
          `if (typeof ${x} !== 'object' || Array.isArray(${x})) return false; ${holdsRef(schema) ? `const ${path} = ${field()};` : ''}` +
          `for (const ${k} of Object.keys(${x})) { const ${item} = ${x}[${k}]; if (${item} !== null) { ${itemCheck} } }`
        );
      }
      case 'object': {
        const fn = this.object(schema);
        return `if (typeof ${x} !== 'object' || Array.isArray(${x}) || !${fn}(${x}, ${holdsRef(schema) ? field() : "''"}, refs)) return false;`;
      }
    }
  }
}

/**
 * The compiled check of `schema`, or null where it cannot be made (code generation from strings
 * turned off, or a schema past what it handles): then every record goes to checkObject, as before.
 */
export function fastCheck(schema: ObjectSchema): FastCheck | null {
  try {
    const c = new Compiler();
    c.object(schema);
    const make = new Function('H', `'use strict'; ${c.functions.join('\n')}\nreturn (record, refs) => o0(record, '', refs);`) as (h: typeof HELPERS) => FastCheck;
    return make(HELPERS);
  } catch {
    return null;
  }
}
