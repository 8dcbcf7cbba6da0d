// A reload lets the data it replaced go (issue 19's memory at ready after --watch reloads): nothing the
// request path keeps between requests may hold the old snapshot once a request of every kind was
// answered from it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stillHeld } from '../helpers/collected.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { startTestServer } from '../helpers/server.ts';

test('a reload after list, filter, search and detail requests, plain and compressed -> the replaced snapshot and its collections are collected', async () => {
  // Generated records: their details pass the 1 KB below which nothing is compressed, as the fixture's do not.
  const data = () => generateRecords({ scale: 30, seed: 'reload-release' });
  const first = data();
  const celebrity = (first.celebrities[0] as { slug: string; nationality: string });
  const movie = (first.movies[0] as { slug: string }).slug;
  const server = await startTestServer({ data: first, plans: { free: 1000 } });
  try {
    const key = await server.account('free', 'reload-release@example.com');
    for (const path of ['/api/v1/celebrities', `/api/v1/celebrities?nationality=${encodeURIComponent(celebrity.nationality)}&sort=name_asc`, '/api/v1/celebrities?search=an', `/api/v1/celebrities/${celebrity.slug}`, '/api/v1/outfits', `/api/v1/movies/${movie}`]) {
      for (const encoding of ['identity', 'br', 'gzip']) {
        const r = await server.request(path, { key, headers: { 'accept-encoding': encoding } });
        assert.equal(r.status, 200, `${path} (${encoding})`);
      }
    }
    const refsTo = (old: object & { collections: object }) => [new WeakRef(old), ...Object.values(old.collections).map((c: object) => new WeakRef(c))];
    const refs = refsTo(server.service.snapshot());
    await server.service.reload(data());
    assert.notEqual(server.service.snapshot(), refs[0]!.deref());
    assert.equal(await stillHeld(refs), 0, 'the replaced snapshot or one of its collections is still held');
  } finally {
    await server.close();
  }
});
