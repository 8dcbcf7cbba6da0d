// What a client's own test suite does with startServer (issue 6 "Done when"): its own data, an
// account one request before its quota, the month boundary, a revoked key, a reload, a clean close.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { DataError, startServer, type RunningServer } from '../../src/index.ts';
import { fixture } from '../helpers/fixture.ts';
import { fetchChecked } from '../helpers/openapi-validator.ts';

const EMAIL = 'client@example.com';
let server: RunningServer;
let key: string;
const get = (path: string, apiKey: string | null = key) => fetchChecked(server.url + path, { headers: apiKey === null ? {} : { 'x-api-key': apiKey } });

before(async () => {
  // An injected clock: the last day of November 2026, 22:00 UTC (two hours before the quota resets).
  server = await startServer({ data: fixture(), clock: () => Date.parse('2026-11-30T22:00:00.000Z') });
  ({ key } = await server.accounts.create({ email: EMAIL, plan: 'free' }));
});
after(() => server.close());

test('starts on a free port of 127.0.0.1 over plain HTTP', () => {
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(new URL(server.url).port, '0');
});

test('serves the custom in-memory data, with age on the injected day', async () => {
  const res = await get('/api/v1/celebrities?sort=name_asc');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data.map((c: { slug: string }) => c.slug), ['bjorn-berg', 'zoe-martin']);
  assert.equal(res.body.data.find((c: { slug: string }) => c.slug === 'zoe-martin').age, 36); // born 1990-03-15
});

test('usage 99 of 100: one 200, then 429 with resetsOn the first instant of December', async () => {
  await server.usage.set(EMAIL, 99);
  const last = await get('/api/v1/movies');
  assert.equal(last.status, 200);
  assert.equal(last.headers.get('ratelimit'), '"monthly";r=0;t=7200');
  const refused = await get('/api/v1/movies');
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, 'QUOTA_EXCEEDED');
  assert.deepEqual(refused.body.quota, { used: 100, total: 100, resetsOn: '2026-12-01T00:00:00.000Z' });
  assert.equal(refused.headers.get('retry-after'), '7200');
  assert.equal((await server.usage.get(EMAIL)).used, 100);
});

test('the next month on the controllable clock: 200 again, counted from 1', async () => {
  server.clock.set('2026-12-01T00:00:00.000Z');
  const res = await get('/api/v1/movies/night-train');
  assert.equal(res.status, 200);
  assert.equal(res.body.data.title, 'Night Train');
  const usage = (await server.usage.get(EMAIL));
  assert.equal(usage.used, 1);
  assert.equal(usage.resetsOn, '2027-01-01T00:00:00.000Z');
});

test('a revoked key gets 401 INVALID_API_KEY; a new key works', async () => {
  await server.accounts.revoke(EMAIL);
  const res = await get('/api/v1/movies');
  assert.equal(res.status, 401);
  assert.equal(res.body.error, 'INVALID_API_KEY');
  ({ key } = await server.accounts.createKey(EMAIL)); // the password given at create() is remembered
  assert.equal((await get('/api/v1/movies')).status, 200);
});

test('reload swaps in new data; invalid data is refused and the old data stays', async () => {
  const next = fixture();
  next.celebrities[0]!.name = 'Zoë Martín-Reload';
  await server.reload(next);
  assert.equal((await get('/api/v1/celebrities/zoe-martin')).body.data.name, 'Zoë Martín-Reload');
  const broken = fixture();
  broken.outfits[0]!.celebrity = 'nobody';
  await assert.rejects(server.reload(broken), (err) => err instanceof DataError && /no celebrities record with slug "nobody"/.test(err.message));
  assert.equal((await get('/api/v1/celebrities/zoe-martin')).body.data.name, 'Zoë Martín-Reload');
});

test('close frees the port', async () => {
  const port = Number(new URL(server.url).port);
  await server.close();
  await assert.rejects(fetch(server.url + '/healthz'), TypeError); // connection refused
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
