// fastCheck (src/data/validate-fast.ts) against checkObject (src/data/validate.ts): for records of the
// bundled data and every one-field change of them (each field and array item, nested ones too, set to
// values of each kind, removed, or joined by an unknown field), the fast check passes exactly the
// records checkObject finds no problem in, with the same references in the same order and the same
// timestamps rewritten.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RESOURCE_LIST } from '../../src/resources/index.ts';
import { checkObject, isDate, type Findings, type RefSite } from '../../src/data/validate.ts';
import { fastCheck } from '../../src/data/validate-fast.ts';

type Json = unknown;

/** A deep copy that keeps every own field as a field, `__proto__` included (as JSON.parse makes it). */
function clone(v: Json): Json {
  if (Array.isArray(v)) return v.map(clone);
  if (v === null || typeof v !== 'object') return v;
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(v)) Object.defineProperty(o, k, { value: clone((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
  return o;
}

/** Values of every kind the schemas tell apart, at and around their bounds and formats. */
const VALUES: Json[] = [
  null, undefined, 0, -1, 1, 1.5, 10, 10.5, 11, 100, 101, 2 ** 60, Number.NaN, Infinity, true, false, '', 'x', 'Not A Slug', 'a-b-1',
  'released', 'Released', 'https://ok.example/a/b.jpg', 'https://xn--bcher-kva.example/', 'http://10.0.0.1/x', 'https://ok.example/a?b=c d',
  'ftp://x.example/', '2026-11-22', '2026-02-30', '2026-11-22T10:54:22.000Z', '2026-11-22T10:54:22Z', '2026-11-22T10:54:22.5Z',
  '2026-13-22T10:54:22.000Z', [], [null], ['x'], [1], {}, { a: 'https://ok.example/' }, { a: 1 }, { a: null },
];

/** Every change of one place in `record`: a copy per change. */
function* changes(record: Json): Generator<[string, Json]> {
  const places: (string | number)[][] = [];
  const walk = (v: Json, at: (string | number)[]) => {
    if (at.length > 0) places.push(at);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, i]));
    else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k], [...at, k]);
  };
  walk(record, []);
  const holderAt = (root: Json, at: (string | number)[]) => at.slice(0, -1).reduce((h: any, k) => h[k], root) as Record<string | number, unknown>;
  for (const at of places) {
    const key = at[at.length - 1]!;
    for (const value of VALUES) {
      const copy = clone(record);
      holderAt(copy, at)[key] = value;
      yield [`${at.join('.')} = ${JSON.stringify(value)}`, copy];
    }
    const removed = clone(record);
    const holder = holderAt(removed, at);
    if (Array.isArray(holder)) holder.splice(key as number, 1);
    else delete holder[key];
    yield [`${at.join('.')} removed`, removed];
  }
  // An unknown field, and the fields JSON.parse makes own ones that an object's prototype also has, on each object.
  for (const at of [[], ...places]) {
    for (const name of ['zz', '__proto__', 'constructor', 'toString']) {
      const copy = clone(record);
      const target = at.length === 0 ? copy : holderAt(copy, at)[at[at.length - 1]!];
      if (target === null || typeof target !== 'object' || Array.isArray(target)) continue;
      Object.defineProperty(target, name, { value: 'x', enumerable: true, writable: true, configurable: true });
      yield [`${at.join('.')}.${name} added`, copy];
    }
  }
}

for (const def of RESOURCE_LIST) {
  test(`${def.name}: the fast check passes exactly what checkObject passes, with its references and timestamps`, () => {
    const check = fastCheck(def.source);
    assert.ok(check, 'the schema compiles');
    const records = JSON.parse(readFileSync(new URL(`../../data/${def.file}`, import.meta.url), 'utf8')) as Json[];
    let passed = 0;
    let failed = 0;
    for (const record of [...records.slice(0, 3), records[records.length - 1]]) {
      for (const [what, changed] of [['as it is', record] as [string, Json], ...changes(record)]) {
        const fast = clone(changed) as Record<string, unknown>;
        const slow = clone(changed) as Record<string, unknown>;
        const refs: RefSite[] = [];
        const ok = check(fast, refs);
        const found: Findings = { problems: [], refs: [] };
        checkObject(def.source, slow, '', found);
        assert.equal(ok, found.problems.length === 0, `${what}: ${JSON.stringify(found.problems)}`);
        if (ok) {
          assert.deepEqual(refs, found.refs, what);
          assert.deepEqual(fast, slow, what);
          passed++;
        } else failed++;
      }
    }
    // The changes reach both sides of the check.
    assert.ok(passed > 10 && failed > 10, `${passed} passed, ${failed} failed`);
  });
}

test('a timestamp not in toISOString form -> rewritten in it, as checkObject does', () => {
  const def = RESOURCE_LIST.find((d) => d.name === 'movies')!;
  const record = { _id: 'm', title: 'T', slug: 't', status: 'released', releaseDate: '2026-11-22T10:54:22Z', createdAt: '2026-11-22T10:54:22.5Z', cast: [{ celebrity: 'a-b' }, { name: 'N' }, { celebrity: 'c' }] };
  const refs: RefSite[] = [];
  assert.equal(fastCheck(def.source)!(record, refs), true);
  assert.equal(record.releaseDate, '2026-11-22T10:54:22.000Z');
  assert.equal(record.createdAt, '2026-11-22T10:54:22.500Z');
  assert.deepEqual(
    refs.map((r) => [r.collection, r.slug, r.field, r.holder]),
    [
      ['celebrities', 'a-b', 'cast[0].celebrity', record.cast[0]],
      ['celebrities', 'c', 'cast[2].celebrity', record.cast[2]],
    ],
  );
});

test('isDate -> what the regex and a Date say, for every month 00-13 and day 00-32 of years around the edges', () => {
  const byRegex = (value: string) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    const d = m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!)) : null;
    return !(!m || !d || d.getUTCMonth() !== +m[2]! - 1 || d.getUTCDate() !== +m[3]!);
  };
  const two = (n: number) => String(n).padStart(2, '0');
  const values = ['', '2026-1a-01', '2026-01-0a', '202a-01-01', ' 2026-01-01', '2026-01-01 ', '2026/01/01', '2026-001-01', '+02026-01-01', '2026-01-01T00:00:00.000Z', '2026-0:-01', '2026-1/-01'];
  for (const year of ['0000', '0050', '0099', '0100', '1900', '2000', '2024', '2026', '9999'])
    for (let month = 0; month <= 13; month++) for (let day = 0; day <= 32; day++) values.push(`${year}-${two(month)}-${two(day)}`);
  for (const v of values) assert.equal(isDate(v), byRegex(v), v);
});
