// Query string of a list endpoint -> QueryPlan, or a ParameterError (400) naming the parameter (CONTRACT 3).
import { fold } from '../data/fold.ts';
import { SLUG } from '../resources/patterns.ts';
import { ParameterError } from '../errors.ts';
import type { FilterDef, ResourceDefinition } from '../resources/types.ts';
import { KnownKeys, type KnownKey } from './known-keys.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_SEARCH_LENGTH, type QueryPlan } from './plan.ts';

type RangeFilter = Extract<FilterDef, { kind: 'range' }>;
type EqualityFilter = Exclude<FilterDef, RangeFilter>;

/** What one recognized parameter name stands for; `bit` marks it as seen, to reject a repeat. */
type Slot =
  | { readonly name: string; readonly type: 'page' | 'limit' | 'sort' | 'search'; readonly bit: number }
  | {
      readonly name: string; readonly type: 'filter'; readonly bit: number; readonly filter: EqualityFilter; readonly index: number; readonly rule: string;
      /** The filter's keys met before (an enum's and a boolean's from the start): a plain value is matched in place. */
      readonly known: KnownKeys;
    }
  | { readonly name: string; readonly type: 'min' | 'max'; readonly bit: number; readonly range: RangeFilter; readonly rule: string; readonly bounds: Bounds };

/** A range's bounds as decimal text, for comparing a parameter as written (issue 15, item 8). */
interface Bounds {
  readonly lowest: string;
  readonly highest: string;
}

/** Everything about a definition that does not depend on the request, built once per definition. */
interface Compiled {
  readonly slots: ReadonlyMap<string, Slot>;
  /** The same slots in a list, for matching a name in place in the query (slotAt). */
  readonly slotList: readonly Slot[];
  /** The sort names in definition order (the strings the definition holds: sortAt gives these). */
  readonly sortList: readonly string[];
  readonly sortRule: string;
  readonly defaultSort: string;
  readonly filters: readonly EqualityFilter[];
}

const PAGE_RULE = 'must be an integer >= 1';
const PAGE_MAX_RULE = `must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`;
const LIMIT_RULE = `must be an integer >= 1 (values above ${MAX_LIMIT} count as ${MAX_LIMIT})`;
const SEARCH_RULE = `must be at most ${MAX_SEARCH_LENGTH} characters`;
const REPEAT_RULE = 'must not be given more than once';
const EMPTY_RULE = 'must not be empty';
const BOOLEAN_RULE = 'must be true or false';
const SLUG_RULE = 'must be a slug: lower-case letters and digits separated by single hyphens';
const ENCODING_RULE = 'must be valid percent-encoded UTF-8';
const NO_FILTERS: QueryPlan['filters'] = Object.freeze([]);

const compiledByDef = new WeakMap<ResourceDefinition, Compiled>();
/** The last definition parsed for and its compiled form: most requests ask the endpoint the one before asked. */
let lastDef: ResourceDefinition | null = null;
let lastCompiled: Compiled | null = null;

function compile(def: ResourceDefinition): Compiled {
  const slots = new Map<string, Slot>();
  const add = (name: string, slot: Slot): void => {
    // Definitions are static data: a clash is a programming error, caught by the test over every resource.
    if (slots.has(name)) throw new Error(`${def.name}: query parameter '${name}' is defined twice`);
    slots.set(name, slot);
  };
  let count = 0;
  const next = (): number => {
    // One bit per parameter in a per-request integer: repeats are caught without allocating a Set.
    if (count > 30) throw new Error(`${def.name}: more than 31 query parameters`);
    return 1 << count++;
  };
  for (const type of ['page', 'limit', 'sort', 'search'] as const) add(type, { name: type, type, bit: next() });
  const filters: EqualityFilter[] = [];
  let ranges = 0;
  def.filters.forEach((filter, index) => {
    if (filter.kind === 'range') {
      // QueryPlan carries one range; a second would need a plan change, not a silent drop.
      if (++ranges > 1) throw new Error(`${def.name}: more than one range filter`);
      const rule = `must be a number from ${filter.lowest} to ${filter.highest}, written as digits with an optional fraction`;
      const bounds = { lowest: String(filter.lowest), highest: String(filter.highest) };
      if (!isDecimal(bounds.lowest) || !isDecimal(bounds.highest)) throw new Error(`${def.name}: range bounds must be plain decimals`);
      add(filter.minParam, { name: filter.minParam, type: 'min', bit: next(), range: filter, rule, bounds });
      add(filter.maxParam, { name: filter.maxParam, type: 'max', bit: next(), range: filter, rule, bounds });
      return;
    }
    filters[index] = filter;
    const rule =
      filter.kind === 'enum'
        ? `must be one of: ${filter.values.join(', ')}`
        : filter.kind === 'boolean' ? BOOLEAN_RULE : filter.kind === 'slug' ? SLUG_RULE : EMPTY_RULE;
    const values = filter.kind === 'enum' ? filter.values : filter.kind === 'boolean' ? ['true', 'false'] : [];
    const known = new KnownKeys(filter.param, filter.kind === 'text', values);
    add(filter.param, { name: filter.param, type: 'filter', bit: next(), filter, index, rule, known });
  });
  const names = def.sorts.map((s) => s.name);
  return {
    slots,
    slotList: [...slots.values()],
    sortList: names,
    sortRule: `must be one of: ${names.join(', ')}`,
    defaultSort: names[0]!,
    filters,
  };
}

/** '+' is a space (HTML form encoding), then RFC 3986 percent-decoding; malformed input is a 400. */
function decode(text: string, param: string, rule: string): string {
  try {
    return decodeURIComponent(text.indexOf('+') === -1 ? text : text.replaceAll('+', ' '));
  } catch {
    throw new ParameterError(param, rule);
  }
}

/** True when `text[from, to)` is `name`. */
function isAt(text: string, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (text.charCodeAt(from + i) !== name.charCodeAt(i)) return false;
  return true;
}

/** The slot whose name is `text[from, to)`, or undefined. */
function slotAt(slots: readonly Slot[], text: string, from: number, to: number): Slot | undefined {
  for (let i = 0; i < slots.length; i++) if (isAt(text, from, to, slots[i]!.name)) return slots[i];
  return undefined;
}

/** The sort name that is `text[from, to)` (the definition's string), or undefined. */
function sortAt(names: readonly string[], text: string, from: number, to: number): string | undefined {
  for (let i = 0; i < names.length; i++) if (isAt(text, from, to, names[i]!)) return names[i];
  return undefined;
}

/** The value of the digits `text[from, to)` (at most 15: exact as a number). */
function digitsAt(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (text.charCodeAt(i) - 48);
  return n;
}

/** True for one or more ASCII digits and nothing else. */
function isDigits(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** `7`, `7.5`, `0.25`; not `5.`, `.5`, `-1`, `1e1` or '' (strict, so a typo is a 400 and not a guess). */
function isDecimal(text: string): boolean {
  const dot = text.indexOf('.');
  return dot === -1 ? isDigits(text, 0, text.length) : isDigits(text, 0, dot) && isDigits(text, dot + 1, text.length);
}

/**
 * Compares two decimals as written (`isDecimal` texts): -1, 0 or 1. Exact at any length, where the
 * floats would not be: `10.0000000000000001` parses to 10 but is greater than 10.
 */
export function compareDecimal(a: string, b: string): number {
  const [ai, af] = splitDecimal(a);
  const [bi, bf] = splitDecimal(b);
  if (ai.length !== bi.length) return ai.length < bi.length ? -1 : 1;
  if (ai !== bi) return ai < bi ? -1 : 1;
  return af === bf ? 0 : af < bf ? -1 : 1; // fractions without trailing zeros compare as strings
}

/** Integer part without leading zeros, fraction without trailing zeros. */
function splitDecimal(text: string): [string, string] {
  const dot = text.indexOf('.');
  const int = (dot === -1 ? text : text.slice(0, dot)).replace(/^0+/, '');
  const frac = dot === -1 ? '' : text.slice(dot + 1).replace(/0+$/, '');
  return [int, frac];
}

/** Length in code points: an emoji counts as one character, as a user would count it. */
function charCount(text: string, stopAbove: number): number {
  if (text.length <= stopAbove) return text.length; // code points never outnumber UTF-16 units
  let n = 0;
  for (let i = 0; i < text.length && n <= stopAbove; i++, n++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
  }
  return n;
}

/**
 * Parses the query `query[at..]` (the raw text after '?', possibly '') for the list endpoint of
 * `def`. Errors are reported for the first bad piece in query order; min > max of a range is checked
 * after all pieces. The server passes the whole request target and where its query starts: the
 * target is one flat string, where the query sliced from it is a view whose every character read
 * goes through its parent (about 1,300 of a filter page's 6,500 instructions of parse on Node 20).
 */
export function parseListQuery(def: ResourceDefinition, query: string, at = 0): QueryPlan {
  let c = lastDef === def ? lastCompiled! : compiledByDef.get(def);
  if (c === undefined) compiledByDef.set(def, (c = compile(def)));
  lastDef = def;
  lastCompiled = c;

  let seen = 0;
  let page = 1;
  let limit = DEFAULT_LIMIT;
  let sort = c.defaultSort;
  let search: string | null = null;
  let keys: (string | undefined)[] | null = null;
  let one: KnownKey | null = null; // the query's first filter while it is its only one, when its key is noted
  let oneAt = -1;
  let range: RangeFilter | null = null;
  let min: string | null = null; // as written: compared as text, converted once at the end
  let max: string | null = null;

  const n = query.length;
  for (let start = at; start < n; ) {
    // One pass over the piece: where it ends, its first '=', and whether its name or value holds a
    // '%' or a '+' (two indexOf calls and two scans were about 700 instructions of a filter page's parse).
    let end = start;
    let eq = -1;
    let escapedName = false;
    let escapedValue = false;
    for (; end < n; end++) {
      const ch = query.charCodeAt(end);
      if (ch === 38) break; // '&'
      if (ch === 61) {
        if (eq === -1) eq = end; // '='
      } else if (ch === 37 || ch === 43) {
        if (eq === -1) escapedName = true;
        else escapedValue = true;
      }
    }
    if (end === start) {
      start = end + 1; // empty piece: 'a=1&&b=2', a trailing '&'
      continue;
    }
    if (eq === -1) eq = end;
    let slot: Slot | undefined;
    let name: string;
    if (escapedName) {
      // A malformed name may be a mangled known parameter, so it is a 400 (named as sent), not ignored.
      const rawName = query.slice(start, eq);
      name = decode(rawName, rawName, `name ${ENCODING_RULE}`);
      slot = c.slots.get(name);
    } else {
      // Matched where it stands: no string made (nor hashed) per parameter, known or not.
      slot = slotAt(c.slotList, query, start, eq);
      name = slot === undefined ? '' : slot.name;
    }
    if (slot !== undefined) {
      if ((seen & slot.bit) !== 0) throw new ParameterError(name, REPEAT_RULE);
      seen |= slot.bit;
      const from = eq < end ? eq + 1 : end;
      // Numbers, sort names and known filter keys are read where they stand when nothing in them is escaped.
      const plain = !escapedValue;
      if (plain && (slot.type === 'page' || slot.type === 'limit') && end - from <= 15 && isDigits(query, from, end)) {
        const n = digitsAt(query, from, end);
        if (n < 1) throw new ParameterError(name, slot.type === 'page' ? PAGE_RULE : LIMIT_RULE);
        if (slot.type === 'page') page = n;
        else limit = n > MAX_LIMIT ? MAX_LIMIT : n; // clamped, not rejected (CONTRACT 3)
        start = end + 1;
        continue;
      }
      if (plain && slot.type === 'sort') {
        const known = sortAt(c.sortList, query, from, end);
        if (known === undefined) throw new ParameterError(name, c.sortRule);
        sort = known;
        start = end + 1;
        continue;
      }
      if (slot.type === 'filter') {
        let known = plain ? slot.known.find(query, from, end) : slot.known.findEscaped(query, from, end);
        let key: string;
        if (known !== undefined) key = known.key;
        else {
          const raw = query.slice(from, end);
          const made = filterKey(slot.filter, plain ? raw : decode(raw, name, ENCODING_RULE));
          if (made === null) throw new ParameterError(name, slot.rule);
          key = made;
          known = slot.known.note(made);
        }
        if (keys === null && one === null && known !== undefined) {
          one = known;
          oneAt = slot.index;
        } else {
          keys ??= new Array<string | undefined>(c.filters.length);
          if (one !== null) {
            keys[oneAt] = one.key;
            one = null;
          }
          keys[slot.index] = key;
        }
        start = end + 1;
        continue;
      }
      const raw = query.slice(from, end);
      // Values are decoded only for known parameters: unknown ones are ignored whatever they hold.
      const value = plain ? raw : decode(raw, name, ENCODING_RULE);
      switch (slot.type) {
        case 'page': {
          if (!isDigits(value, 0, value.length)) throw new ParameterError(name, PAGE_RULE);
          const p = Number(value); // leading zeros are fine; huge strings become huge or Infinity
          if (p < 1) throw new ParameterError(name, PAGE_RULE);
          if (p > Number.MAX_SAFE_INTEGER) throw new ParameterError(name, PAGE_MAX_RULE);
          page = p;
          break;
        }
        case 'limit': {
          if (!isDigits(value, 0, value.length)) throw new ParameterError(name, LIMIT_RULE);
          const l = Number(value);
          if (l < 1) throw new ParameterError(name, LIMIT_RULE);
          limit = l > MAX_LIMIT ? MAX_LIMIT : l; // clamped, not rejected (CONTRACT 3)
          break;
        }
        case 'sort': {
          // The definition's own string: later compares with the sort names find it by identity.
          const known = sortAt(c.sortList, value, 0, value.length);
          if (known === undefined) throw new ParameterError(name, c.sortRule);
          sort = known;
          break;
        }
        case 'search': {
          const trimmed = value.trim();
          if (charCount(trimmed, MAX_SEARCH_LENGTH) > MAX_SEARCH_LENGTH) throw new ParameterError(name, SEARCH_RULE);
          search = trimmed === '' ? null : fold(trimmed);
          break;
        }
        default: {
          if (!isDecimal(value) || compareDecimal(value, slot.bounds.lowest) < 0 || compareDecimal(value, slot.bounds.highest) > 0) {
            throw new ParameterError(name, slot.rule);
          }
          range = slot.range;
          if (slot.type === 'min') min = value;
          else max = value;
        }
      }
    }
    start = end + 1;
  }

  let rangePlan: QueryPlan['range'] = null;
  if (range !== null) {
    if (min !== null && max !== null && compareDecimal(min, max) > 0) {
      throw new ParameterError(range.minParam, `must not be greater than ${range.maxParam}`);
    }
    rangePlan = { param: range.minParam, min: min === null ? range.lowest : Number(min), max: max === null ? range.highest : Number(max) };
  }
  // One filter of a noted key: its plan's filters made once, with the key (most filter pages).
  const filters = one !== null ? one.alone : keys === null ? NO_FILTERS : orderedFilters(c, keys);
  return { page, limit, sort, search, filters, range: rangePlan };
}

/** The postings key of an equality filter, or null when the value breaks the filter's rule. */
function filterKey(filter: EqualityFilter, value: string): string | null {
  switch (filter.kind) {
    case 'text': {
      const key = fold(value.trim());
      return key === '' ? null : key; // '' also when the value was only combining marks
    }
    case 'slug':
      // The slug shape of CONTRACT 7, as the document states it: a name or a typo is a 400, not an empty page.
      return SLUG.test(value) ? value : null;
    case 'enum':
      return filter.values.includes(value) ? value : null;
    case 'boolean':
      return value === 'true' || value === 'false' ? value : null;
  }
}

/** Filters in definition order, not query order, so equal queries give equal plans. */
function orderedFilters(c: Compiled, keys: readonly (string | undefined)[]): QueryPlan['filters'] {
  const out: { param: string; key: string }[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key !== undefined) out.push({ param: c.filters[i]!.param, key });
  }
  return out;
}
