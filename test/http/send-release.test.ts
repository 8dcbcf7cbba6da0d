// Issue 20: a body built in a slab (src/data/send-buffer.ts) gives its bytes back once it went whole to
// the socket, so the next body is made in memory still in the CPU's caches; a body still held (a
// pipelined response waiting its turn, a write the kernel did not take at once, an HTTP/2 stream's
// queue) keeps its bytes until it is sent: every answer arrives as it was built.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import zlib from 'node:zlib';
import { after, before, describe, it, test } from 'node:test';
import { releaseSendBuffer, sendBuffer, sendRoomOf, type SendRoom } from '../../src/data/send-buffer.ts';
import { get, parseResponses } from '../helpers/raw-http.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

test('releaseSendBuffer: the last body given back -> the next one is made in its bytes; any other body -> nothing given back', () => {
  const a = sendBuffer(100);
  releaseSendBuffer(a);
  const b = sendBuffer(100);
  assert.equal(b.buffer, a.buffer);
  assert.equal(b.byteOffset, a.byteOffset, 'the last body given back: the next one starts where it did');
  const c = sendBuffer(50);
  const d = sendBuffer(50);
  releaseSendBuffer(c); // not the last one handed out: d follows it
  const e = sendBuffer(50);
  assert.ok(e.buffer !== d.buffer || e.byteOffset >= d.byteOffset + d.length, 'a body that is not the last is not given back');
  releaseSendBuffer(Buffer.alloc(10)); // not from a slab
  releaseSendBuffer(e);
  releaseSendBuffer(e); // twice: the second time it is no longer the last
  const f = sendBuffer(50);
  assert.equal(f.byteOffset, e.byteOffset);
  assert.ok(f.buffer !== d.buffer || f.byteOffset >= d.byteOffset + d.length, 'd keeps its bytes');
});

/** Pages 1-3 of 50 celebrities (the bundled 150), each target new (an ignored `v=`): built on a miss, never from a kept page. */
const targets = (run: string, n: number) => Array.from({ length: n }, (_, i) => `/api/v1/celebrities?limit=50&page=${1 + (i % 3)}&sort=name_asc&v=${run}${i}`);
const PAGES = 3;

// Restarted from the boot cache, the list arenas have a room for bodies after them (send-buffer.ts
// SendRoom): the pages are built there, one at a time, and a body still held when the next is joined
// (pipelined, backed up in the socket, an HTTP/2 stream waiting) keeps its room until it is unreachable.
for (const restart of [false, true]) for (const protocol of ['http1', 'h2'] as const) describe(`bodies built per request over ${protocol}${restart ? ', in the list arena\'s room (a restart from the boot cache)' : ''}`, () => {
  let server: TestServer;
  let key: string;
  let state: string | null = null;
  before(async () => {
    if (restart) {
      state = await mkdtemp(join(tmpdir(), 'send-release-'));
      const first = await startTestServer({ protocol, state });
      await first.service.cacheWritten();
      await first.close();
    }
    server = await startTestServer({ protocol, ...(state === null ? {} : { state }) });
    if (restart) assert.ok(sendRoomOf(server.service.snapshot().collections.celebrities.list.bytes.buffer) !== null, 'read from the boot cache: a room');
    key = await server.account();
  });
  after(async () => {
    await server.close();
    if (state !== null) await rm(state, { recursive: true, force: true });
  });

  it('200 first requests one after another, pages 1-3 in turn -> each the bytes of its page', async () => {
    const expected: string[] = [];
    for (let page = 1; page <= PAGES; page++) expected.push((await server.raw(`/api/v1/celebrities?limit=50&page=${page}&sort=name_asc`, { 'x-api-key': key })).body.toString('latin1'));
    assert.ok(expected.every((b) => JSON.parse(b).data.length === 50));
    for (const [i, path] of targets('a', 200).entries()) {
      const r = await server.raw(path, { 'x-api-key': key });
      assert.equal(r.body.toString('latin1'), expected[i % PAGES], path);
    }
    // Many at once (HTTP/2: streams of one session, answered while earlier ones still wait to be sent).
    const all = await Promise.all(targets('b', 200).map((path) => server.raw(path, { 'x-api-key': key })));
    all.forEach((r, i) => assert.equal(r.body.toString('latin1'), expected[i % PAGES], `request ${i}`));
  });

  it('200 first requests with Accept-Encoding br, then gzip, 50 at a time, pages 1-3 in turn -> each decodes to the bytes of its page (the plain body built in the slab is given back once compressed)', async () => {
    const expected: string[] = [];
    for (let page = 1; page <= PAGES; page++) expected.push((await server.raw(`/api/v1/celebrities?limit=50&page=${page}&sort=name_asc`, { 'x-api-key': key })).body.toString('latin1'));
    for (const encoding of ['br', 'gzip'] as const) {
      const paths = targets(`z${encoding}`, 200);
      for (let at = 0; at < paths.length; at += 50) {
        const all = await Promise.all(paths.slice(at, at + 50).map((path) => server.raw(path, { 'x-api-key': key, 'accept-encoding': encoding })));
        all.forEach((r, i) => {
          assert.equal(r.headers['content-encoding'], encoding);
          const plain = encoding === 'br' ? zlib.brotliDecompressSync(r.body) : zlib.gunzipSync(r.body);
          assert.equal(plain.toString('latin1'), expected[(at + i) % PAGES], `${encoding} request ${at + i}`);
        });
      }
    }
  });

  if (protocol === 'http1') {
    it('1,000 pipelined first requests on one connection read only after 300 ms (responses wait in the socket and in Node) -> each the bytes of its page, in order', async () => {
      const expected: string[] = [];
      for (let page = 1; page <= PAGES; page++) expected.push((await server.raw(`/api/v1/celebrities?limit=50&page=${page}&sort=name_asc`, { 'x-api-key': key })).body.toString('latin1'));
      const requests = targets('c', 1000).map((path, i) => get(path, `x-api-key: ${key}`, ...(i === 999 ? ['Connection: close'] : [])));
      const { port } = new URL(server.url);
      const text = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.pause(); // nothing read: the server's writes back up into its socket and its responses
        socket.on('error', reject);
        socket.on('data', (d: Buffer) => chunks.push(d));
        socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1'))); // after the last response
        socket.once('connect', () => {
          socket.write(requests.join(''));
          setTimeout(() => socket.resume(), 300);
        });
      });
      const responses = parseResponses(text);
      assert.equal(responses.length, 1000);
      assert.ok(text.length > 8 * 1024 * 1024, `${text.length} bytes: more than the socket buffers hold`);
      responses.forEach((r, i) => {
        assert.equal(r.status, 200);
        assert.equal(r.body, expected[i % PAGES], `response ${i}`);
      });
    });
  }
});

/**
 * One HTTP/1.1 request over TLS on `agent`'s keep-alive connections; the body as it came. Sent again
 * once when it went out on a kept connection the server closed meanwhile (idle past its 5 s
 * keep-alive timeout, which a starved test process reaches): Node's documented way (`reusedSocket`).
 */
function overTls(agent: https.Agent, url: string, path: string, headers: Record<string, string>, method = 'GET', again = true): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url + path, { method, headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (again && req.reusedSocket && err.code === 'ECONNRESET') resolve(overTls(agent, url, path, headers, method, false));
      else reject(err);
    });
    req.end();
  });
}

/** The body `room` made last, if not done yet. */
function newest(room: SendRoom): Buffer | null {
  return room.count === 0 ? null : room.bodies[(room.first + room.count - 1) % room.bodies.length]!;
}

// Over TLS a body is not sent yet when `end()` returns (the write's callback runs a turn of the loop
// later), so send() gives it to its response (releaseWhenSent): the room makes its bytes again once that
// response finished, and never before. HTTP/1.1 and HTTP/2 on the one TLS listener.
describe('bodies built in the list arena\'s room over TLS, HTTP/1.1 and HTTP/2 (a restart from the boot cache)', () => {
  let server: TestServer;
  let key: string;
  let state: string;
  let agent: https.Agent;
  const expected: string[] = [];
  const room = () => sendRoomOf(server.service.snapshot().collections.celebrities.list.bytes.buffer)!;
  before(async () => {
    state = await mkdtemp(join(tmpdir(), 'send-release-tls-'));
    const first = await startTestServer({ protocol: 'h2', state });
    await first.service.cacheWritten();
    await first.close();
    server = await startTestServer({ protocol: 'h2', state });
    assert.ok(room() !== null, 'read from the boot cache: a room');
    key = await server.account();
    agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
    for (let page = 1; page <= PAGES; page++) expected.push((await server.raw(`/api/v1/celebrities?limit=50&page=${page}&sort=name_asc`, { 'x-api-key': key })).body.toString('latin1'));
    assert.ok(expected.every((b) => JSON.parse(b).data.length === 50));
  });
  after(async () => {
    agent.destroy();
    await server.close();
    await rm(state, { recursive: true, force: true });
  });

  it('HTTP/1.1: 200 first requests one after another on one connection -> each the bytes of its page, each built in the room (its last body finished before the next join)', async () => {
    let inRoom = 0;
    for (const [i, path] of targets('t', 200).entries()) {
      const r = await overTls(agent, server.url, path, { 'x-api-key': key });
      assert.equal(r.body.toString('latin1'), expected[i % PAGES], path);
      const body = newest(room());
      if (body !== null && body.length === r.body.length) inRoom++;
    }
    assert.equal(inRoom, 200, 'every body made in the room');
  });

  it('HTTP/2: 200 first requests one after another on one session -> each the bytes of its page, each built in the room', async () => {
    let inRoom = 0;
    for (const [i, path] of targets('u', 200).entries()) {
      const r = await server.raw(path, { 'x-api-key': key });
      assert.equal(r.body.toString('latin1'), expected[i % PAGES], path);
      const body = newest(room());
      if (body !== null && body.length === r.body.length) inRoom++;
    }
    assert.equal(inRoom, 200, 'every body made in the room');
  });

  // 100 requests in one write, under a TLS record (16 KiB): HTTP/1.1 pipelining on this listener breaks
  // at the first request that crosses a record boundary (a 400 "could not be parsed", main too; so the
  // plain-HTTP case above sends 1,000). Each response after the first waits in Node for the one before
  // it, whose write's callback runs a turn later: a body given back at end() would be joined over.
  it('HTTP/1.1: 100 pipelined first requests on one connection read only after 300 ms -> each the bytes of its page, in order', async () => {
    const requests = targets('p', 100).map((path, i) => get(path, `x-api-key: ${key}`, ...(i === 99 ? ['Connection: close'] : [])));
    assert.ok(requests.join('').length < 16 * 1024, 'one TLS record');
    const { port } = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: Number(port), ALPNProtocols: ['http/1.1'], rejectUnauthorized: false });
      const chunks: Buffer[] = [];
      socket.pause(); // nothing read: the server's writes back up into its socket and its responses
      socket.on('error', reject);
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.once('secureConnect', () => {
        socket.write(requests.join(''));
        setTimeout(() => socket.resume(), 300);
      });
    });
    const responses = parseResponses(text);
    assert.equal(responses.length, 100);
    responses.forEach((r, i) => {
      assert.equal(r.status, 200);
      assert.equal(r.body, expected[i % PAGES], `response ${i}`);
    });
  });

  it('20 connections of each protocol at once, 40 requests each: GET, HEAD, If-None-Match: * (a 304 after the join), br and gzip, and a client that resets after its first bytes -> every body the bytes of its page', async () => {
    const check = (label: string, i: number, r: { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }, kind: number) => {
      const page = i % PAGES;
      if (kind === 1) return assert.equal(r.body.length, 0, `${label}: HEAD has no body`);
      if (kind === 2) return assert.equal(r.status, 304, label);
      const encoding = r.headers['content-encoding'];
      const plain = encoding === 'br' ? zlib.brotliDecompressSync(r.body) : encoding === 'gzip' ? zlib.gunzipSync(r.body) : r.body;
      assert.equal(plain.toString('latin1'), expected[page], label);
    };
    const headersOf = (kind: number): Record<string, string> => ({
      'x-api-key': key,
      ...(kind === 2 ? { 'if-none-match': '*' } : {}),
      ...(kind === 3 ? { 'accept-encoding': 'br' } : kind === 4 ? { 'accept-encoding': 'gzip' } : {}),
    });
    // A client that asks for 50 pages at once and resets once the first bytes arrive, every 50 ms meanwhile.
    let resetting = true;
    const resets = (async () => {
      const { port } = new URL(server.url);
      while (resetting) {
        await new Promise<void>((resolve) => {
          const socket = tls.connect({ host: '127.0.0.1', port: Number(port), ALPNProtocols: ['http/1.1'], rejectUnauthorized: false });
          socket.on('error', () => resolve());
          socket.on('close', () => resolve()); // closed before any byte (a drain): no hang
          socket.once('data', () => {
            socket.destroy();
            resolve();
          });
          socket.once('secureConnect', () => socket.write(targets(`r${Math.random()}`, 50).map((path) => get(path, `x-api-key: ${key}`)).join('')));
        });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const clients = Array.from({ length: 20 }, async (_, c) => {
      const own = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
      const paths = targets(`m${c}-`, 40);
      for (const [i, path] of paths.entries()) {
        const kind = (i + c) % 5; // 0 GET, 1 HEAD, 2 a 304, 3 br, 4 gzip
        const method = kind === 1 ? 'HEAD' : 'GET';
        const one = await overTls(own, server.url, path, headersOf(kind), method);
        check(`HTTP/1.1 client ${c} request ${i}`, i, one, kind);
        const two = await server.raw(path.replace('&v=', '&v=h2'), headersOf(kind), method);
        check(`HTTP/2 client ${c} request ${i}`, i, two, kind);
      }
      own.destroy();
    });
    try {
      await Promise.all(clients);
    } finally {
      resetting = false;
      await resets;
    }
  });
});
