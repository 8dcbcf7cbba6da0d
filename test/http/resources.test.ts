// One black-box suite run once per collection over HTTP on the bundled data: shapes, pagination,
// every sort over all pages, every filter and search against the brute-force oracle, every bad parameter.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BUNDLED_DATA } from '../../src/config.ts';
import { loadLinked } from '../../src/data/load.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';
import type { LinkedRecord, ResourceDefinition } from '../../src/resources/types.ts';
import { bruteForce, type OracleQuery } from '../helpers/oracle.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let key: string;
let records: Record<string, readonly LinkedRecord[]>;

before(async () => {
  server = await startTestServer();
  key = await server.account('enterprise');
  records = await loadLinked(BUNDLED_DATA);
});
after(() => server.close());

const names = (fields: ResourceDefinition['listFields']) => fields.map((f) => (typeof f === 'string' ? f : f.name));
const get = (path: string) => server.request(path, { key });

/** Every page of a query at limit 50, concatenated. */
async function allPages(def: ResourceDefinition, query: string): Promise<{ slugs: string[]; total: number }> {
  const slugs: string[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const res = await get(`/api/v1/${def.name}?${query}&limit=50&page=${page}`);
    assert.equal(res.status, 200, res.text);
    total = res.body.pagination.total;
    slugs.push(...res.body.data.map((r: { slug: string }) => r.slug));
    if (page >= res.body.pagination.pages) return { slugs, total };
  }
}

/** `q` asked over HTTP; the oracle's answer to `expected` (default: the same query) is what it must return. */
async function checkAgainstOracle(def: ResourceDefinition, q: OracleQuery, expected: OracleQuery = q): Promise<void> {
  const params = new URLSearchParams({ ...q.filters, ...(q.search === undefined ? {} : { search: q.search }), ...(q.sort ? { sort: q.sort } : {}) });
  const got = await allPages(def, params.toString());
  const want = bruteForce(def, records[def.name]!, expected);
  assert.equal(got.total, want.total, `${def.name}?${params}: total`);
  assert.deepEqual(got.slugs, want.all.map((r) => r.slug), `${def.name}?${params}: records and order`);
}

for (const def of RESOURCE_LIST) {
  describe(`/api/v1/${def.name}`, () => {
    test('list: the envelope and the list shape, exactly', async () => {
      const res = await get(`/api/v1/${def.name}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(Object.keys(res.body), ['success', 'version', 'resource', 'pagination', 'data']);
      assert.deepEqual([res.body.success, res.body.version, res.body.resource], [true, 'v1', def.name]);
      const total = records[def.name]!.length;
      assert.deepEqual(res.body.pagination, { page: 1, limit: 20, total, pages: Math.ceil(total / 20) });
      assert.equal(res.body.data.length, 20);
      for (const item of res.body.data) assert.deepEqual(Object.keys(item), names(def.listFields));
    });

    test('detail: the detail shape exactly, for every record of the first page', async () => {
      const list = await get(`/api/v1/${def.name}?limit=50`);
      for (const { slug } of list.body.data) {
        const res = await get(`/api/v1/${def.name}/${slug}`);
        assert.equal(res.status, 200);
        assert.deepEqual(Object.keys(res.body), ['success', 'version', 'resource', 'data']);
        assert.deepEqual(Object.keys(res.body.data), names(def.detailFields));
        assert.equal(res.body.data.slug, slug);
      }
    });

    test('detail: an unknown slug -> 404 NOT_FOUND', async () => {
      for (const slug of ['no-such-record', '__proto__', 'constructor', 'Upper-Case']) {
        const res = await get(`/api/v1/${def.name}/${slug}`);
        assert.equal(res.status, 404, slug);
        assert.deepEqual(Object.keys(res.body), ['success', 'error', 'message']);
        assert.equal(res.body.error, 'NOT_FOUND');
      }
    });

    test('pagination: pages = ceil(total / limit), a page past the last is empty, limit above 50 is 50', async () => {
      const total = records[def.name]!.length;
      const seven = await get(`/api/v1/${def.name}?limit=7&page=3`);
      assert.deepEqual(seven.body.pagination, { page: 3, limit: 7, total, pages: Math.ceil(total / 7) });
      assert.equal(seven.body.data.length, 7);
      const last = Math.ceil(total / 7);
      const tail = await get(`/api/v1/${def.name}?limit=7&page=${last}`);
      assert.equal(tail.body.data.length, total - (last - 1) * 7);
      const past = await get(`/api/v1/${def.name}?limit=7&page=${last + 1}`);
      assert.equal(past.status, 200);
      assert.deepEqual(past.body.data, []);
      assert.deepEqual(past.body.pagination, { page: last + 1, limit: 7, total, pages: last });
      const big = await get(`/api/v1/${def.name}?limit=51`);
      assert.equal(big.body.pagination.limit, 50);
      assert.equal(big.body.data.length, Math.min(50, total));
    });

    for (const sort of def.sorts) {
      test(`sort=${sort.name}: every page in the oracle's order, no record repeated or skipped`, async () => {
        await checkAgainstOracle(def, { sort: sort.name });
      });
    }

    test('default sort is latest', async () => {
      // Named, not "the first of the definition": a reordered definition must not move the default.
      await checkAgainstOracle(def, {}, { sort: 'latest' });
    });

    for (const filter of def.filters) {
      const label = filter.kind === 'range' ? `${filter.minParam}/${filter.maxParam}` : filter.param;
      test(`filter ${label}: matches the oracle for values in the data, other cases and unknown values`, async () => {
        if (filter.kind === 'range') {
          for (const [min, max] of [['7', undefined], [undefined, '4.5'], ['5', '8'], ['6.5', '6.5'], ['0', '10']] as const) {
            await checkAgainstOracle(def, { filters: { ...(min ? { [filter.minParam]: min } : {}), ...(max ? { [filter.maxParam]: max } : {}) } });
          }
          return;
        }
        const values =
          filter.kind === 'boolean' ? ['true', 'false'] : filter.kind === 'enum' ? [...filter.values] : [...new Set(records[def.name]!.flatMap((r) => filter.get(r) ?? []))].slice(0, 6).map(String);
        assert.ok(values.length > 0);
        for (const value of values) {
          const res = await checkAgainstOracle(def, { filters: { [filter.param]: value } });
          void res;
        }
        if (filter.kind === 'text') {
          await checkAgainstOracle(def, { filters: { [filter.param]: values[0]!.toUpperCase() }, sort: def.sorts.at(-1)!.name });
          await checkAgainstOracle(def, { filters: { [filter.param]: 'no such value' } });
        }
        if (filter.kind === 'slug') await checkAgainstOracle(def, { filters: { [filter.param]: 'no-such-slug' } });
      });
    }

    test('two filters together and with search match the oracle', async () => {
      const [a, b] = def.filters;
      const sample = records[def.name]![3]!;
      const filters: Record<string, string> = {};
      for (const f of [a, b]) {
        if (!f) continue;
        if (f.kind === 'range') filters[f.minParam] = '5';
        else {
          const v = f.get(sample);
          filters[f.param] = String(Array.isArray(v) ? v[0] : v);
        }
      }
      await checkAgainstOracle(def, { filters });
      await checkAgainstOracle(def, { filters, search: 'e' });
    });

    test('search: case- and accent-insensitive substring, trimmed; empty = no filter', async () => {
      const text = def.searchText(records[def.name]![0]!);
      for (const term of [text.slice(0, 4), text.slice(2, 6).toUpperCase(), ` ${text.slice(1, 3)} `, 'e', 'zzzz-not-there', '']) {
        await checkAgainstOracle(def, { search: term });
      }
    });

    test('bad parameters -> 400 INVALID_PARAMETER naming the parameter', async () => {
      const bad = [
        'page=0', 'page=-1', 'page=1.5', 'page=abc', 'page=', 'limit=0', 'limit=x', 'limit=2&limit=3', 'sort=nope', 'sort=popularity',
        `search=${'a'.repeat(201)}`, 'search=a&search=b',
        ...def.filters.flatMap((f) =>
          f.kind === 'boolean' ? [`${f.param}=yes`, `${f.param}=TRUE`] : f.kind === 'enum' ? [`${f.param}=done`] : f.kind === 'range'
            ? [`${f.minParam}=11`, `${f.maxParam}=-1`, `${f.minParam}=8&${f.maxParam}=2`, `${f.minParam}=.5`, `${f.minParam}=${f.highest}.0000000000000001`]
            : f.kind === 'slug' ? [`${f.param}=`, `${f.param}=Zo%C3%AB%20Mart%C3%ADn`, `${f.param}=zoe_martin`] : [`${f.param}=`],
        ),
      ];
      for (const query of bad) {
        const res = await get(`/api/v1/${def.name}?${query}`);
        assert.equal(res.status, 400, query);
        assert.equal(res.body.error, 'INVALID_PARAMETER', query);
        const param = query.split('=')[0]!;
        assert.ok(res.body.message.includes(`'${param}'`), `${query}: ${res.body.message}`);
      }
    });

    test('unknown parameters are ignored', async () => {
      const plain = await get(`/api/v1/${def.name}?limit=5`);
      const extra = await get(`/api/v1/${def.name}?limit=5&utm_source=x&utm_source=y`);
      assert.equal(extra.status, 200);
      assert.deepEqual(extra.body, plain.body);
    });
  });
}
