// What the parser refuses, on a connection that still owes responses: every pipelined response before
// the bad request is written, in order, then a JSON 400/414/431 with a request id, then the close; only
// what was written counts (issue 15 item 2). Also CONNECT, a missing Host and an unknown Expect.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { App } from '../../src/http/app.ts';
import { hardenedServer, resolveLimits, start } from '../../src/http/server.ts';
import { silentLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { get, rawExchange, type RawResponse } from '../helpers/raw-http.ts';
import { tempDir } from '../helpers/serve-harness.ts';

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-z]+$/;

function assertJsonError(r: RawResponse | undefined, status: number, code: string): void {
  assert.ok(r, `no ${status} response`);
  assert.equal(r.status, status, r.body);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.match(r.headers.get('x-request-id') ?? '', REQUEST_ID);
  assert.equal(JSON.parse(r.body).error, code);
  assert.equal(JSON.parse(r.body).success, false);
}

// In memory the answers are written at once; with a state directory and strict durability each 200
// waits for its usage record to reach the disk, so the refusal has to wait for answers written later.
for (const durable of [false, true]) describe(`pipelined requests before a request the parser refuses${durable ? ' (strict durability)' : ''}`, () => {
  let service: Service;
  let url: string;
  let key: string;
  let tmp: Awaited<ReturnType<typeof tempDir>> | null = null;
  const used = async () => (await service.gate.usage.get('pipe@example.com')).used;

  before(async () => {
    if (durable) tmp = await tempDir('client-error');
    service = await startService({ data: fixture(), state: tmp?.dir ?? 'memory', tls: false, ...(durable ? { durability: 'strict' as const } : {}) });
    url = service.listeners[0]!.url;
    key = (await service.gate.accounts.create({ email: 'pipe@example.com', plan: 'pro', password: 'correct horse battery' })).key;
  });
  after(async () => {
    await service.close(0);
    await tmp?.remove();
  });

  const three = () => [
    get('/api/v1/celebrities/zoe-martin', `x-api-key: ${key}`),
    get('/api/v1/celebrities/bjorn-berg', `x-api-key: ${key}`),
    get('/api/v1/movies/night-train', `x-api-key: ${key}`),
  ];

  it('three GETs then a malformed request: three 200s in order, a JSON 400, the close; 3 counted', async () => {
    const before = await used();
    const { responses, ended } = await rawExchange(url, [three().join('') + 'GARBAGE\r\n\r\n']);
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 200, 400]);
    assert.deepEqual(responses.slice(0, 3).map((r) => JSON.parse(r.body).data.slug), ['zoe-martin', 'bjorn-berg', 'night-train']);
    assertJsonError(responses[3], 400, 'BAD_REQUEST');
    assert.equal(responses[3]!.headers.get('connection'), 'close');
    assert.equal(ended, 'end');
    assert.equal((await used()) - before, 3);
  });

  it('two GETs then one with a 100 KB header: two 200s, a JSON 431, the close; 2 counted', async () => {
    const before = await used();
    const [a, b] = three();
    const big = get('/api/v1/movies/night-train', `x-api-key: ${key}`, `x-big: ${'a'.repeat(100_000)}`);
    const { responses, ended } = await rawExchange(url, [a! + b! + big]);
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 431]);
    assertJsonError(responses[2], 431, 'HEADERS_TOO_LARGE');
    assert.equal(ended, 'end');
    assert.equal((await used()) - before, 2);
  });

  it('a GET then CONNECT: the 200, then a JSON 405 with Allow, the close', async () => {
    const [a] = three();
    const { responses, ended } = await rawExchange(url, [a! + 'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n']);
    assert.deepEqual(responses.map((r) => r.status), [200, 405]);
    assertJsonError(responses[1], 405, 'METHOD_NOT_ALLOWED');
    assert.equal(responses[1]!.headers.get('allow'), 'GET, HEAD');
    assert.equal(ended, 'end');
  });
});

describe('the refusal waits for responses the app writes late', () => {
  // A handler that answers after a delay, as a quota reservation over Redis or a strict usage flush would.
  let url: string;
  let server: ReturnType<typeof hardenedServer>;
  before(async () => {
    const snapshot = await loadSnapshot(fixture());
    const app = new App({
      snapshot: () => snapshot, gate: { admit: () => { throw new Error('unused'); }, settle: () => null, quotaHeaders: () => ({}) },
      clock: Date.now, log: silentLogger, trustProxy: false, corsOrigin: null, openapi: () => Buffer.alloc(0), metrics: () => null,
      draining: () => false, health: () => ({ status: 'ok', store: null }), observe: null, dashboard: null,
    });
    const late = (req: IncomingMessage, res: ServerResponse) =>
      setTimeout(() => res.writeHead(200, { 'Content-Length': String(req.url!.length) }).end(req.url), req.url === '/slow' ? 150 : 10);
    server = hardenedServer(resolveLimits(), late, null, app.rawAnswer('insecure'));
    await start(server, '127.0.0.1', 0);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('a slow and a quick response, then garbage: both, in order, then the 400', async () => {
    const { responses } = await rawExchange(url, [get('/slow') + get('/quick') + 'GARBAGE\r\n\r\n']);
    assert.deepEqual(responses.map((r) => [r.status, r.body]), [[200, '/slow'], [200, '/quick'], [400, responses[2]?.body]]);
    assertJsonError(responses[2], 400, 'BAD_REQUEST');
  });

  it('a slow response, then a 100 KB header: the 200, then the 431', async () => {
    const { responses } = await rawExchange(url, [get('/slow') + get('/x', `x-big: ${'b'.repeat(100_000)}`)]);
    assert.deepEqual(responses.map((r) => r.status), [200, 431]);
  });
});

describe('while draining', () => {
  it('a dashboard page, like any answer, ends its HTTP/1.1 connection (Connection: close)', async () => {
    const snapshot = await loadSnapshot(fixture());
    let draining = false;
    const app = new App({
      snapshot: () => snapshot, gate: { admit: () => { throw new Error('unused'); }, settle: () => null, quotaHeaders: () => ({}) },
      clock: Date.now, log: silentLogger, trustProxy: false, corsOrigin: null, openapi: () => Buffer.alloc(0), metrics: () => null,
      draining: () => draining, health: () => ({ status: 'ok', store: null }), observe: null,
      dashboard: {
        // As the dashboard's pages do (respond-page.ts): they write Connection: close when told to.
        handle: async (_req, res, arrival) => {
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': '2', ...(arrival.close ? { Connection: 'close' } : {}) }).end('ok');
          return 200;
        },
      },
    });
    const server = hardenedServer(resolveLimits(), (req, res, refusal) => app.handle(req, res, 'insecure', refusal), null, app.rawAnswer('insecure'));
    await start(server, '127.0.0.1', 0);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // A keep-alive answer leaves the connection open: the exchange ends at the whole response, not
      // at the 5 s timeout.
      const before = await rawExchange(url, [get('/dashboard/login')], { expect: 1 });
      assert.notEqual(before.responses[0]?.headers.get('connection'), 'close');
      draining = true;
      const during = await rawExchange(url, [get('/dashboard/login')]);
      assert.equal(during.responses[0]?.status, 200);
      assert.equal(during.responses[0]?.headers.get('connection'), 'close');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
