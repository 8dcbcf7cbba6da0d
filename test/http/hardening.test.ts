// Hardening: a slowloris client gets a JSON 408 at headersTimeout, oversized headers a JSON
// 431, each with a request id, and traversal, prototype and asterisk-form targets JSON 404s (after the
// key check, CONTRACT 2). The absolute form is served: test/http/framing.test.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startService, type Service } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { createKey, tempDir } from '../helpers/serve-harness.ts';

const HEADERS_TIMEOUT_MS = 1000;

/** Sends raw bytes and collects everything until the server closes or `ms` passes. */
function raw(url: string, chunks: string[], o: { gapMs?: number; ms?: number } = {}): Promise<{ text: string; ms: number; sent: number }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    let i = 0;
    const done = () => resolve({ text, ms: Date.now() - started, sent: i });
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
      // One response is enough; keep-alive would otherwise hold the socket open.
      const m = /\r\ncontent-length: (\d+)\r\n[\s\S]*?\r\n\r\n/i.exec(text);
      if (m && text.length >= m.index + m[0].length + Number(m[1])) socket.destroy();
    });
    socket.on('close', done);
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? done() : reject(err)));
    socket.setTimeout(o.ms ?? 5000, () => socket.destroy());
    const next = () => {
      if (i < chunks.length && !socket.destroyed) socket.write(chunks[i++]!, () => setTimeout(next, o.gapMs ?? 0));
    };
    socket.once('connect', next);
  });
}

function parse(text: string): { status: number; headers: string; body: string } {
  const end = text.indexOf('\r\n\r\n');
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, end), body: text.slice(end + 4) };
}

describe('hardening', () => {
  let service: Service;
  let url: string;
  let key: string;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  before(async () => {
    tmp = await tempDir('hardening');
    key = await createKey(tmp.dir, 'hard@example.com');
    service = await startService({
      data: fixture(),
      state: tmp.dir,
      tls: false,
      // requestTimeout far beyond: a 408 before the trickle ends can only be headersTimeout's.
      limits: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 120_000, connectionsCheckingIntervalMs: 200 },
    });
    url = service.listeners[0]!.url;
  });
  after(async () => {
    await service.close(0);
    await tmp.remove();
  });

  it('a client that trickles its headers gets a JSON 408 once headersTimeout has passed, while it is still trickling', async () => {
    // One header line every 300 ms for 30 s, never the blank line that ends them: bytes keep coming, so
    // only the headers deadline can end it (no fixed bound on how late: that would fail a busy machine).
    const trickle = ['GET /api/v1/celebrities HTTP/1.1\r\n', ...Array.from({ length: 100 }, (_, i) => `x-slow-${i}: 1\r\n`)];
    const { text, ms, sent } = await raw(url, trickle, { gapMs: 300, ms: 60_000 });
    const reply = parse(text);
    assert.equal(reply.status, 408, text);
    assert.ok(ms >= HEADERS_TIMEOUT_MS, `408 after ${ms} ms, not before headersTimeout`);
    assert.ok(sent < trickle.length, `the 408 came while the client was still sending (${sent} of ${trickle.length} lines)`);
    assert.match(reply.headers, /content-type: application\/json; charset=utf-8/i);
    assert.match(reply.headers, /\r\nx-request-id: [0-9a-f]{8}-[0-9a-z]+\r\n/i);
    assert.equal(JSON.parse(reply.body).error, 'REQUEST_TIMEOUT');
  });

  it('a header section over maxHeaderSize gets a JSON 431', async () => {
    const { text } = await raw(url, [`GET /api/v1/celebrities HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    const reply = parse(text);
    assert.equal(reply.status, 431, text.slice(0, 200));
    assert.match(reply.headers, /\r\nx-request-id: [0-9a-f]{8}-[0-9a-z]+\r\n/i);
    assert.deepEqual(JSON.parse(reply.body), { success: false, error: 'HEADERS_TOO_LARGE', message: 'The request headers are too large' });
  });

  it('a malformed request line gets a JSON 400', async () => {
    const { text } = await raw(url, ['GARBAGE\r\n\r\n']);
    assert.equal(parse(text).status, 400);
    assert.equal(JSON.parse(parse(text).body).error, 'BAD_REQUEST');
  });

  const paths = [
    '/api/v1/celebrities/..',
    '/api/v1/celebrities/../outfits',
    '/api/v1/celebrities/%2e%2e',
    '/api/v1/celebrities/%2E%2E/%2E%2E/etc/passwd',
    '/api/v1/celebrities/..%2f..%2fetc%2fpasswd',
    '/api/v1/celebrities/__proto__',
    '/api/v1/celebrities/constructor',
    '/api/v1/celebrities/prototype',
    '/api/v1/celebrities/hasOwnProperty',
    '/api/v1/__proto__',
    '/api/v1/constructor/zoe-martin',
    '/api/v1/celebrities/zoe-martin/',
    '/api/v1/celebrities//zoe-martin',
    '/api/v1/celebrities/ZOE-MARTIN',
    '/api/v1/celebrities/zoe-martin%00',
    '/api/v1/./celebrities',
  ];
  for (const path of paths) {
    it(`GET ${path} -> 401 without a key, JSON 404 with one`, async () => {
      const anonymous = parse((await raw(url, [`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`])).text);
      assert.equal(anonymous.status, 401);
      const keyed = parse((await raw(url, [`GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`])).text);
      assert.equal(keyed.status, 404, keyed.body);
      assert.match(keyed.headers, /content-type: application\/json/i);
      assert.equal(JSON.parse(keyed.body).error, 'NOT_FOUND');
    });
  }

  for (const [method, target] of [['OPTIONS', '*'], ['GET', 'ftp://x/api/v1/celebrities']]) {
    it(`${method} ${target} -> JSON 404`, async () => {
      const reply = parse((await raw(url, [`${method} ${target} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`])).text);
      assert.equal(reply.status, 404);
      assert.equal(JSON.parse(reply.body).error, 'NOT_FOUND');
    });
  }

  it('the server still answers after all of the above', async () => {
    const reply = parse((await raw(url, [`GET /api/v1/celebrities/zoe-martin HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`])).text);
    assert.equal(reply.status, 200);
    assert.equal(JSON.parse(reply.body).data.slug, 'zoe-martin');
  });
});
