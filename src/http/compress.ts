// Response compression (CONTRACT 5): br or gzip as Accept-Encoding asks, q-values honoured (RFC 9110
// 12.5.3). Bodies compressed ahead of time get the best settings; per request, settings that cost
// about as much CPU as assembling the page.
import zlib from 'node:zlib';

export type Encoding = 'br' | 'gzip';

/** What a client accepts: identity only, one coding it prefers, or both equally (the server picks). */
export type Accepts = 'identity' | Encoding | 'either';

/** Smaller bodies go out as they are: a few hundred bytes saved do not pay for the CPU and the header. */
export const MIN_COMPRESS_BYTES = 1024;

const Q = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i;

/** Parses one Accept-Encoding value. A coding not listed is acceptable only through `*`; q=0 refuses it. */
export function parseAcceptEncoding(header: string): Accepts {
  let br = -1;
  let gzip = -1;
  let star = -1;
  for (const item of header.split(',')) {
    const [name = '', ...params] = item.split(';');
    let q = 1;
    for (const p of params) {
      const m = Q.exec(p);
      q = m === null ? (/^\s*q\s*=/i.test(p) ? 0 : q) : Number(m[1]); // a malformed q refuses, like q=0
    }
    const coding = name.trim().toLowerCase();
    if (coding === 'br') br = Math.max(br, q);
    else if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip, q); // x-gzip: RFC 9110 8.4.1.3
    else if (coding === '*') star = Math.max(star, q);
  }
  if (br < 0) br = Math.max(star, 0);
  if (gzip < 0) gzip = Math.max(star, 0);
  if (br === 0 && gzip === 0) return 'identity';
  return br === gzip ? 'either' : br > gzip ? 'br' : 'gzip';
}

// Clients send a handful of distinct values: parse each once.
const parsed = new Map<string, Accepts>();

/** The codings a request accepts, from its Accept-Encoding header (none without the header). */
export function accepts(header: string | undefined): Accepts {
  if (header === undefined || header === '') return 'identity';
  let a = parsed.get(header);
  if (a === undefined) {
    a = parseAcceptEncoding(header);
    if (parsed.size >= 256) parsed.clear();
    parsed.set(header, a);
  }
  return a;
}

const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_MODE, BROTLI_MODE_TEXT, BROTLI_MAX_QUALITY } = zlib.constants;

// Per request, the quickest setting of each format (issue 20; a 6.8 KB filter + sort page in one
// process, Node 20 / 26): brotli 1 costs 40 / 38 µs for 12% more bytes than brotli 3 (75 / 68 µs),
// gzip 1 47 / 71 µs for 3% more than gzip 4 (76 / 106 µs). Brotli 1 is the cheaper of the two for 3%
// more bytes than gzip 1, so a tie goes to br. An answer asked again comes from the AnswerCache.
const BR_NOW: zlib.BrotliOptions = { params: { [BROTLI_PARAM_QUALITY]: 1, [BROTLI_PARAM_MODE]: BROTLI_MODE_TEXT } };
const GZIP_NOW: zlib.ZlibOptions = { level: 1 };
// Ahead of time: the best either format does; brotli 11 takes tens of ms for a page, once.
const BR_BEST: zlib.BrotliOptions = { params: { [BROTLI_PARAM_QUALITY]: BROTLI_MAX_QUALITY, [BROTLI_PARAM_MODE]: BROTLI_MODE_TEXT } };
const GZIP_BEST: zlib.ZlibOptions = { level: 9 };

/**
 * Compresses now, on this thread, with the per-request settings, into an ArrayBuffer of the exact
 * size: Node's synchronous zlib answers a view of the 16 KB chunk it wrote into, and the caches that
 * keep these bodies (AnswerCache, details, first pages) then held 16 KB for a 1.5 KB body outside
 * the heap (at 16 MB of answers, 160 MB of chunks, and V8's full collections that external memory
 * sets off).
 */
export function compressNow(body: Buffer, encoding: Encoding): Buffer {
  return exact(encoding === 'br' ? zlib.brotliCompressSync(body, BR_NOW) : zlib.gzipSync(body, GZIP_NOW));
}

/** `b` itself when it is its whole ArrayBuffer, else a copy in one of its own size. */
function exact(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.length === b.buffer.byteLength) return b;
  const own = Buffer.allocUnsafeSlow(b.length);
  b.copy(own);
  return own;
}

/** Compresses on the libuv thread pool with the best settings, for bodies that are reused. */
export function compressBest(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer) => (err ? reject(err) : resolve(out));
    if (encoding === 'br') zlib.brotliCompress(body, BR_BEST, done);
    else zlib.gzip(body, GZIP_BEST, done);
  });
}

/** `body` in both codings with the best settings (compressBest). */
export async function packBest(body: Buffer): Promise<{ br: Buffer; gzip: Buffer }> {
  const [br, gzip] = await Promise.all([compressBest(body, 'br'), compressBest(body, 'gzip')]);
  return { br, gzip };
}
