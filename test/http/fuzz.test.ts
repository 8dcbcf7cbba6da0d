// Property tests: fuzzed paths, query strings and header values, sent as raw bytes, never produce a
// 5xx, an unlogged crash or a dead server (issue 4). Seeds are fixed so a failure replays.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fc from 'fast-check';
import { createAccessLog } from '../../src/http/access-log.ts';
import { fromLoopback, Metrics } from '../../src/http/metrics.ts';
import { createLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { createKey, request, tempDir } from '../helpers/serve-harness.ts';

const RUNS = 250;

/** One request as raw latin1 bytes on its own connection; resolves with the status (0: closed without one). */
function send(url: string, head: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
      if (text.includes('\r\n\r\n')) socket.destroy(); // the status line and headers are all we judge
    });
    socket.on('close', () => resolve(/^HTTP\/1\.1 (\d{3}) /.test(text) ? Number(text.slice(9, 12)) : 0));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? undefined : reject(err)));
    socket.setTimeout(5000, () => reject(new Error(`no answer to ${JSON.stringify(head.slice(0, 200))}`)));
    socket.once('connect', () => socket.write(head, 'latin1'));
  });
}

const COLLECTIONS = ['celebrities', 'outfits', 'news', 'movies', 'reviews'];
const segment = fc.oneof(
  fc.constantFrom('api', 'v1', ...COLLECTIONS, 'zoe-martin', 'night-train', '..', '.', '', '__proto__', 'constructor', 'prototype',
    '%2e%2e', '%2F', '%00', '%ff', '%', '%%', '%zz', 'healthz', 'metrics', 'openapi.json', '\u00e9', '?', '#', ';'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }).map((s) => [...s].map((c) => (c.charCodeAt(0) > 0xff ? '\u00ff' : c)).join('')),
);
const path = fc.tuple(fc.boolean(), fc.array(segment, { maxLength: 6 })).map(([api, parts]) => (api ? '/api/v1/' : '/') + parts.join('/'));

const PARAMS = ['page', 'limit', 'sort', 'search', 'featured', 'minRating', 'maxRating', 'status', 'genre', 'celebrity', 'occupation',
  'nationality', 'category', 'brand', '__proto__', 'constructor', 'toString', 'hasOwnProperty', ''];
const value = fc.oneof(
  fc.constantFrom('', '0', '1', '-1', '50', '51', '1.5', '1e3', '0x10', 'NaN', 'Infinity', '-0', 'true', 'false', 'latest', 'popular', '%', '%zz', '%ff', '%00', '+', '&', '='),
  fc.integer().map(String),
  fc.double().map(String),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ maxLength: 300 }).map(encodeURIComponent),
);
const query = fc.array(fc.tuple(fc.constantFrom(...PARAMS), value), { maxLength: 5 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

/** Header values as a client could send them: visible ASCII, tabs, and obs-text bytes. */
const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.constantFrom('https', 'http', 'HTTPS', '', ',', ', ,', '::1', '1.2.3.4, 5.6.7.8', 'cel_', 'cel_' + 'A'.repeat(40)),
).map((v) => v.replace(/[\r\n\0]/g, ' '));
const HEADER_NAMES = ['x-api-key', 'host', 'x-forwarded-proto', 'x-forwarded-for', 'accept', 'connection', 'content-length', 'transfer-encoding', 'expect', 'forwarded'];

describe('fuzzing the HTTP surface', () => {
  let service: Service;
  let url: string;
  let key: string;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  const lines: string[] = [];

  before(async () => {
    tmp = await tempDir('fuzz');
    key = await createKey(tmp.dir, 'fuzz@example.com', 'enterprise');
    // Wired as `serve` wires it: access log and metrics observe every response, so they are fuzzed too.
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    const access = createAccessLog(log, true);
    const metrics = new Metrics({ clock: Date.now, draining: () => false, store: () => service.gate.status() });
    service = await startService({
      data: fixture(), state: tmp.dir, tls: false, trustProxy: true, log,
      metrics: (req) => (fromLoopback(req) ? metrics.render() : null),
      observe: (req, route, status, id, start) => {
        metrics.observe(route, status, start);
        access(req, status, id, start);
      },
    });
    url = service.listeners[0]!.url;
  });
  after(async () => {
    await service.close(0);
    await tmp.remove();
  });

  const check = async (head: string) => {
    const status = await send(url, head);
    // 0 is a connection closed or reset without an answer: as much a failure as a 5xx.
    assert.ok(status >= 100 && status < 500, `${status} for ${JSON.stringify(head.slice(0, 300))}`);
  };

  it('fuzzed paths, with and without a key, never get a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(path, fc.boolean(), fc.constantFrom('GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE', 'get'), async (p, keyed, method) =>
        check(`${method} ${p} HTTP/1.1\r\nHost: x\r\n${keyed ? `x-api-key: ${key}\r\n` : ''}Connection: close\r\n\r\n`),
      ),
      { numRuns: RUNS, seed: 4242 },
    );
  });

  it('fuzzed query strings on every list endpoint never get a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...COLLECTIONS), query, async (collection, q) =>
        check(`GET /api/v1/${collection}?${q} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`),
      ),
      { numRuns: RUNS, seed: 777 },
    );
  });

  it('fuzzed header values never get a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), headerValue), { minLength: 1, maxLength: 4 }), fc.constantFrom('/api/v1/movies', '/healthz', '/metrics', '/x'), async (headers, p) =>
        check(`GET ${p} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}Connection: close\r\n\r\n`),
      ),
      { numRuns: RUNS, seed: 99 },
    );
  });

  it('afterwards the server is alive, logged no failure and never logged the key', async () => {
    assert.equal((await request(url, '/healthz')).status, 200);
    assert.equal((await request(url, '/api/v1/celebrities', { headers: { 'x-api-key': key } })).status, 200);
    assert.ok(lines.length > RUNS, 'the access log saw the traffic');
    assert.deepEqual(lines.filter((l) => l.includes('"level":"error"')), []);
    // Not the key, nor any 10 characters of it: a part narrows the search for the rest.
    const pieces = Array.from({ length: key.length - 9 }, (_, i) => key.slice(i, i + 10));
    assert.deepEqual(lines.filter((l) => pieces.some((p) => l.includes(p))), [], 'no log line holds a part of the key');
  });
});
