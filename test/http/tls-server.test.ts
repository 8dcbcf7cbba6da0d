// The TLS listener speaks HTTP/2 and HTTP/1.1 (ALPN), holds both to the hardening limits, and drains
// HTTP/2 with a GOAWAY: no connection-specific header ever goes out on HTTP/2 (RFC 9113 8.2.2).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';
import { startService, type Service } from '../../src/service.ts';
import { resolveLimits, type Limits } from '../../src/http/server.ts';
import { secureServer } from '../../src/http/tls-server.ts';
import { fixture } from '../helpers/fixture.ts';
import { assertMatchesDocument } from '../helpers/openapi-validator.ts';
import { parseResponses } from '../helpers/raw-http.ts';

const certificate = createSelfSignedCertificate();
const CONNECTION_SPECIFIC = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

interface Reply {
  readonly status: number;
  readonly headers: http2.IncomingHttpHeaders;
  readonly body: string;
}

function request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: true });
    let head: http2.IncomingHttpHeaders = {};
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (head = h));
    stream.on('data', (d: string) => (body += d));
    stream.on('end', () => resolve({ status: Number(head[':status']), headers: head, body }));
    stream.on('error', reject);
  });
}

async function startTls(limits: Partial<Limits> = {}): Promise<{ service: Service; url: string; key: string }> {
  const service = await startService({ data: fixture(), state: 'memory', tls: certificate, limits });
  const key = (await service.gate.accounts.create({ email: 'tls@example.com', plan: 'pro', password: 'correct horse battery' })).key;
  return { service, url: service.listeners[0]!.url, key };
}

const connect = (url: string) => {
  const session = http2.connect(url, { ca: certificate.cert });
  session.on('error', () => {});
  return session;
};
const goaway = (session: http2.ClientHttp2Session) => new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));

describe('the TLS listener', () => {
  let service: Service;
  let url: string;
  let key: string;
  before(async () => ({ service, url, key } = await startTls()));
  after(() => service.close(0));

  for (const [offered, chosen] of [[['h2', 'http/1.1'], 'h2'], [['http/1.1'], 'http/1.1'], [['h2'], 'h2']] as const) {
    it(`ALPN ${offered.join(', ')} -> ${chosen}`, async () => {
      const socket = tls.connect({ host: '127.0.0.1', port: Number(new URL(url).port), ca: certificate.cert, servername: 'localhost', ALPNProtocols: [...offered] });
      await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      assert.equal(socket.alpnProtocol, chosen);
      socket.destroy();
    });
  }

  it('turns Nagle off on the sockets it accepts, as node:https does (http2 alone leaves it on)', () => {
    const server = secureServer(resolveLimits(), certificate);
    assert.equal((server as unknown as { noDelay: boolean }).noDelay, true);
    server.close();
    assert.equal((https.createServer() as unknown as { noDelay: boolean }).noDelay, true, 'node:https sets it: the baseline this matches');
  });

  it('HTTP/1.1 without ALPN (node:https) is served as before', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`${url}/api/v1/movies/night-train`, { ca: certificate.cert, headers: { 'x-api-key': key } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
        .on('error', reject);
    });
    assert.equal(status, 200);
  });

  it('over HTTP/2: 200 with HSTS and a request id, and no connection-specific header', async () => {
    const session = connect(url);
    try {
      for (const path of ['/api/v1/movies/night-train', '/api/v1/celebrities', '/api/v1/nope', '/healthz']) {
        const r = await request(session, { ':path': path, 'x-api-key': key });
        assert.equal(r.status, path === '/api/v1/nope' ? 404 : 200, path);
        assert.equal(r.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
        assert.match(String(r.headers['x-request-id']), /^[0-9a-f]{8}-[0-9a-z]+$/);
        for (const name of CONNECTION_SPECIFIC) assert.equal(r.headers[name], undefined, `${path}: ${name}`);
        if (path.startsWith('/api/')) assertMatchesDocument(path, r.status, JSON.parse(r.body));
      }
    } finally {
      session.close();
    }
  });

  it('over HTTP/2: CONNECT is a JSON 405 with Allow, an unknown Expect a JSON 417', async () => {
    const session = connect(url);
    try {
      const connectReply = await request(session, { ':method': 'CONNECT', ':authority': 'example.com:443' });
      assert.equal(connectReply.status, 405);
      assert.equal(connectReply.headers.allow, 'GET, HEAD');
      assert.equal(JSON.parse(connectReply.body).error, 'METHOD_NOT_ALLOWED');
      const expect = await request(session, { ':path': '/api/v1/celebrities', 'x-api-key': key, expect: 'teapot' });
      assert.equal(expect.status, 417);
      assert.equal(JSON.parse(expect.body).error, 'EXPECTATION_FAILED');
    } finally {
      session.close();
    }
  });

  it('over HTTP/2: a header list over the limit resets its stream, and the session keeps serving', async () => {
    const session = connect(url);
    try {
      // First a normal one: the limit holds once the client has acknowledged the server's SETTINGS.
      assert.equal((await request(session, { ':path': '/api/v1/movies/night-train', 'x-api-key': key })).status, 200);
      await assert.rejects(request(session, { ':path': '/api/v1/celebrities', 'x-api-key': key, 'x-big': 'a'.repeat(20_000) }));
      assert.equal((await request(session, { ':path': '/api/v1/movies/night-train', 'x-api-key': key })).status, 200);
    } finally {
      session.close();
    }
  });

  it('TLS 1.1 client -> refused by the server with a protocol_version alert', async () => {
    // SECLEVEL=0 lets this client really offer TLS 1.0/1.1 (OpenSSL 3 refuses them by default), so
    // the refusal seen here is the server's alert 70, not a client that never tried.
    const socket = tls.connect({
      host: '127.0.0.1', port: Number(new URL(url).port), ca: certificate.cert, servername: 'localhost',
      minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0',
    });
    const outcome = await new Promise<string>((resolve) => {
      socket.once('secureConnect', () => resolve(`connected over ${socket.getProtocol()}`));
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(String(error.code)));
    });
    socket.destroy();
    assert.equal(outcome, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  it('HTTP/1.1 on the TLS port keeps its limits: a header section over 16 KiB is a JSON 431', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: Number(new URL(url).port), ca: certificate.cert, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.write(`GET /api/v1/celebrities HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await new Promise((resolve) => socket.once('close', resolve));
    const [reply] = parseResponses(text);
    assert.equal(reply?.status, 431);
    assert.equal(JSON.parse(reply!.body).error, 'HEADERS_TOO_LARGE');
  });
});

describe('HTTP/2 sessions end with a GOAWAY', () => {
  it('while draining: the session is told to go away, and close() does not wait for the deadline', async () => {
    const { service, url, key } = await startTls();
    const session = connect(url);
    assert.equal((await request(session, { ':path': '/api/v1/movies/night-train', 'x-api-key': key })).status, 200);
    const told = goaway(session);
    const started = Date.now();
    // A deadline no busy machine reaches by itself: a close that waited for it would take 60 s.
    await service.close(60_000);
    assert.equal(await told, http2.constants.NGHTTP2_NO_ERROR);
    assert.ok(Date.now() - started < 60_000, 'closed once the session had gone, before the deadline');
    session.destroy();
  });

  it('HTTP/1.1 beside it drains as on the plain port: a request on an open connection gets Connection: close', async () => {
    const { service, url, key } = await startTls();
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: certificate.cert });
    const get = () =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        https
          .get(`${url}/api/v1/movies/night-train`, { agent, headers: { 'x-api-key': key } }, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
          })
          .on('error', reject);
      });
    assert.deepEqual(await get(), { status: 200, connection: 'keep-alive' });
    const closing = service.close(10_000);
    assert.deepEqual(await get(), { status: 200, connection: 'close' });
    await closing;
    agent.destroy();
  });

  it('after maxRequestsPerSocket streams, as HTTP/1.1 closes the socket', async () => {
    const { service, url, key } = await startTls({ maxRequestsPerSocket: 3 });
    const session = connect(url);
    try {
      const told = goaway(session);
      for (let i = 0; i < 3; i++) assert.equal((await request(session, { ':path': '/api/v1/movies/night-train', 'x-api-key': key })).status, 200);
      assert.equal(await told, http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.destroy();
      await service.close(0);
    }
  });

  it('when idle for keepAliveTimeout', async () => {
    const { service, url } = await startTls({ keepAliveTimeoutMs: 200 });
    const session = connect(url);
    try {
      assert.equal(await goaway(session), http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.destroy();
      await service.close(0);
    }
  });

  it('when busy but opening no stream for requestTimeout (a client trickling a header block looks so)', async () => {
    const { service, url } = await startTls({ requestTimeoutMs: 400, connectionsCheckingIntervalMs: 50 });
    const session = connect(url);
    const pinging = setInterval(() => session.ping(() => {}), 50);
    try {
      assert.equal(await goaway(session), http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      clearInterval(pinging);
      session.destroy();
      await service.close(0);
    }
  });
});
