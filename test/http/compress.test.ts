// Compression (CONTRACT 5, issue 14): Accept-Encoding negotiation with q-values, br and gzip bodies that
// decompress to exactly the identity body with an exact Content-Length, Vary, the first pages made
// ahead with the best settings, details kept compressed but never past their day.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { accepts, compressNow, parseAcceptEncoding } from '../../src/http/compress.ts';
import { startTestServer, type RawReply, type TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/serve-harness.ts';
import { EVENTUALLY_MS } from '../helpers/deadlines.ts';
import { fixture } from '../helpers/fixture.ts';

describe('parseAcceptEncoding', () => {
  const cases: [string, string][] = [
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'either'],
    ['gzip, deflate, br, zstd', 'either'],
    ['br;q=1.0, gzip;q=0.8, *;q=0.1', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['BR;Q=0.9, GZIP;q=0.3', 'br'],
    ['x-gzip', 'gzip'],
    ['deflate', 'identity'],
    ['identity', 'identity'],
    ['*', 'either'],
    ['*;q=0', 'identity'],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['gzip;q=2', 'identity'],
    ['gzip;q=abc, br', 'br'],
    ['gzip ; q=0.5 , br ; q=0.500', 'either'],
    [',,', 'identity'],
  ];
  for (const [header, expected] of cases) it(`${JSON.stringify(header)} -> ${expected}`, () => assert.equal(parseAcceptEncoding(header), expected));
});

const decode = (r: RawReply): Buffer =>
  r.headers['content-encoding'] === 'br' ? zlib.brotliDecompressSync(r.body) : r.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(r.body) : r.body;

describe('accepts (the last value and each distinct one parsed once)', () => {
  it('answers each value as parseAcceptEncoding does, asked again, in turn and as new strings', () => {
    const values = ['gzip', 'br', 'gzip, deflate, br', 'deflate', 'br;q=0, gzip', '*;q=0', 'gzip;q=1, br;q=0.5'];
    for (const a of values) {
      for (const b of values) {
        for (const v of [a, b, b, a, `${a} `.trimEnd()]) assert.equal(accepts(v), parseAcceptEncoding(v), `${v} after ${a}, ${b}`);
      }
    }
    assert.equal(accepts(undefined), 'identity');
    assert.equal(accepts(''), 'identity');
  });
});

describe('compressNow (one compressor per format, reused by every request)', () => {
  const BR1 = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } };
  const json = (n: number) => Buffer.from(JSON.stringify({ data: Array.from({ length: n }, (_, i) => ({ i, name: `name ${(i * 7919) % 1000}` })) }));
  // Random bytes do not compress: the output is larger than the body (the scratch room's edge).
  let seed = 7;
  const noise = (n: number) => Buffer.from(Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24)));
  const bodies = [Buffer.alloc(0), Buffer.from('x'), json(1), json(30), noise(3000), json(3000), noise(70_000), json(40_000)];

  it('the very bytes of the public API, body after body (the compressor made fresh between them), each in an ArrayBuffer of its own size', () => {
    for (let round = 0; round < 2; round++) {
      for (const body of bodies) {
        const br = compressNow(body, 'br');
        const gzip = compressNow(body, 'gzip');
        assert.deepEqual(br, zlib.brotliCompressSync(body, BR1), `br, ${body.length} bytes`);
        assert.deepEqual(gzip, zlib.gzipSync(body, { level: 1 }), `gzip, ${body.length} bytes`);
        assert.equal(br.buffer.byteLength, br.length);
        assert.equal(gzip.buffer.byteLength, gzip.length);
      }
    }
  });

  it('a body past the limit of the reused compressor (1 MiB) is compressed all the same', () => {
    const big = json(60_000);
    assert.ok(big.length > 1024 * 1024);
    assert.deepEqual(zlib.gunzipSync(compressNow(big, 'gzip')), big);
    assert.deepEqual(zlib.brotliDecompressSync(compressNow(big, 'br')), big);
    assert.deepEqual(compressNow(json(30), 'br'), zlib.brotliCompressSync(json(30), BR1), 'and the next body by the reused one');
  });
});

describe('compressed responses', () => {
  let server: TestServer;
  let key: string;
  let now = Date.parse('2026-03-14T12:00:00.000Z');
  // Enough records that a first page is well over the threshold.
  const data = fixture();
  for (let i = 0; i < 30; i++) data.celebrities.push({ _id: `x${i}`, slug: `extra-${i}`, name: `Extra Person ${i}`, createdAt: '2024-01-01T00:00:00Z', introduction: 'Some words '.repeat(20) });
  // The newest record (first on the default page), with a birthday in the test and a detail over 1 KiB.
  // News fills a first page over 1 KiB too, and holds nothing that changes with the day.
  for (let i = 0; i < 20; i++) data.news.push({ ...data.news[0]!, _id: `nx${i}`, slug: `news-${i}`, title: `A headline of some length, number ${i}` });
  data.celebrities.push({ _id: 'b1', slug: 'birthday-person', name: 'Birthday Person', born: '2001-03-15', createdAt: '2026-01-01T00:00:00Z', introduction: 'Born in March. '.repeat(80) });

  before(async () => {
    server = await startTestServer({ data, clock: () => now });
    key = await server.account();
  });
  after(() => server.close());

  const get = (path: string, acceptEncoding?: string, method = 'GET') =>
    server.raw(path, { 'x-api-key': key, ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }) }, method);

  for (const path of ['/api/v1/celebrities', '/api/v1/celebrities?limit=30&sort=name_asc', '/api/v1/celebrities/birthday-person', '/api/v1/openapi.json']) {
    for (const encoding of ['gzip', 'br']) {
      it(`${path} with Accept-Encoding ${encoding}: ${encoding}, exact Content-Length, the identity body once decoded`, async () => {
        const plain = await get(path);
        const packed = await get(path, encoding);
        assert.equal(plain.status, 200);
        assert.equal(plain.headers['content-encoding'], undefined);
        assert.equal(packed.headers['content-encoding'], encoding);
        assert.equal(Number(packed.headers['content-length']), packed.body.length);
        assert.ok(packed.body.length < plain.body.length, `${packed.body.length} < ${plain.body.length}`);
        assert.deepEqual(decode(packed), plain.body);
        for (const r of [plain, packed]) assert.match(String(r.headers.vary), /Accept-Encoding/);
        if (server.protocol === 'h2') for (const r of [plain, packed]) assert.equal(r.headers.connection, undefined);
      });
    }
  }

  it('q-values choose: gzip;q=1, br;q=0.5 gets gzip; identity and *;q=0 get the body as it is', async () => {
    assert.equal((await get('/api/v1/celebrities', 'gzip;q=1, br;q=0.5')).headers['content-encoding'], 'gzip');
    assert.equal((await get('/api/v1/celebrities', 'br;q=1, gzip;q=0.5')).headers['content-encoding'], 'br');
    for (const ae of ['identity', '*;q=0', 'deflate', 'br;q=0, gzip;q=0']) assert.equal((await get('/api/v1/celebrities', ae)).headers['content-encoding'], undefined, ae);
  });

  it('a tie goes to br, for a body made ahead and for one made per request (its quickest setting is the cheaper)', async () => {
    assert.equal((await get('/api/v1/celebrities', 'gzip, br')).headers['content-encoding'], 'br');
    assert.equal((await get('/api/v1/celebrities?limit=30', 'gzip, br')).headers['content-encoding'], 'br');
  });

  it('a body made per request is compressed with the quickest setting of each format: brotli 1, gzip 1 (issue 20)', async () => {
    const path = '/api/v1/celebrities?limit=30&sort=name_desc';
    const plain = await get(path);
    const br = zlib.brotliCompressSync(plain.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } });
    assert.deepEqual((await get(path, 'br')).body, br);
    assert.deepEqual((await get(path, 'gzip')).body, zlib.gzipSync(plain.body, { level: 1 }));
  });

  it('bodies under 1 KiB (errors, small records) are not compressed', async () => {
    const small = await get('/api/v1/movies/night-train', 'gzip, br');
    assert.equal(small.status, 200);
    assert.ok(small.body.length < 1024);
    assert.equal(small.headers['content-encoding'], undefined);
    const error = await get('/api/v1/celebrities?page=0', 'gzip, br');
    assert.equal(error.status, 400);
    assert.equal(error.headers['content-encoding'], undefined);
  });

  it('HEAD: the Content-Length and Content-Encoding GET would send, no body', async () => {
    const packed = await get('/api/v1/celebrities', 'br');
    const head = await get('/api/v1/celebrities', 'br', 'HEAD');
    assert.equal(head.headers['content-length'], packed.headers['content-length']);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.body.length, 0);
  });

  it('the first pages are compressed ahead with the best settings', async () => {
    const plain = await get('/api/v1/celebrities?sort=name_desc');
    const best = zlib.brotliCompressSync(plain.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } });
    await eventually(async () => (await get('/api/v1/celebrities?sort=name_desc', 'br')).body.equals(best), EVENTUALLY_MS, 'the best brotli of the first page');
  });

  it('a compressed 200 has a tag of its own; it revalidates while the request accepts that coding', async () => {
    const at = (path: string, headers: Record<string, string>) => server.raw(path, { 'x-api-key': key, ...headers });
    for (const path of ['/api/v1/celebrities?limit=30&sort=name_asc', '/api/v1/openapi.json']) {
      const plain = (await get(path)).headers.etag!;
      const br = (await get(path, 'br')).headers.etag!;
      const gzip = (await get(path, 'gzip')).headers.etag!;
      assert.deepEqual([br, gzip], [plain.replace(/"$/, '-br"'), plain.replace(/"$/, '-gzip"')], path);
      const held = await at(path, { 'accept-encoding': 'br', 'if-none-match': br });
      assert.equal(held.status, 304, path);
      assert.equal(held.headers.etag, br, 'the 304 names what the client holds');
      assert.equal((await at(path, { 'accept-encoding': 'gzip', 'if-none-match': br })).status, 200, 'a br tag is not the gzip body');
      assert.equal((await at(path, { 'if-none-match': gzip })).status, 200, 'nor the identity body');
      assert.equal((await at(path, { 'accept-encoding': 'gzip, br', 'if-none-match': plain })).status, 304, 'the identity tag stays good');
    }
  });

  it('a new day keeps the best-compressed pages that do not change with it, and makes those that do again', async () => {
    const best = (body: Buffer) => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } });
    const news = best((await get('/api/v1/news')).body);
    await eventually(async () => (await get('/api/v1/news', 'br')).body.equals(news), EVENTUALLY_MS, 'the best brotli of the news page');
    const day = now;
    now += 86_400_000;
    try {
      assert.ok((await get('/api/v1/news', 'br')).body.equals(news), 'kept across midnight: nothing in it changed');
      const celebrities = best((await get('/api/v1/celebrities?sort=name_desc')).body);
      await eventually(async () => (await get('/api/v1/celebrities?sort=name_desc', 'br')).body.equals(celebrities), EVENTUALLY_MS, 'the best brotli of the new day');
    } finally {
      now = day;
    }
  });

  it('kept bodies follow the day: age changes at the birthday in a detail and in a first page', async () => {
    const detailAge = async (encoding: string) => JSON.parse(decode(await get('/api/v1/celebrities/birthday-person', encoding)).toString()).data.age as number;
    const pageAge = async (encoding: string) => JSON.parse(decode(await get('/api/v1/celebrities', encoding)).toString()).data[0].age as number;
    assert.equal((await get('/api/v1/celebrities/birthday-person', 'gzip')).headers['content-encoding'], 'gzip');
    assert.deepEqual([await detailAge('gzip'), await detailAge('gzip'), await detailAge('br'), await pageAge('br'), await pageAge('gzip')], [24, 24, 24, 24, 24]);
    now = Date.parse('2026-03-15T12:00:00.000Z');
    assert.deepEqual([await detailAge('gzip'), await detailAge('br'), await detailAge('identity'), await pageAge('br'), await pageAge('gzip')], [25, 25, 25, 25, 25]);
  });
});

describe('answers compressed per request and kept', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer(); // the bundled data
    key = await server.account();
  });
  after(() => server.close());

  it('two targets whose tags collide each get their own answer (kept by the whole target, not the tag)', async () => {
    // The tag names the target by a 32-bit FNV-1a hash: these two have the same one (found by search
    // over 232,866 news targets), so the same tag. The cache of compressed answers was keyed by the
    // tag alone and answered the second with the first's bytes.
    const a = '/api/v1/news?search=dy&limit=41&page=1&sort=oldest';
    const b = '/api/v1/news?sort=popular&page=1&limit=74&search=po';
    const get = (path: string, enc?: string) => server.raw(path, { 'x-api-key': key, ...(enc ? { 'accept-encoding': enc } : {}) });
    const [plainA, plainB] = [await get(a), await get(b)];
    assert.equal(plainA.headers.etag, plainB.headers.etag, 'the premise: the same tag');
    assert.notDeepEqual(plainA.body, plainB.body);
    for (const enc of ['br', 'gzip']) {
      const [ra, rb] = [await get(a, enc), await get(b, enc)];
      assert.equal(ra.headers['content-encoding'], enc);
      assert.deepEqual(decode(ra), plainA.body, `${enc}: ${a}`);
      assert.deepEqual(decode(rb), plainB.body, `${enc}: ${b}`);
    }
  });
});
