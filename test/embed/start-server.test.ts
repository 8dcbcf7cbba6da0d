// startServer's options and handles one at a time: defaults, the clock object, accounts with
// remembered passwords, plan overrides, a state directory that survives close, TLS, bad input.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BUNDLED_DATA } from '../../src/config.ts';
import { AccountError, DataError, openapiDocument, startServer } from '../../src/index.ts';
import { fixture } from '../helpers/fixture.ts';
import { fetchChecked } from '../helpers/openapi-validator.ts';

const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

test('defaults: the bundled data, accounts in memory; the OpenAPI document needs no key and is never counted', async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  const { key } = await server.accounts.create({ email: 'a@example.com' });
  const list = await fetchChecked(`${server.url}/api/v1/celebrities?limit=1`, withKey(key));
  const bundled = JSON.parse(await readFile(join(BUNDLED_DATA, 'celebrities.json'), 'utf8')) as unknown[];
  assert.equal(list.body.pagination.total, bundled.length);
  const doc = await fetchChecked(`${server.url}/api/v1/openapi.json`);
  assert.equal(doc.status, 200);
  assert.deepEqual(doc.body, openapiDocument());
  assert.equal((await server.usage.get('a@example.com')).used, 1);
  assert.equal((await server.accounts.list())[0]!.plan, 'free');
});

test('clock: set pins (ms, Date or ISO string), advance moves, reset follows the source again', async (t) => {
  let source = Date.parse('2026-05-10T00:00:00.000Z');
  const server = await startServer({ data: fixture(), clock: () => source });
  t.after(() => server.close());
  assert.equal(server.clock.now(), source);
  source += 1000;
  assert.equal(server.clock.now(), Date.parse('2026-05-10T00:00:01.000Z'));
  server.clock.advance(60_000);
  assert.equal(server.clock.now(), Date.parse('2026-05-10T00:01:01.000Z'));
  server.clock.set(new Date('2027-01-01T00:00:00.000Z'));
  source += 5000; // pinned: the source no longer moves it
  server.clock.advance(1);
  assert.equal(server.clock.now(), Date.parse('2027-01-01T00:00:00.001Z'));
  server.clock.set(0);
  assert.equal(server.clock.now(), 0);
  server.clock.reset();
  assert.equal(server.clock.now(), source);
  assert.throws(() => server.clock.set('not a date'), TypeError);
  assert.throws(() => server.clock.advance(Number.NaN), TypeError);
});

test('accounts: given passwords reveal, rotate invalidates the old key, setPlan applies the overridden quota', async (t) => {
  const server = await startServer({ data: fixture(), plans: { free: 1, starter: 3 } });
  t.after(() => server.close());
  const first = await server.accounts.create({ email: 'B@Example.com', plan: 'free', password: 'correct horse' });
  assert.equal((await server.accounts.reveal('b@example.com')).key, first.key);
  assert.equal((await server.accounts.reveal('b@example.com', 'correct horse')).key, first.key);
  await assert.rejects(server.accounts.reveal('b@example.com', 'wrong'), (e) => e instanceof AccountError && e.code === 'WRONG_PASSWORD');
  assert.equal((await fetchChecked(`${server.url}/api/v1/news`, withKey(first.key))).status, 200);
  assert.equal((await fetchChecked(`${server.url}/api/v1/news`, withKey(first.key))).body.quota.total, 1);
  await server.accounts.setPlan('b@example.com', 'starter');
  const second = await server.accounts.rotate('b@example.com');
  assert.notEqual(second.key, first.key);
  assert.equal((await fetchChecked(`${server.url}/api/v1/news`, withKey(first.key))).status, 401);
  assert.equal((await fetchChecked(`${server.url}/api/v1/news`, withKey(second.key))).status, 200);
  assert.deepEqual([(await server.usage.get('b@example.com')).used, (await server.usage.get('b@example.com')).total], [2, 3]);
  await assert.rejects(server.accounts.create({ email: 'b@example.com' }), (e) => e instanceof AccountError && e.code === 'EMAIL_TAKEN');
  await assert.rejects(server.accounts.rotate('nobody@example.com'), TypeError);
});

test('a state directory: close flushes the usage log, a restart on it keeps accounts and counts', async (t) => {
  const state = await mkdtemp(join(tmpdir(), 'celebrity-embed-'));
  t.after(() => rm(state, { recursive: true, force: true })); // runs after the finally below has closed the server
  const first = await startServer({ data: fixture(), state });
  const { key } = await first.accounts.create({ email: 'c@example.com', plan: 'pro' });
  for (let i = 0; i < 3; i++) assert.equal((await fetchChecked(`${first.url}/api/v1/reviews`, withKey(key))).status, 200);
  await first.close();
  const second = await startServer({ data: fixture(), state });
  try {
    assert.equal((await second.usage.get('c@example.com')).used, 3);
    assert.equal((await fetchChecked(`${second.url}/api/v1/reviews`, withKey(key))).status, 200);
  } finally {
    await second.close();
  }
});

test("tls: 'self-signed' needs a state directory and serves https with a fingerprint", async (t) => {
  await assert.rejects(startServer({ data: fixture(), tls: 'self-signed' }), /state directory/);
  const state = await mkdtemp(join(tmpdir(), 'celebrity-embed-tls-'));
  t.after(() => rm(state, { recursive: true, force: true }));
  const server = await startServer({ data: fixture(), state, tls: 'self-signed' });
  try {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(server.fingerprint ?? '', /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/i);
  } finally {
    await server.close();
  }
});

test('invalid data never starts a server; bad plan overrides are refused', async () => {
  const data = fixture();
  data.movies[0]!.status = 'cancelled';
  await assert.rejects(startServer({ data }), (e) => e instanceof DataError && /movies\.json/.test(e.message));
  await assert.rejects(startServer({ data: fixture(), plans: { free: -1 } }), TypeError);
});
