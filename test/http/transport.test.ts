// Transport rules of CONTRACT 5: HTTPS with the self-signed certificate (client pinned with `ca`),
// HSTS over HTTPS only, the plain listener's 403 for /api/ and 308 for the rest, and --trust-proxy.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAccessLog } from '../../src/http/access-log.ts';
import type { Observer } from '../../src/http/app.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { createKey, request, tempDir } from '../helpers/serve-harness.ts';
import { spawnServe } from '../helpers/serve-process.ts';

function capture(): { log: Logger; lines: string[]; observe: Observer } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  const access = createAccessLog(log, false); // as serve wires it for the service below, started without trustProxy
  return { log, lines, observe: (req, _route, status, id, start) => access(req, status, id, start) };
}

describe('HTTPS with the self-signed certificate and a plain --http-port listener', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let service: Service;
  let proxied: Service;
  let insecure: Service;
  let ca: Buffer;
  let key: string;
  const logs = capture();
  let httpsUrl: string;
  let plainUrl: string;

  before(async () => {
    tmp = await tempDir('transport');
    const state = join(tmp.dir, 'state');
    key = await createKey(state, 'tls@example.com');
    service = await startService({ data: fixture(), state, tls: 'self-signed', httpPort: 0, log: logs.log, observe: logs.observe });
    ca = await readFile(join(state, 'tls', 'cert.pem'));
    [httpsUrl, plainUrl] = service.listeners.map((l) => l.url) as [string, string];
    const proxyState = join(tmp.dir, 'proxy-state');
    await createKey(proxyState, 'proxy@example.com');
    proxied = await startService({ data: fixture(), state: proxyState, tls: 'self-signed', httpPort: 0, trustProxy: true });
    insecure = await startService({ data: fixture(), state: 'memory', tls: false });
  });
  after(async () => {
    await Promise.all([service.close(0), proxied.close(0), insecure.close(0)]);
    await tmp.remove();
  });

  it('listens HTTPS first, then plain HTTP', () => {
    assert.match(httpsUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(plainUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a client pinned to the certificate gets 200 with HSTS, nosniff, private no-cache and a request id, and no CORS', async () => {
    const r = await request(httpsUrl, '/api/v1/celebrities', { ca, headers: { 'x-api-key': key } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['cache-control'], 'private, no-cache'); // tagged: kept and revalidated (CONTRACT 11)
    assert.match(String(r.headers['x-request-id']), /^[0-9a-f]{8}-[0-9a-z]+$/);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
  });

  it('plain HTTP sent to the HTTPS port gets a plain JSON 400 that says to use https://', async () => {
    const { responses, ended } = await rawExchange(httpsUrl.replace('https:', 'http:'), [`GET /api/v1/celebrities HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${key}\r\n\r\n`]);
    assert.equal(responses.length, 1);
    const [r] = responses;
    assert.equal(r!.status, 400);
    assert.equal(r!.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.match(r!.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-z]+$/);
    assert.equal(r!.headers.get('strict-transport-security'), undefined, 'HSTS means nothing over plain HTTP');
    const body = JSON.parse(r!.body);
    assert.equal(body.error, 'BAD_REQUEST');
    assert.match(body.message, /https:\/\//);
    assert.match(body.message, /revoke/);
    assert.equal(ended, 'end');
  });

  it('a client that does not trust the certificate is refused', async () => {
    await assert.rejects(request(httpsUrl, '/healthz'), /self-signed|unable to verify|certificate/i);
  });

  it('/api/ over plain HTTP -> 403 HTTPS_REQUIRED saying the key is leaked, without HSTS; the key is never logged', async () => {
    // Pasted into a query as it is, percent-encoded, or without its prefix: redacted all the same.
    const pasted = [`/api/v1/celebrities?api_key=${key}`, `/api/v1/celebrities?search=c%65l_${key.slice(4)}`, `/api/v1/celebrities?q=${key.slice(4)}`, `/api/v1/news/${encodeURIComponent(key)}`];
    for (const path of ['/api/v1/celebrities', ...pasted, '/api/v1/openapi.json', '/api/nothing']) {
      const r = await request(plainUrl, path, { headers: { 'x-api-key': key } });
      assert.equal(r.status, 403, path);
      const body = JSON.parse(r.body);
      assert.equal(body.error, 'HTTPS_REQUIRED');
      assert.match(body.message, /leaked/);
      assert.equal(r.headers['strict-transport-security'], undefined);
    }
    assert.ok(logs.lines.some((l) => l.includes('"status":403')), 'the refusals are in the access log');
    assert.ok(!logs.lines.some((l) => l.includes(key)), 'no log line holds the key');
    assert.ok(!logs.lines.some((l) => l.includes(key.slice(4, 20))), 'not even a part of it');
  });

  const redirects: [string, Record<string, string>, (port: string) => string][] = [
    ['/', {}, (p) => `https://127.0.0.1:${p}/`],
    ['/docs/page?x=1&y=%20', {}, (p) => `https://127.0.0.1:${p}/docs/page?x=1&y=%20`],
    ['/', { host: 'api.example.com:80' }, (p) => `https://api.example.com:${p}/`],
    ['/', { host: '[::1]:8080' }, (p) => `https://[::1]:${p}/`],
    ['/x', { host: 'evil.example/steal?' }, (p) => `https://localhost:${p}/x`],
    ['/x', { host: 'a b' }, (p) => `https://localhost:${p}/x`],
  ];
  for (const [path, headers, expected] of redirects) {
    it(`plain GET ${path} Host ${headers.host ?? '(default)'} -> 308 to the HTTPS origin`, async () => {
      const r = await request(plainUrl, path, { headers });
      assert.equal(r.status, 308);
      assert.equal(r.headers.location, expected(new URL(httpsUrl).port));
      assert.equal(r.headers['strict-transport-security'], undefined);
    });
  }

  it('without --trust-proxy, X-Forwarded-Proto: https changes nothing', async () => {
    const r = await request(plainUrl, '/api/v1/celebrities', { headers: { 'x-api-key': key, 'x-forwarded-proto': 'https' } });
    assert.equal(r.status, 403);
  });

  it('with --trust-proxy, X-Forwarded-Proto: https counts as HTTPS (key checked, HSTS sent); other values do not', async () => {
    const plain = proxied.listeners[1]!.url;
    const viaProxy = await request(plain, '/api/v1/celebrities', { headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(viaProxy.status, 401);
    assert.equal(viaProxy.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
    const http = await request(plain, '/api/v1/celebrities', { headers: { 'x-forwarded-proto': 'http' } });
    assert.equal(http.status, 403);
  });

  it('--insecure-http serves /api/ over plain HTTP, without HSTS', async () => {
    const r = await request(insecure.listeners[0]!.url, '/api/v1/celebrities');
    assert.equal(r.status, 401);
    assert.equal(r.headers['strict-transport-security'], undefined);
  });
});

// The access log is wired by `serve` (src/cli/serve.ts), not by startService: only the command shows
// whether --trust-proxy reaches it.
describe('serve: the access log and --trust-proxy', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    tmp = await tempDir('trust-proxy');
  });
  after(() => tmp.remove());

  const cases: [string, string[], string][] = [
    ['with --trust-proxy -> the entry the proxy appended, not the one the client wrote', ['--trust-proxy'], '203.0.113.9'],
    ['without it -> the peer, whatever the header says', [], '127.0.0.1'],
  ];
  for (const [name, flags, client] of cases) {
    it(name, async () => {
      const serve = await spawnServe(['--insecure-http', '--port', '0', '--state', join(tmp.dir, `state${flags.length}`), ...flags]);
      try {
        const r = await request(serve.url, '/healthz', { headers: { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' } });
        assert.equal(r.status, 200);
        await serve.waitForLog('"path":"/healthz"');
      } finally {
        await serve.stop();
      }
      const line = serve.stderr().split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.msg === 'request' && e.path === '/healthz');
      assert.equal(line?.client, client, serve.stderr());
    });
  }
});
