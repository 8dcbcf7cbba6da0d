// RFC 9112/9110 framing edge cases, each a JSON answer with a request id: Host missing or doubled (400),
// an unknown Expect (417), CONNECT (405), a target too long (414), the absolute form accepted, and
// percent-encoded unreserved characters decoded before routing (issues 14 and 15).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type Service } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { assertMatchesDocument } from '../helpers/openapi-validator.ts';
import { rawExchange, type RawResponse } from '../helpers/raw-http.ts';

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-z]+$/;

describe('framing', () => {
  let service: Service;
  let url: string;
  let key: string;

  before(async () => {
    service = await startService({ data: fixture(), state: 'memory', tls: false });
    url = service.listeners[0]!.url;
    key = (await service.gate.accounts.create({ email: 'framing@example.com', plan: 'pro', password: 'correct horse battery' })).key;
  });
  after(() => service.close(0));

  /** One request written as given; its first response. */
  async function one(head: string): Promise<RawResponse> {
    const { responses, text } = await rawExchange(url, [head], { expect: 1 });
    assert.ok(responses[0], `no response to ${JSON.stringify(head.slice(0, 120))}: ${JSON.stringify(text.slice(0, 200))}`);
    return responses[0];
  }

  function assertError(r: RawResponse, status: number, code: string): void {
    assert.equal(r.status, status, r.body);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.match(r.headers.get('x-request-id') ?? '', REQUEST_ID);
    const body = JSON.parse(r.body);
    assert.equal(body.error, code);
    assert.equal(Buffer.byteLength(r.body), Number(r.headers.get('content-length')));
  }

  const keyed = (target: string, ...lines: string[]) =>
    `GET ${target} HTTP/1.1\r\n${lines.map((l) => l + '\r\n').join('')}x-api-key: ${key}\r\nConnection: close\r\n\r\n`;

  it('HTTP/1.1 without Host -> JSON 400 BAD_REQUEST that says so, and the connection closes', async () => {
    const r = await one(keyed('/api/v1/celebrities'));
    assertError(r, 400, 'BAD_REQUEST');
    assert.match(JSON.parse(r.body).message, /Host/);
    assert.equal(r.headers.get('connection'), 'close');
  });

  it('HTTP/1.0 without Host is served (Host is an HTTP/1.1 requirement)', async () => {
    const r = await one(`GET /api/v1/celebrities/zoe-martin HTTP/1.0\r\nx-api-key: ${key}\r\n\r\n`);
    assert.equal(r.status, 200);
  });

  for (const hosts of [['Host: a.example', 'Host: b.example'], ['Host: a.example', 'host: a.example']]) {
    it(`two Host lines (${hosts.join(' / ')}) -> JSON 400`, async () => {
      assertError(await one(keyed('/api/v1/celebrities', ...hosts)), 400, 'BAD_REQUEST');
    });
  }

  it('Expect other than 100-continue -> JSON 417 EXPECTATION_FAILED', async () => {
    assertError(await one(keyed('/api/v1/celebrities', 'Host: x', 'Expect: teapot')), 417, 'EXPECTATION_FAILED');
  });

  it('Expect: 100-continue is met: 100, then the answer', async () => {
    const { responses } = await rawExchange(url, [keyed('/api/v1/celebrities/zoe-martin', 'Host: x', 'Expect: 100-continue')], { expect: 2 });
    assert.deepEqual(responses.map((r) => r.status), [100, 200]);
  });

  it('CONNECT -> JSON 405 METHOD_NOT_ALLOWED with Allow, and the connection closes', async () => {
    const { responses, ended } = await rawExchange(url, ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']);
    assert.equal(responses.length, 1);
    assertError(responses[0]!, 405, 'METHOD_NOT_ALLOWED');
    assert.equal(responses[0]!.headers.get('allow'), 'GET, HEAD');
    assert.equal(ended, 'end');
  });

  it('a request target over 8 KiB -> JSON 414 URI_TOO_LONG, not counted', async () => {
    const before = (await service.gate.usage.get('framing@example.com')).used;
    const r = await one(keyed(`/api/v1/celebrities?search=${'a'.repeat(9000)}`, 'Host: x'));
    assertError(r, 414, 'URI_TOO_LONG');
    assert.equal((await service.gate.usage.get('framing@example.com')).used, before);
  });

  it('a request target longer than the whole header limit -> JSON 414 too, from the parser', async () => {
    assertError(await one(keyed(`/api/v1/celebrities?search=${'a'.repeat(40_000)}`, 'Host: x')), 414, 'URI_TOO_LONG');
  });

  it('a long header with a short target is still a 431', async () => {
    assertError(await one(keyed('/api/v1/celebrities', 'Host: x', `x-big: ${'b'.repeat(40_000)}`)), 431, 'HEADERS_TOO_LARGE');
  });

  const routed: [string, string][] = [
    ['http://localhost/api/v1/celebrities/zoe-martin', 'zoe-martin'],
    ['HTTP://127.0.0.1:1234/api/v1/movies/night-train?x=1', 'night-train'],
    ['/api/v1/celebrities/zoe%2Dmartin', 'zoe-martin'],
    ['/api/v1/celebrities/%7a%6F%65-martin', 'zoe-martin'],
    ['/%61pi/v1/movies/night%2dtrain', 'night-train'],
    ['http://localhost/api/v1/celebrities/bjorn%2Dberg', 'bjorn-berg'],
  ];
  for (const [target, slug] of routed) {
    it(`${target} -> 200 ${slug}`, async () => {
      const r = await one(keyed(target, 'Host: localhost'));
      assert.equal(r.status, 200, r.body);
      assert.equal(JSON.parse(r.body).data.slug, slug);
    });
  }

  it('absolute form with a query: the query is read (limit=1)', async () => {
    const r = await one(keyed('http://localhost/api/v1/celebrities?limit=1', 'Host: localhost'));
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.body).pagination.limit, 1);
    assertMatchesDocument('/api/v1/celebrities', 200, JSON.parse(r.body));
  });

  for (const target of ['/api/v1/celebrities/zoe%2fmartin', '/api/v1/celebrities%2Fzoe-martin', '/api/v1/celebrities/zoe-martin%00', '/api/v1/celebrities/%zz', 'ftp://x/api/v1/celebrities', '*']) {
    it(`${target} -> JSON 404: only unreserved characters are decoded`, async () => {
      assertError(await one(keyed(target, 'Host: localhost').replace('GET *', 'OPTIONS *')), 404, 'NOT_FOUND');
    });
  }
});
