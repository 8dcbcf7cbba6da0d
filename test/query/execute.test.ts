// The indexed engine against the brute-force oracle, on generated data, for random queries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fold } from '../../src/data/fold.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { loadLinked } from '../../src/data/load.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { executeQuery } from '../../src/query/execute.ts';
import { parseListQuery } from '../../src/query/parse.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';
import type { LinkedRecord, ResourceDefinition } from '../../src/resources/types.ts';
import { stillHeld } from '../helpers/collected.ts';
import { bruteForce, type OracleQuery } from '../helpers/oracle.ts';

/** A small seeded PRNG so a failure can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Search terms that exercise every path of the n-gram index: 1 unit (scan), 2 (bigram), 3 (one
 * trigram), longer (trigram intersection + confirm), whole texts, slices across a word boundary,
 * accents and case changed or stripped, and terms absent from the data.
 */
function randomSearch(text: string, rand: () => number): string {
  const mode = Math.floor(rand() * 8);
  const start = Math.floor(rand() * text.length);
  switch (mode) {
    case 0:
      return text.slice(start, start + 1);
    case 1:
      return text.slice(start, start + 2);
    case 2:
      return text.slice(start, start + 3);
    case 3:
      return text; // the whole text, long
    case 4: {
      const space = text.indexOf(' ', 1);
      return space === -1 ? text : text.slice(Math.max(0, space - 2), space + 3); // across a word boundary
    }
    case 5:
      return text.slice(start, start + 4 + Math.floor(rand() * 8)).toUpperCase();
    case 6:
      return text.normalize('NFKD').replace(/\p{M}/gu, '').slice(start, start + 2 + Math.floor(rand() * 6)); // accents stripped
    default:
      return rand() < 0.5 ? 'zqxj' : `${text.slice(start, start + 3)}qq`; // absent from the data
  }
}

function randomQuery(def: ResourceDefinition, records: readonly LinkedRecord[], rand: () => number): OracleQuery {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const filters: Record<string, string> = {};
  for (const f of def.filters) {
    if (rand() < 0.6) continue;
    if (f.kind === 'range') {
      const a = Math.round(rand() * 100) / 10;
      const b = Math.round(rand() * 100) / 10;
      if (rand() < 0.5) filters[f.minParam] = String(Math.min(a, b));
      if (rand() < 0.7) filters[f.maxParam] = String(Math.max(a, b));
      continue;
    }
    if (f.kind === 'boolean') filters[f.param] = rand() < 0.5 ? 'true' : 'false';
    else if (f.kind === 'enum') filters[f.param] = pick(f.values);
    else {
      const v = f.get(pick(records));
      const value = Array.isArray(v) ? (v.length ? pick(v) : 'nothing') : (v ?? 'nothing');
      // Clients send any case; text filters ignore it.
      filters[f.param] = f.kind === 'text' && rand() < 0.3 ? String(value).toUpperCase() : String(value);
    }
  }
  let search: string | undefined;
  if (rand() < 0.5) search = randomSearch(def.searchText(pick(records)) ?? '', rand);
  const limit = 1 + Math.floor(rand() * 50);
  return { sort: pick(def.sorts).name, filters, limit, page: 1 + Math.floor(rand() * 4), ...(search ? { search } : {}) };
}

const toQueryString = (q: OracleQuery) =>
  new URLSearchParams({ ...q.filters, sort: q.sort!, limit: String(q.limit), page: String(q.page), ...(q.search ? { search: q.search } : {}) }).toString();

const SCALES = [
  { name: 'indexed engine agrees with brute force on 500 random queries per collection', scale: 120, seed: 'oracle', prngSeed: 42, queries: 500 },
  // At scale 120 every set is small enough for the plain sort; here sets reach thousands of ids.
  { name: 'indexed engine agrees with brute force at a scale where the order walk and bucket selection run', scale: 1500, seed: 'oracle-large', prngSeed: 7, queries: 120 },
];

for (const { name, scale, seed, prngSeed, queries } of SCALES) {
  test(name, async () => {
    const data = generateRecords({ scale, seed });
    const snapshot = await loadSnapshot(data);
    const linked = await loadLinked(data);
    const rand = prng(prngSeed);
    for (const def of RESOURCE_LIST) {
      const index = snapshot.collections[def.name];
      for (let i = 0; i < queries; i++) {
        const q = randomQuery(def, linked[def.name], rand);
        const qs = toQueryString(q);
        const got = executeQuery(index, parseListQuery(def, qs));
        const want = bruteForce(def, linked[def.name], q);
        assert.equal(got.total, want.total, `${def.name}?${qs}: total`);
        assert.deepEqual(Array.from(got.ids, (id) => linked[def.name][id]!.slug), want.page.map((r) => r.slug), `${def.name}?${qs}: page`);
        if (q.search !== undefined) {
          // Asked again, and a third time: from the search cache, then from its answer kept in this order.
          for (const time of ['again', 'a third time']) {
            const kept = executeQuery(index, parseListQuery(def, qs));
            assert.equal(kept.total, want.total, `${def.name}?${qs}: total ${time}`);
            assert.deepEqual(Array.from(kept.ids, (id) => linked[def.name][id]!.slug), want.page.map((r) => r.slug), `${def.name}?${qs}: page ${time}`);
          }
        }
      }
    }
  });
}

test('a search alone over text groups: pages of one group, of several (merged by rank, or selected when deep), asked three times, in every order', async () => {
  const data = generateRecords({ scale: 1500, seed: 'oracle-large' });
  const snapshot = await loadSnapshot(data);
  const linked = await loadLinked(data);
  const def = RESOURCE_LIST.find((d) => d.name === 'celebrities')!;
  const index = snapshot.collections.celebrities;
  const { starts } = index.search.groups;
  assert.ok(starts.length > 0, 'the celebrities of this data are grouped by name');
  const records = linked.celebrities;
  const texts = records.map((r) => fold(def.searchText(r)!));
  // A whole name many records share (one group), a first name (several groups) and a 3-unit slice
  // in many groups (a deep page of it is selected, not merged).
  const counts = new Map<string, number>();
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1);
  const whole = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  const groupsOf = (q: string) => new Set(texts.flatMap((t) => (t.includes(q) ? [t] : []))).size;
  const first = [...new Set(texts.map((t) => t.split(' ')[0]!))].find((w) => w.length > 3 && groupsOf(w) > 2)!;
  const common = [...new Set(texts.flatMap((t) => Array.from({ length: t.length - 2 }, (_, i) => t.slice(i, i + 3))))]
    .map((g) => [g, texts.filter((t) => t.includes(g)).length] as const)
    .sort((a, b) => b[1] - a[1])[0]![0];
  assert.ok(counts.get(whole)! > 1 && groupsOf(whole) === 1, `"${whole}": one group of ${counts.get(whole)}`);
  assert.ok(groupsOf(first) > 1, `"${first}": ${groupsOf(first)} groups`);
  assert.ok(groupsOf(common) > 64, `"${common}": ${groupsOf(common)} groups`);
  for (const search of [whole, first, common, whole.toUpperCase(), 'zqxj']) {
    for (const { name: sort } of def.sorts) {
      for (const [limit, pages] of [[1, [1, 2, 3]], [7, [1, 2, 5]], [50, [1, 2, 9, 30]]] as const) {
        for (const page of pages) {
          const q = { sort, filters: {}, limit, page, search };
          const qs = toQueryString(q);
          const want = bruteForce(def, records, q);
          for (const time of ['first', 'again', 'a third time']) {
            const got = executeQuery(index, parseListQuery(def, qs));
            assert.equal(got.total, want.total, `${qs}: total, ${time}`);
            assert.deepEqual(Array.from(got.ids, (id) => records[id]!.slug), want.page.map((r) => r.slug), `${qs}: page, ${time}`);
          }
        }
      }
    }
  }
});

test('a filter query holds nothing of its snapshot once answered: replaced data can be collected', async () => {
  const made = async () => {
    const data = generateRecords({ scale: 120, seed: 'let-go' });
    const index = (await loadSnapshot(data)).collections.celebrities;
    const def = RESOURCE_LIST.find((d) => d.name === 'celebrities')!;
    const nationality = String((data.celebrities[0] as { nationality: string }).nationality);
    const got = executeQuery(index, parseListQuery(def, `nationality=${encodeURIComponent(nationality)}&sort=name_asc`));
    assert.ok(got.total > 0, 'the filter found its posting');
    return [new WeakRef(index), ...index.postings.map((t) => new WeakRef(t))];
  };
  const refs = await made();
  assert.equal(await stillHeld(refs), 0, "the replaced snapshot's index and postings are gone");
});
