// Faults on purpose (CONTRACT 11), black-box: latency, 500 and 503, dropped connections; every request
// or a path; a seeded rate that repeats, or the next N; changed during a test; `serve --fault` refused
// unless given, with usage errors for bad specs.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseFaultSpec } from '../../src/http/faults.ts';
import { FaultRuleError, startServer, type FaultRule, type RunningServer } from '../../src/index.ts';
import { fixture } from '../helpers/fixture.ts';
import { assertMatchesDocument } from '../helpers/openapi-validator.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { fakeIo } from '../helpers/state.ts';
import { main } from '../../src/cli/main.ts';

let server: RunningServer;
let key: string;
before(async () => {
  server = await startServer({ data: fixture(), faults: [{ status: 503, path: '/api/v1/movies', times: 2 }] });
  ({ key } = await server.accounts.create({ email: 'faults@example.com', plan: 'pro' }));
});
after(() => server.close());

/** GET with the key: the status, or 0 when the connection was dropped without an answer. */
async function status(path: string): Promise<number> {
  try {
    const res = await fetch(server.url + path, { headers: { 'x-api-key': key } });
    const text = await res.text();
    assertMatchesDocument(path, res.status, JSON.parse(text));
    return res.status;
  } catch (err) {
    assert.match(String((err as Error).cause), /SocketError|ECONNRESET|other side closed/);
    return 0;
  }
}
const statuses = async (path: string, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await status(path));
  return out;
};
const used = async () => (await server.usage.get('faults@example.com')).used;

test('startServer({ faults }): a 503 with Retry-After for the next 2 requests under the path, others untouched, none counted', async () => {
  assert.equal(await status('/api/v1/celebrities'), 200);
  const res = await fetch(`${server.url}/api/v1/movies/night-train`, { headers: { 'x-api-key': key } });
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.deepEqual(await res.json(), { success: false, error: 'SERVICE_UNAVAILABLE', message: 'Requests cannot be counted right now, and nothing is served uncounted. Retry shortly' });
  assert.deepEqual(await statuses('/api/v1/movies', 2), [503, 200]);
  assert.equal(server.faults.injected, 2);
  assert.equal(await used(), 2, 'only the two 200s count');
});

test('faults.set: 500 on every request, a RegExp path, then clear', async () => {
  server.faults.set([{ status: 500 }]);
  assert.deepEqual([await status('/api/v1/news'), await status('/healthz')], [500, 500]);
  server.faults.set([{ status: 500, path: /^\/api\/v1\/[a-z]+\/[a-z-]+$/ }]);
  assert.deepEqual([await status('/api/v1/news'), await status('/api/v1/news/zoe-wins')], [200, 500]);
  server.faults.clear();
  assert.deepEqual(await statuses('/api/v1/news/zoe-wins', 2), [200, 200]);
  assert.equal(server.faults.injected, 0);
});

test('requests a latency holds back keep their own path and query', async () => {
  server.faults.set([{ latencyMs: 100 }]);
  const get = async (path: string) => (await (await fetch(server.url + path, { headers: { 'x-api-key': key } })).json()) as { resource: string; data: unknown[] };
  const [movies, celebrities] = await Promise.all([get('/api/v1/movies?limit=1'), get('/api/v1/celebrities?limit=2')]);
  server.faults.clear();
  assert.deepEqual([movies.resource, movies.data.length], ['movies', 1]);
  assert.deepEqual([celebrities.resource, celebrities.data.length], ['celebrities', 2]);
});

test('a dropped connection: no answer at all, then the server serves on', async () => {
  server.faults.set([{ drop: true, times: 1 }]);
  assert.deepEqual(await statuses('/api/v1/reviews', 2), [0, 200]);
  server.faults.clear();
});

test('a seeded rate picks the same requests every time; another seed picks others', async () => {
  const run = async (seed: string) => {
    server.faults.set([{ status: 503, rate: 0.5, seed }]);
    const got = await statuses('/api/v1/outfits', 24);
    assert.equal(server.faults.injected, got.filter((s) => s === 503).length);
    return got;
  };
  const a = await run('alpha');
  assert.deepEqual(await run('alpha'), a, 'set() starts the seeded sequence over');
  assert.ok(a.includes(503) && a.includes(200), `a mix: ${a}`);
  assert.notDeepEqual(await run('beta'), a);
  server.faults.clear();
});

test('latency: a delayed answer arrives after an undelayed one sent later', async () => {
  server.faults.set([{ latencyMs: 1500, times: 1 }]);
  const order: string[] = [];
  const slow = status('/api/v1/movies').then((s) => order.push(`slow ${s}`));
  await new Promise((resolve) => setImmediate(resolve));
  await status('/api/v1/movies').then((s) => order.push(`fast ${s}`));
  await slow;
  assert.deepEqual(order, ['fast 200', 'slow 200']);
  server.faults.clear();
});

test('bad rules are refused with the rule and the reason, and the old rules stay', async () => {
  const bad: [FaultRule, RegExp][] = [
    [{}, /needs latencyMs, status or drop/],
    [{ status: 404 as 500 }, /status must be 500 or 503/],
    [{ status: 500, drop: true }, /exclude each other/],
    [{ drop: true, rate: 2 }, /rate must be a number from 0 to 1/],
    [{ drop: true, times: 0 }, /times must be an integer >= 1/],
    [{ drop: true, path: 'api' }, /path must start with '\/'/],
    [{ latencyMs: -1 }, /latencyMs must be/],
    [{ drop: true, often: true } as FaultRule, /unknown field 'often'/],
  ];
  server.faults.set([{ status: 500, times: 1 }]);
  for (const [rule, message] of bad) {
    assert.throws(() => server.faults.set([{ drop: true, times: 1 }, rule]), (err: unknown) => err instanceof FaultRuleError && message.test((err as Error).message) && (err as Error).message.startsWith('faults[1]: '));
  }
  assert.equal(await status('/api/v1/movies'), 500, 'the rules in force before the refused ones');
  await assert.rejects(startServer({ faults: [{ status: 502 as 500 }] }), FaultRuleError);
});

test('--fault SPEC parses to a rule, and says what is wrong', () => {
  assert.deepEqual(parseFaultSpec('status=503,rate=0.2,seed=7,path=/api/v1/movies,times=3'), { status: 503, rate: 0.2, seed: '7', path: '/api/v1/movies', times: 3 });
  assert.deepEqual(parseFaultSpec('latency=300,drop'), { latencyMs: 300, drop: true });
  const cases: [string, RegExp][] = [
    ['', /'' needs a value/], ['status', /'status' needs a value/], ['status=abc', /status must be a number/],
    ['status=502', /status must be 500 or 503/], ['drop,drop', /'drop' given twice/], ['sometimes=1', /unknown 'sometimes'/],
    ['latency=1e3', /latency must be a number/], ['drop,rate=1.5', /rate must be a number from 0 to 1/],
  ];
  for (const [spec, message] of cases) assert.throws(() => parseFaultSpec(spec), (err: unknown) => err instanceof FaultRuleError && message.test((err as Error).message), spec);
});

test('serve: --fault usage errors exit 2; with --fault the process misbehaves as told, and warns', async (t) => {
  const state = await mkdtemp(join(tmpdir(), 'celebrity-faults-'));
  t.after(() => rm(state, { recursive: true, force: true }));
  const refused = fakeIo();
  assert.equal(await main(['serve', '--insecure-http', '--port', '0', '--state', state, '--fault', 'status=418'], refused), 2);
  assert.match(refused.err(), /--fault status=418: status must be 500 or 503\nRun 'celebrity-api serve --help' for usage/);
  const help = fakeIo();
  assert.equal(await main(['serve', '--help'], help), 0);
  assert.match(help.out(), /--fault SPEC .*never on otherwise/);
  const serve = await spawnServe(['--insecure-http', '--port', '0', '--state', state, '--fault', 'status=503,path=/healthz,times=1']);
  try {
    assert.deepEqual([(await fetch(`${serve.url}/healthz`)).status, (await fetch(`${serve.url}/healthz`)).status], [503, 200]);
    assert.match(serve.stderr(), /--fault: misbehaving on purpose/);
  } finally {
    assert.equal(await serve.stop(), 0, serve.stderr());
  }
});
