// Response compression (CONTRACT 5): br or gzip as Accept-Encoding asks, q-values honoured (RFC 9110
// 12.5.3). Bodies compressed ahead of time get the best settings; per request, settings that cost
// about as much CPU as assembling the page.
import zlib from 'node:zlib';
import { sendBuffer } from '../data/send-buffer.ts';

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
  // The last value first: a compare of the request's new string, where a Map lookup hashes it whole.
  if (header === lastHeader) return lastAccepts;
  let a = parsed.get(header);
  if (a === undefined) {
    a = parseAcceptEncoding(header);
    if (parsed.size >= 256) parsed.clear();
    parsed.set(header, a);
  }
  lastHeader = header;
  lastAccepts = a;
  return a;
}
let lastHeader = '';
let lastAccepts: Accepts = 'identity';

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
 * sets off). `kept` false: a body sent once and not kept, made in the send slab (send-buffer.ts),
 * given back once it went whole to the socket, instead of an ArrayBuffer of its own. `body` is read
 * whole before anything is made in the slab, so a caller may give its bytes back before the call.
 */
export function compressNow(body: Buffer, encoding: Encoding, kept = true): Buffer {
  const reused = encoding === 'br' ? brNow : gzipNow;
  const out = reused === null || body.length > REUSED_MAX_BYTES ? null : reused.compress(body, kept);
  return out ?? exact(encoding === 'br' ? zlib.brotliCompressSync(body, BR_NOW) : zlib.gzipSync(body, GZIP_NOW));
}

/** `b` itself when it is its whole ArrayBuffer, else a copy in one of its own size. */
function exact(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.length === b.buffer.byteLength) return b;
  const own = Buffer.allocUnsafeSlow(b.length);
  b.copy(own);
  return own;
}

/** What Node's zlib and brotli objects hold in `_handle` (node_zlib.cc): the same on Node 20 and 26. */
interface NativeHandle {
  writeSync(flush: number, input: Buffer, inOffset: number, inLength: number, out: Buffer, outOffset: number, outLength: number): void;
  reset(): void;
  init(params: Uint32Array, writeState: Uint32Array, processCallback: () => void): unknown;
}

/** Bodies larger than this are compressed by the public API (the scratch buffer grows to the largest body). */
const REUSED_MAX_BYTES = 1024 * 1024;
const { BROTLI_OPERATION_FINISH, Z_FINISH } = zlib.constants;

/**
 * One compressor per format, made once and reused by every request on this thread (issue 20): Node's
 * synchronous API makes a stream object, a native handle and its compressor for each call and closes
 * them at the end, about 7 µs of the 27-45 µs a 6.4 KB page costs, and 8-10 µs for a body of 10 bytes.
 * Here a call is one `writeSync` of the whole body with FINISH into a scratch buffer, then the
 * compressor made fresh for the next (gzip: `deflateReset`; brotli: a new encoder with the same
 * parameters through `init`, as its `reset` would give it brotli's defaults). Not a public API, so
 * it is used only after it made, for a sample, the very bytes the public API makes; and a body whose
 * output does not fit the scratch buffer, or an error, goes to the public API.
 */
class ReusedCompressor {
  private scratch = Buffer.allocUnsafeSlow(64 * 1024);
  private readonly state: Uint32Array;
  private readonly handle: NativeHandle;

  constructor(
    private readonly engine: zlib.Gzip | zlib.BrotliCompress,
    private readonly brotliParams: Uint32Array | null,
  ) {
    const internal = engine as unknown as { _handle?: NativeHandle; _writeState?: Uint32Array };
    if (internal._handle === undefined || !(internal._writeState instanceof Uint32Array)) throw new Error('no zlib handle');
    this.handle = internal._handle;
    this.state = internal._writeState;
    engine.on('error', () => {}); // an error destroys the engine: seen below, the body goes to the public API
  }

  /** `body` compressed into a buffer of its own size (`kept`), or a slice of the send slab; null: the public API does it. */
  compress(body: Buffer, kept = true): Buffer | null {
    if (this.engine.destroyed) return null;
    const room = body.length + (body.length >>> 6) + 64;
    if (this.scratch.length < room) this.scratch = Buffer.allocUnsafeSlow(room);
    const out = this.scratch;
    if (this.brotliParams !== null) this.handle.init(this.brotliParams, this.state, noop);
    this.handle.writeSync(this.brotliParams !== null ? BROTLI_OPERATION_FINISH : Z_FINISH, body, 0, body.length, out, 0, out.length);
    const left = this.state[0]!;
    const unread = this.state[1]!;
    if (this.brotliParams === null) this.handle.reset();
    if (this.engine.destroyed || left === 0 || unread !== 0) return null;
    const n = out.length - left;
    const own = kept ? Buffer.allocUnsafeSlow(n) : sendBuffer(n);
    own.set(out.subarray(0, n));
    return own;
  }
}
const noop = (): void => {};

/** The reused compressor of one format, or null when it does not make the public API's bytes here. */
function reused(encoding: Encoding): ReusedCompressor | null {
  try {
    let c: ReusedCompressor;
    if (encoding === 'br') {
      const params = new Uint32Array(Math.max(...Object.entries(zlib.constants).filter(([k]) => k.startsWith('BROTLI_PARAM_')).map(([, v]) => v)) + 1).fill(0xffffffff);
      for (const [k, v] of Object.entries(BR_NOW.params!)) params[Number(k)] = Number(v);
      c = new ReusedCompressor(zlib.createBrotliCompress(BR_NOW), params);
    } else {
      c = new ReusedCompressor(zlib.createGzip(GZIP_NOW), null);
    }
    const sample = Buffer.from(JSON.stringify({ data: Array.from({ length: 64 }, (_, i) => ({ id: i, name: `sample ${i * 7}`, tags: ['a', 'b'] })) }));
    const want = encoding === 'br' ? zlib.brotliCompressSync(sample, BR_NOW) : zlib.gzipSync(sample, GZIP_NOW);
    for (let i = 0; i < 2; i++) if (!c.compress(sample)?.equals(want)) return null; // twice: the compressor made fresh too
    return c;
  } catch {
    return null;
  }
}
const brNow = reused('br');
const gzipNow = reused('gzip');

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
