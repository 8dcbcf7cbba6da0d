// Every response matches the document: each record of the bundled data in both shapes, sparse
// fixture records, every status a client can get over HTTP; and the checker rejects what it should.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BUNDLED_DATA } from '../../src/config.ts';
import { detailBody, listItem } from '../../src/data/indexes.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { SINGULAR } from '../../src/http/openapi.ts';
import { startServer, type RunningServer } from '../../src/index.ts';
import { COLLECTIONS } from '../../src/resources/index.ts';
import { startService } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { fetchChecked, responseErrors, schemaErrors } from '../helpers/openapi-validator.ts';

for (const [label, data] of [['bundled data', BUNDLED_DATA], ['sparse fixture', fixture()]] as const) {
  test(`${label}: every record matches its list and detail schema`, async () => {
    const snapshot = await loadSnapshot(data);
    const today = 20261122;
    let checked = 0;
    for (const c of COLLECTIONS) {
      const index = snapshot.collections[c];
      for (let i = 0; i < index.size; i++) {
        assert.deepEqual(schemaErrors(`${SINGULAR[c]}ListItem`, JSON.parse(listItem(index, i, today).toString())), []);
        assert.deepEqual(responseErrors(`/api/v1/${c}/x`, 200, JSON.parse(detailBody(index, i, today).toString())), []);
        checked++;
      }
    }
    assert.ok(checked >= 7, `checked ${checked} records`);
  });
}

const news = () => ({
  _id: 'n1', title: 'T', slug: 'a-b', excerpt: null, thumbnail: null, author: null, category: null, tags: [],
  publishDate: '2025-04-01T10:00:00.000Z', featured: null, celebrity: { name: 'Z', slug: 'z' }, createdAt: null,
});
const error = (status: number, code: string, extra: object = {}) => [status, { success: false, error: code, message: 'm', ...extra }] as const;
const CASES: readonly [string, string, number, unknown][] = [
  ['an undocumented key (news views)', '/api/v1/news', 200, { success: true, version: 'v1', resource: 'news', pagination: { page: 1, limit: 20, total: 1, pages: 1 }, data: [{ ...news(), views: 3 }] }],
  ['a missing field', '/api/v1/news', 200, { success: true, version: 'v1', resource: 'news', pagination: { page: 1, limit: 20, total: 1, pages: 1 }, data: [{ ...news(), excerpt: undefined }] }],
  ['null in a required field', '/api/v1/news/a-b', 200, { success: true, version: 'v1', resource: 'news', data: { ...news(), slug: null } }],
  ['a timestamp that is not one', '/api/v1/news/a-b', 200, { success: true, version: 'v1', resource: 'news', data: { ...news(), publishDate: 'yesterday' } }],
  ['the wrong resource name', '/api/v1/news/a-b', 200, { success: true, version: 'v1', resource: 'movies', data: news() }],
  ['a 429 without quota', '/api/v1/news', ...error(429, 'QUOTA_EXCEEDED')],
  ['a 404 with the 401 code', '/api/v1/news/a-b', ...error(404, 'INVALID_API_KEY')],
  ['a status the path does not document', '/api/v1/news', ...error(404, 'NOT_FOUND')],
  ['an error with a stack', '/api/v1/nope', ...error(500, 'INTERNAL_ERROR', { stack: 'at x' })],
  ['a 200 on an unknown path', '/api/v1/nope', 200, { success: true }],
];
for (const [name, path, status, body] of CASES) {
  test(`the checker rejects ${name}`, () => assert.notDeepEqual(responseErrors(path, status, body), []));
}

let server: RunningServer;
let key: string;
before(async () => {
  server = await startServer({ data: fixture(), plans: { free: 12 } });
  ({ key } = await server.accounts.create({ email: 'doc@example.com' }));
});
after(() => server.close());

test('every status a client can get over HTTP matches the document', async () => {
  const h = { headers: { 'x-api-key': key } };
  const cases: [string, RequestInit, number][] = [
    ['/api/v1/celebrities?sort=name_desc&limit=1&page=2', h, 200],
    ['/api/v1/outfits?celebrity=zoe-martin&brand=maison%20verrel', h, 200],
    ['/api/v1/news?featured=true&search=award', h, 200],
    ['/api/v1/movies?status=released&page=9', h, 200],
    ['/api/v1/reviews?minRating=7&maxRating=8', h, 200],
    ['/api/v1/celebrities/bjorn-berg', h, 200],
    ['/api/v1/reviews/night-train-review', h, 200],
    ['/api/v1/movies?sort=popular', h, 400],
    ['/api/v1/movies/no-such-movie', h, 404],
    ['/api/v1/unknown', h, 404],
    ['/api/v1/movies', { ...h, method: 'DELETE' }, 405],
    ['/api/v1/movies', { headers: { 'x-api-key': 'cel_nope' } }, 401],
    ['/api/v1/openapi.json', {}, 200],
    ['/healthz', {}, 200],
    ['/api/v1/movies', h, 429], // with the month's count put at the quota first
  ];
  for (const [path, init, status] of cases) {
    if (status === 429) await server.usage.set('doc@example.com', 12);
    const res = await fetchChecked(server.url + path, init); // asserts the body against the document
    assert.equal(res.status, status, path);
  }
});

test('403 HTTPS_REQUIRED on the plain listener beside HTTPS matches the document', async (t) => {
  const state = await mkdtemp(join(tmpdir(), 'celebrity-openapi-'));
  t.after(() => rm(state, { recursive: true, force: true }));
  const service = await startService({ data: fixture(), state, tls: 'self-signed', port: 0, httpPort: 0 });
  t.after(() => service.close());
  const plain = service.listeners.find((l) => l.transport === 'redirect')!;
  for (const path of ['/api/v1/openapi.json', '/api/v1/movies']) {
    const res = await fetchChecked(plain.url + path);
    assert.equal(res.status, 403);
    assert.equal(res.body.error, 'HTTPS_REQUIRED');
  }
});
