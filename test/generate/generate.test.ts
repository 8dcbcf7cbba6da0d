// Tests for src/generate/generate.ts: sizes, determinism, schema validity, references, coverage and the streamed files.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { collectionSizes, generateRecords, type DataRecord } from '../../src/generate/generate.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import * as V from '../../src/generate/vocabulary.ts';
import { RESOURCES } from '../../src/resources/index.ts';
import type { Schema } from '../../src/resources/schema.ts';
import { COLLECTIONS, type CollectionName } from '../../src/resources/types.ts';

type Dataset = Record<CollectionName, DataRecord[]>;
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const NOW = Date.parse('2026-11-01T00:00:00.000Z');

/** Every problem of a value against a source schema, as "path: reason" (references checked against `slugs`). */
function check(value: unknown, schema: Schema, path: string, slugs: Record<string, Set<string>>, out: string[]): void {
  const bad = (why: string) => out.push(`${path}: ${why} (${JSON.stringify(value)?.slice(0, 60)})`);
  switch (schema.type) {
    case 'string': {
      if (typeof value !== 'string') return void bad('not a string');
      if (schema.enum && !schema.enum.includes(value)) bad('not in enum');
      if (schema.format === 'slug' && !SLUG.test(value)) bad('bad slug');
      if (schema.format === 'url' && !/^https?:\/\/[^\s/]+\.[^\s/]+\/\S*$/.test(value)) bad('bad url');
      if (schema.format === 'date' && !(/^\d{4}-\d{2}-\d{2}$/.test(value) && new Date(`${value}T00:00:00.000Z`).toISOString().startsWith(value))) bad('bad date');
      if (schema.format === 'timestamp' && !(Number.isFinite(Date.parse(value)) && new Date(value).toISOString() === value)) bad('bad timestamp');
      if (schema.ref && !slugs[schema.ref]!.has(value)) bad(`unresolved ${schema.ref} reference`);
      return;
    }
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value) || (schema.type === 'integer' && !Number.isInteger(value))) return void bad(`not ${schema.type}`);
      if ((schema.min !== undefined && value < schema.min) || (schema.max !== undefined && value > schema.max)) bad('out of range');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') bad('not boolean');
      return;
    case 'array':
      if (!Array.isArray(value)) return void bad('not an array');
      value.forEach((v, i) => check(v, schema.items, `${path}[${i}]`, slugs, out));
      return;
    case 'map':
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return void bad('not an object');
      const rec = value as Record<string, unknown>;
      if (schema.type === 'map') return void Object.entries(rec).forEach(([k, v]) => check(v, schema.values, `${path}.${k}`, slugs, out));
      for (const k of schema.required ?? []) if (rec[k] === undefined || rec[k] === null) out.push(`${path}.${k}: required`);
      if (schema.oneOf && !schema.oneOf.some((k) => rec[k] !== undefined && rec[k] !== null)) bad(`needs one of ${schema.oneOf}`);
      for (const [k, v] of Object.entries(rec)) {
        const s = schema.properties[k];
        if (!s) out.push(`${path}.${k}: unknown field`);
        else if (v !== null) check(v, s, `${path}.${k}`, slugs, out);
      }
    }
  }
}

function problems(data: Dataset): string[] {
  const out: string[] = [];
  const slugs = Object.fromEntries(COLLECTIONS.map((c) => [c, new Set(data[c].map((r) => r.slug as string))]));
  for (const c of COLLECTIONS) {
    const ids = new Set(data[c].map((r) => r._id));
    if (ids.size !== data[c].length) out.push(`${c}: duplicate _id`);
    if (slugs[c]!.size !== data[c].length) out.push(`${c}: duplicate slug`);
    data[c].forEach((r, i) => check(r, RESOURCES[c].source, `${c}[${i}]`, slugs, out));
  }
  return out;
}

/** Facts the schema cannot say: time order, status against the reference instant, coverage of every celebrity. */
function inconsistencies(data: Dataset): string[] {
  const out: string[] = [];
  const movies = new Map(data.movies.map((m) => [m.slug as string, m]));
  for (const m of data.movies) {
    const future = Date.parse(m.releaseDate as string) > NOW;
    if (future !== (m.status !== 'released')) out.push(`movie ${m.slug}: status ${m.status} vs release ${m.releaseDate}`);
    const stars = (m.cast as DataRecord[]).flatMap((c) => (c.celebrity ? [c.celebrity] : []));
    if (new Set(stars).size !== stars.length) out.push(`movie ${m.slug}: a celebrity cast twice`);
  }
  for (const r of data.reviews) {
    const m = movies.get(r.movie as string)!;
    if (m.status === 'released' && r.publishDate! <= m.releaseDate!) out.push(`review ${r.slug}: published before release`);
  }
  for (const n of data.news) if (n.createdAt! > n.publishDate!) out.push(`news ${n.slug}: created after publication`);
  for (const c of ['outfits', 'news'] as const) {
    const covered = new Set(data[c].map((r) => r.celebrity));
    for (const celeb of data.celebrities) if (!covered.has(celeb.slug)) out.push(`${celeb.slug} has no ${c}`);
  }
  return out;
}

const tally = (values: unknown[]) => values.reduce<Map<unknown, number>>((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map());

/** Every filter value of SPEC 4.2 fills at least three pages of five, so paging can be tried on each. */
function thinFilters(data: Dataset): string[] {
  const cases: [string, unknown[], readonly unknown[]][] = [
    ['occupation', data.celebrities.flatMap((c) => c.occupation as string[]), V.OCCUPATIONS],
    ['nationality', data.celebrities.map((c) => c.nationality), V.REGIONS.map((r) => r.nationality)],
    ['outfit category', data.outfits.map((o) => o.category), V.OUTFIT_CATEGORIES],
    ['brand', data.outfits.map((o) => o.brand), V.BRANDS.map((b) => b[0])],
    ['news category', data.news.map((n) => n.category), V.NEWS_CATEGORIES],
    ['news featured', data.news.map((n) => n.featured), [true, false]],
    ['genre', data.movies.flatMap((m) => m.genre as string[]), V.GENRES],
    ['status', data.movies.map((m) => m.status), ['released', 'upcoming', 'in-production']],
    ['movie featured', data.movies.map((m) => m.featured), [true, false]],
    ['review featured', data.reviews.map((r) => r.featured), [true, false]],
  ];
  return cases.flatMap(([what, values, expected]) => {
    const counts = tally(values);
    return expected.filter((v) => (counts.get(v) ?? 0) < 11).map((v) => `${what} ${String(v)}: ${counts.get(v) ?? 0} records`);
  });
}

describe('collectionSizes', () => {
  const table: [number, Record<CollectionName, number>][] = [
    [1, { celebrities: 1, outfits: 3, news: 2, movies: 1, reviews: 2 }],
    [150, { celebrities: 150, outfits: 405, news: 300, movies: 120, reviews: 201 }],
    [100000, { celebrities: 100000, outfits: 270000, news: 200000, movies: 80000, reviews: 134000 }],
  ];
  for (const [scale, sizes] of table) it(`${scale} -> ${Object.values(sizes).join('/')}`, () => assert.deepEqual(collectionSizes(scale), sizes));
  for (const scale of [0, -3, 1.5, Number.NaN]) it(`${scale} -> RangeError`, () => assert.throws(() => collectionSizes(scale), RangeError));
});

describe('generateRecords', () => {
  const bundled = generateRecords({ scale: 150, seed: 'celebrity-api' });

  for (const scale of [1, 2, 7, 150]) {
    it(`scale ${scale}: counts match, every record valid and consistent`, () => {
      const data = scale === 150 ? bundled : generateRecords({ scale, seed: `s${scale}` });
      assert.deepEqual(Object.fromEntries(COLLECTIONS.map((c) => [c, data[c].length])), collectionSizes(scale));
      assert.deepEqual(problems(data), []);
      assert.deepEqual(inconsistencies(data), []);
    });
  }

  it('same seed -> identical output; other seed -> different output; default seed is celebrity-api', () => {
    const [again, byDefault, other] = [generateRecords({ scale: 150, seed: 'celebrity-api' }), generateRecords({ scale: 150 }), generateRecords({ scale: 150, seed: 42 })];
    // assert.ok rather than equal: a failure should name the collection, not print a megabyte of diff.
    for (const c of COLLECTIONS) {
      const text = JSON.stringify(bundled[c]);
      assert.ok(JSON.stringify(again[c]) === text, `${c} differs on a second run`);
      assert.ok(JSON.stringify(byDefault[c]) === text, `${c} differs with the default seed`);
      assert.ok(JSON.stringify(other[c]) !== text, `${c} is the same for another seed`);
    }
  });

  it('the bundled scale pages through every filter value', () => assert.deepEqual(thinFilters(bundled), []));

  it('optional fields are sometimes null or absent, never the required ones', () => {
    for (const c of COLLECTIONS) {
      const { properties, required = [] } = RESOURCES[c].source;
      const optional = Object.keys(properties).filter((k) => !required.includes(k));
      // A gap may sit inside an object (a critic without a bio): the JSON then holds a null.
      const gaps = bundled[c].filter((r) => optional.some((k) => r[k] === null || r[k] === undefined) || JSON.stringify(r).includes(':null'));
      assert.ok(gaps.length > 0 && gaps.length < bundled[c].length / 2, `${c}: ${gaps.length} records with gaps`);
    }
  });

  it('accented names are a good share of the celebrities', () => {
    const accented = bundled.celebrities.filter((c) => (c.name as string) !== (c.name as string).normalize('NFKD').replace(/\p{M}/gu, ''));
    assert.ok(accented.length >= 30, `${accented.length} accented names`);
  });
});

describe('writeDataset', () => {
  it('compact files: one record per line, equal to generateRecords, across several 1 MB chunks', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gen-'));
    try {
      const counts = await writeDataset(join(dir, 'nested'), { scale: 1200, seed: 'chunks' });
      const expected = generateRecords({ scale: 1200, seed: 'chunks' });
      assert.deepEqual(counts, collectionSizes(1200));
      for (const c of COLLECTIONS) {
        const text = await readFile(join(dir, 'nested', `${c}.json`), 'utf8');
        assert.equal(text, `[\n${expected[c].map((r) => JSON.stringify(r)).join(',\n')}\n]\n`, c);
      }
      const outfits = await readFile(join(dir, 'nested', 'outfits.json'));
      assert.ok(outfits.length > 1 << 20, 'outfits spans more than one chunk');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('pretty files are JSON.stringify(array, null, 2) and identical across runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gen-'));
    try {
      await writeDataset(join(dir, 'a'), { scale: 12, pretty: true });
      await writeDataset(join(dir, 'b'), { scale: 12, pretty: true });
      const expected = generateRecords({ scale: 12 });
      for (const c of COLLECTIONS) {
        const a = await readFile(join(dir, 'a', `${c}.json`), 'utf8');
        assert.equal(a, `${JSON.stringify(expected[c], null, 2)}\n`, c);
        assert.equal(await readFile(join(dir, 'b', `${c}.json`), 'utf8'), a, c);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('bundled data/*.json', () => {
  it('is valid, consistent and pages through every filter value', async () => {
    const root = new URL('../../data/', import.meta.url);
    const data = Object.fromEntries(
      await Promise.all(COLLECTIONS.map(async (c) => [c, JSON.parse(await readFile(new URL(`${c}.json`, root), 'utf8'))])),
    ) as Dataset;
    assert.deepEqual(problems(data), []);
    assert.deepEqual(inconsistencies(data), []);
    assert.deepEqual(thinFilters(data), []);
  });
});
