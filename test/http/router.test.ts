// src/http/router.ts: path -> route, table-driven (CONTRACT 2: anything under /api/ that is not a route
// is api-unknown, answered 404 after the key and quota checks).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { route } from '../../src/http/router.ts';

const cases: [string, unknown][] = [
  ['/api/v1/celebrities', { kind: 'list', collection: 'celebrities' }],
  ['/api/v1/movies', { kind: 'list', collection: 'movies' }],
  ['/api/v1/news', { kind: 'list', collection: 'news' }],
  ['/api/v1/outfits', { kind: 'list', collection: 'outfits' }],
  ['/api/v1/reviews', { kind: 'list', collection: 'reviews' }],
  ['/api/v1/celebrities/zoe-martin', { kind: 'detail', collection: 'celebrities', slug: 'zoe-martin' }],
  ['/api/v1/reviews/a1', { kind: 'detail', collection: 'reviews', slug: 'a1' }],
  ['/api/v1/openapi.json', { kind: 'openapi' }],
  ['/healthz', { kind: 'healthz' }],
  ['/metrics', { kind: 'metrics' }],
  ['/dashboard', { kind: 'dashboard' }],
  ['/dashboard/login', { kind: 'dashboard' }],
  ['/api/v1/celebritiesx', { kind: 'api-unknown' }],
  ['/api/v1/celebrities/', { kind: 'api-unknown' }],
  ['/api/v1/celebrities/a/b', { kind: 'api-unknown' }],
  ['/api/v1/celebrities/Zoe', { kind: 'api-unknown' }],
  ['/api/v1/celebrities/zoe--martin', { kind: 'api-unknown' }],
  ['/api/v1/celebrities/..', { kind: 'api-unknown' }],
  ['/api/v1/news/', { kind: 'api-unknown' }],
  ['/api/v1/new', { kind: 'api-unknown' }],
  ['/api/v1/', { kind: 'api-unknown' }],
  ['/api/v1/openapi.json/', { kind: 'api-unknown' }],
  ['/api/v2/celebrities', { kind: 'api-unknown' }],
  ['/api', { kind: 'api-unknown' }],
  ['/api/', { kind: 'api-unknown' }],
  ['/apix', { kind: 'unknown' }],
  ['/', { kind: 'unknown' }],
  ['', { kind: 'unknown' }],
  ['/healthz/', { kind: 'unknown' }],
  ['/dashboardx', { kind: 'unknown' }],
];

for (const [path, want] of cases) {
  test(`route ${JSON.stringify(path)} -> ${JSON.stringify(want)}`, () => assert.deepEqual(route(path), want));
}

test('the last path route() matched is kept: every path asked again, and after each other one, gets its own route', () => {
  // Pairs of one length among them (a kept route matched by length alone would answer the other's).
  for (const [path, want] of cases) {
    for (const [other, otherWant] of cases) {
      assert.deepEqual(route(other), otherWant);
      assert.deepEqual(route(path), want, `${path} after ${other}`);
      assert.deepEqual(route(path), want, `${path} again`);
      assert.deepEqual(route(`${path}`.slice(0)), want);
    }
  }
});
