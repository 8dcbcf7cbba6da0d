// parseListQuery against a plain reading of CONTRACT 3 on generated queries: the parser matches names,
// numbers, sort names and filter keys met before in place (known-keys.ts), and every one of those
// shortcuts must give the plan, or the 400 (parameter and message), that the general path gives.
// The reference below is that general path written out plainly: split on '&', the name before the
// first '=', '+' as a space then percent-decoding, each rule on the decoded value.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fold } from '../../src/data/fold.ts';
import { ParameterError } from '../../src/errors.ts';
import { parseListQuery } from '../../src/query/parse.ts';
import type { QueryPlan } from '../../src/query/plan.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';
import type { ResourceDefinition } from '../../src/resources/types.ts';

const ENC = 'must be valid percent-encoded UTF-8';

class Rejected {
  constructor(
    readonly param: string,
    readonly message: string,
  ) {}
}
const reject = (param: string, rule: string): never => {
  throw new Rejected(param, `Invalid parameter '${param}': ${rule}`);
};

function decode(text: string, param: string, rule: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return reject(param, rule);
  }
}

const DIGITS = /^[0-9]+$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** A decimal text as [integer digits without leading zeros, fraction without trailing zeros]. */
function parts(text: string): [string, string] {
  const [int, frac = ''] = text.split('.');
  return [int!.replace(/^0+/, ''), frac.replace(/0+$/, '')];
}
function cmp(a: string, b: string): number {
  const [ai, af] = parts(a);
  const [bi, bf] = parts(b);
  if (ai.length !== bi.length) return ai.length - bi.length;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const width = Math.max(af.length, bf.length);
  const x = af.padEnd(width, '0');
  const y = bf.padEnd(width, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}

/** The general path: CONTRACT 3 read plainly. Throws a Rejected for a 400. */
function reference(def: ResourceDefinition, query: string): QueryPlan {
  const sorts = def.sorts.map((s) => s.name);
  const seen = new Set<string>();
  let page = 1;
  let limit = 20;
  let sort = sorts[0]!;
  let search: string | null = null;
  const keys = new Map<string, string>();
  let min: string | null = null;
  let max: string | null = null;
  let range: Extract<ResourceDefinition['filters'][number], { kind: 'range' }> | null = null;
  for (const piece of query.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const rawName = eq === -1 ? piece : piece.slice(0, eq);
    const name = decode(rawName, rawName, `name ${ENC}`);
    const filter = def.filters.find((f) => (f.kind === 'range' ? f.minParam === name || f.maxParam === name : f.param === name));
    if (!['page', 'limit', 'sort', 'search'].includes(name) && filter === undefined) continue;
    if (seen.has(name)) reject(name, 'must not be given more than once');
    seen.add(name);
    const value = decode(eq === -1 ? '' : piece.slice(eq + 1), name, ENC);
    if (name === 'page' || name === 'limit') {
      const rule = name === 'page' ? 'must be an integer >= 1' : 'must be an integer >= 1 (values above 50 count as 50)';
      if (!DIGITS.test(value) || Number(value) < 1) reject(name, rule);
      if (name === 'page' && Number(value) > Number.MAX_SAFE_INTEGER) reject(name, `must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`);
      if (name === 'page') page = Number(value);
      else limit = Math.min(50, Number(value));
    } else if (name === 'sort') {
      if (!sorts.includes(value)) reject(name, `must be one of: ${sorts.join(', ')}`);
      sort = value;
    } else if (name === 'search') {
      const trimmed = value.trim();
      if ([...trimmed].length > 200) reject(name, 'must be at most 200 characters');
      search = trimmed === '' ? null : fold(trimmed);
    } else if (filter!.kind === 'range') {
      const f = filter!;
      const rule = `must be a number from ${f.lowest} to ${f.highest}, written as digits with an optional fraction`;
      if (!DECIMAL.test(value) || cmp(value, String(f.lowest)) < 0 || cmp(value, String(f.highest)) > 0) reject(name, rule);
      range = f;
      if (name === f.minParam) min = value;
      else max = value;
    } else {
      const f = filter!;
      let key: string | null;
      if (f.kind === 'text') key = fold(value.trim()) || null;
      else if (f.kind === 'slug') key = SLUG.test(value) ? value : null;
      else if (f.kind === 'enum') key = f.values.includes(value) ? value : null;
      else key = value === 'true' || value === 'false' ? value : null;
      if (key === null) {
        reject(
          name,
          f.kind === 'enum'
            ? `must be one of: ${f.values.join(', ')}`
            : f.kind === 'boolean'
              ? 'must be true or false'
              : f.kind === 'slug'
                ? 'must be a slug: lower-case letters and digits separated by single hyphens'
                : 'must not be empty',
        );
      }
      keys.set(name, key!);
    }
  }
  let rangePlan: QueryPlan['range'] = null;
  if (range !== null) {
    if (min !== null && max !== null && cmp(min, max) > 0) reject(range.minParam, `must not be greater than ${range.maxParam}`);
    rangePlan = { param: range.minParam, min: min === null ? range.lowest : Number(min), max: max === null ? range.highest : Number(max) };
  }
  const filters = def.filters.flatMap((f) => (f.kind !== 'range' && keys.has(f.param) ? [{ param: f.param, key: keys.get(f.param)! }] : []));
  return { page, limit, sort, search, filters, range: rangePlan };
}

/** A small seeded generator (mulberry32), so a failure is the same query on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values that sit on an edge of some rule, encoded or not. */
const EDGE_VALUES = [
  '', ' ', '%20', '+', '++', '%2B', 'a%2Bb', 'a+b', '%00', 'a%00', '%C0%AF', '%C0%80', '%E2%82', '%E2%82%AC', '%ED%A0%80', '%F0%9F%98%80',
  '%', '%Z', '%ZZ', '%2', '%%', '%25', 'é', 'CAFÉ', 'Caf%C3%A9', 'Cafe%CC%81', 'K', 'İ', 'ß', '\u212a', 'ﬁ',
  'Korean', 'KOREAN', 'korean', 'South%20Korean', 'South+Korean', 'south korean', 'South%20korean%20', '+South+Korean+', 'south%2Bkorean',
  'Sci-Fi', 'sci-fi', 'Red+Carpet', 'red%20carpet', 'Actor', 'actor', 'actor ', 'Actor%09', '%09actor',
  'zoe-martin', 'Zoe-Martin', 'zoe--martin', 'zoe%2Dmartin', '-zoe', 'zoe-', 'zoe_martin', 'zendaya', 'ZENDAYA',
  'true', 'false', 'True', 'FALSE', 'true%20', 't%72ue', '1', '0',
  'upcoming', 'released', 'in-production', 'Released', 'in%2Dproduction',
  '1', '2', '007', '0', '00', '-1', '1.5', '50', '51', '999999999999999', '9999999999999999', '9007199254740991', '9007199254740992', '1e3', '%31', '+1',
  '7.5', '10', '10.0', '10.000000000000000001', '0.25', '.5', '5.', '9.99999999999999999',
  'latest', 'oldest', 'popular', 'name_asc', 'title_asc', 'rating_high', 'release_desc', 'LATEST', 'latest+', 'l%61test',
  '=', 'a=b', '==', '?', '#', '/',
  'a'.repeat(63), 'A'.repeat(64), 'a'.repeat(65), 'ab'.repeat(33), 'b'.repeat(200), 'b'.repeat(201), `${'c'.repeat(199)}%C3%A9`, '%C3%A9'.repeat(201),
];

const ALPHABET = 'aAbBzZ09-_.~ %+=é!$\'()*,;:@/?';

function generator(def: ResourceDefinition, rnd: () => number): () => string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const known = ['page', 'limit', 'sort', 'search', ...def.filters.flatMap((f) => (f.kind === 'range' ? [f.minParam, f.maxParam] : [f.param]))];
  const names = [
    ...known,
    ...known.flatMap((k) => [
      k.toUpperCase(), k[0]!.toUpperCase() + k.slice(1), k.slice(0, -1), k.slice(1), `${k}x`, `${k}%20`, `+${k}`,
      `%${k.charCodeAt(0).toString(16)}${k.slice(1)}`, `${k.slice(0, -1)}%${k.charCodeAt(k.length - 1).toString(16).toUpperCase()}`,
    ]),
    '', 'foo', '%', '%E0%A4%A', '%ZZ', '+', 'a+b', '%00', 'é',
  ];
  const values = [
    ...EDGE_VALUES,
    ...def.sorts.map((s) => s.name),
    ...def.filters.flatMap((f) => (f.kind === 'enum' ? f.values : [])),
  ];
  const randomText = (): string => {
    let s = '';
    for (let n = Math.floor(rnd() * 10); n > 0; n--) s += pick([...ALPHABET]);
    return s;
  };
  const piece = (): string => {
    const r = rnd();
    if (r < 0.05) return '';
    const name = rnd() < 0.95 ? pick(names) : randomText();
    if (r < 0.12) return name; // no '='
    const value = rnd() < 0.8 ? pick(values) : randomText();
    return `${name}=${value}`;
  };
  return () => {
    const pieces: string[] = [];
    for (let n = Math.floor(rnd() * 5); n >= 0; n--) pieces.push(piece());
    const q = pieces.join(rnd() < 0.9 ? '&' : '&&');
    return rnd() < 0.05 ? `&${q}&` : q;
  };
}

type Result = { plan: QueryPlan } | { param: string; message: string; code: string };

function run(f: () => QueryPlan): Result {
  try {
    const plan = f();
    return { plan: { ...plan, filters: plan.filters.map((x) => ({ ...x })) } };
  } catch (err) {
    if (err instanceof Rejected) return { param: err.param, message: err.message, code: 'INVALID_PARAMETER' };
    if (err instanceof ParameterError) return { param: err.param, message: err.message, code: err.code };
    throw err;
  }
}

const TARGET = '/api/v1/list?';

describe('parseListQuery gives what the general path gives, on generated queries', () => {
  for (const def of RESOURCE_LIST) {
    test(`${def.name}: 4,000 queries, each parsed alone, again (its keys noted) and within a target`, () => {
      const next = generator(def, random(0x5eed + def.name.length * 7919 + def.name.charCodeAt(0)));
      let failures = 0;
      let rejected = 0;
      for (let i = 0; i < 4000; i++) {
        const query = next();
        const expected = run(() => reference(def, query));
        if (!('plan' in expected)) rejected++;
        const results = [
          run(() => parseListQuery(def, query)),
          run(() => parseListQuery(def, query)),
          run(() => parseListQuery(def, TARGET + query, TARGET.length)),
        ];
        for (const got of results) {
          if (failures < 5) {
            try {
              assert.deepEqual(got, expected, `query ${JSON.stringify(query)}`);
            } catch (err) {
              failures++;
              console.error(String((err as Error).message).slice(0, 2000));
            }
          }
        }
      }
      assert.equal(failures, 0);
      // The generator reaches both answers: a bias to one would leave the other untested.
      assert.ok(rejected > 400 && rejected < 3600, `${rejected} of 4,000 rejected`);
    });
  }

  test('the values of EDGE_VALUES, one filter alone, twice each, for every filter and parameter', () => {
    for (const def of RESOURCE_LIST) {
      const params = ['page', 'limit', 'sort', 'search', ...def.filters.flatMap((f) => (f.kind === 'range' ? [f.minParam, f.maxParam] : [f.param]))];
      for (const param of params) {
        for (const value of [...EDGE_VALUES, ...def.sorts.map((s) => s.name)]) {
          for (const query of [`${param}=${value}`, `${param}=${value}&page=2`, `limit=3&${param}=${value}`]) {
            const expected = run(() => reference(def, query));
            for (let k = 0; k < 2; k++) assert.deepEqual(run(() => parseListQuery(def, query)), expected, `${def.name} ${query}`);
          }
        }
      }
    }
  });
});
