// `npm run bench:pipeline` (issue 20): the whole request pipeline in one process, Node's HTTP parser
// and writer included but no system calls: services wired as `serve` wires them (file store, metrics,
// access log at --log-level error) are fed by in-memory sockets, 50 keep-alive connections each with
// one request in flight, and so is a bare node:http handler sending the very same bytes. Sides run in
// short interleaved slices; the figure is CPU µs per request, the best slice of each side (the
// least disturbed on a shared machine: two runs of the same code agree within about 5%).
//   npm run bench:pipeline -- DATA_DIR [--against OTHER_CHECKOUT] [--rounds 40] [--slice-ms 60] [--only a,b] [--gc] [--kept N] [--cache DIR]
// The outfits and news pages run only when --only names them (`--only outfits,news`).
// With --against, that checkout's server (an older commit, say) runs beside this one: A/B of a change.
// `--only "first request"` runs the first-request scenarios, the two of a page compressed per request
// (br, gzip) among them: each request a target never asked before, and for filter + sort a page other
// than the last (distinct pages in turn, more than any cache holds at 100k); the bare handler sends
// the first side's first bytes.
// --gc: also the collections per 10,000 requests of each side (v8.GCProfiler over each slice).
// --kept N: before the scenarios, N other list pages asked twice on each of our sides, so they are kept
// (src/http/kept-pages.ts) as on a busy server, whose store holds about a thousand: a cache's costs
// can grow with its entries (a Map's buckets), which a store of two or three pages does not show.
// --cache DIR: the boot cache kept in DIR across runs (each side's state directory links its cache/
// there), so a run at 100k restarts from it in seconds instead of loading the data files for minutes;
// under --against each side has its own (DIR/A, DIR/B), so sides whose src/data differ keep theirs.
import http from 'node:http';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { MemorySocket, startBare, startOurs } from './in-memory.ts';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { cache: { type: 'string' }, gc: { type: 'boolean', default: false }, kept: { type: 'string', default: '0' }, against: { type: 'string' }, rounds: { type: 'string', default: '40' }, 'slice-ms': { type: 'string', default: '60' }, only: { type: 'string' } },
});
const DATA = resolve(positionals[0] ?? 'data');
const HERE = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = Number(flags.rounds);
const SLICE_MS = Number(flags['slice-ms']);
const CONNECTIONS = 50;

interface Side {
  readonly name: string;
  readonly server: http.Server;
  readonly key: string;
  /** A key whose monthly quota is used up (429s). */
  readonly spent: string;
  close(): Promise<void>;
}

async function ours(root: string, name: string): Promise<Side> {
  const o = await startOurs(root, DATA, (state) => {
    if (flags.cache === undefined) return;
    // A side of its own under --against (the two checkouts' caches differ when their src/data does).
    const dir = flags.against === undefined ? resolve(flags.cache) : join(resolve(flags.cache), name);
    mkdirSync(dir, { recursive: true });
    symlinkSync(dir, join(state, 'cache'));
  });
  return {
    name,
    server: o.server,
    key: o.key,
    spent: o.spent,
    close: async () => {
      await o.close(1000);
      rmSync(o.state, { recursive: true, force: true });
    },
  };
}

const bareSide = await startBare();
const bare: Side = { name: 'bare', server: bareSide.server, key: '', spent: '', close: () => new Promise((done) => bareSide.server.close(() => done())) };
const answerWith = bareSide.answerWith;

/** Runs one request on a fresh connection; resolves the response's bytes. */
function once(side: Side, request: Buffer): Promise<Buffer> {
  return new Promise((done) => {
    const socket = new MemorySocket();
    socket.kept = [];
    const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse) =>
      res.once('finish', () =>
        setImmediate(() => {
          side.server.off('request', onRequest);
          socket.destroy();
          done(Buffer.concat(socket.kept!));
        }),
      );
    side.server.prependListener('request', onRequest);
    side.server.emit('connection', socket);
    socket.push(request);
  });
}

/**
 * Requests made ahead of each slice, outside its CPU time (the bare side's request is one Buffer, so
 * making ours during the slice charged ours with the harness's work): each a new target (`make` of a
 * number never given before), or `cycle` targets in turn.
 */
class RequestQueue {
  private made: Buffer[] = [];
  private at = 0;
  private count = 0;
  constructor(
    private readonly make: (n: number) => Buffer,
    private readonly cycle = 0,
  ) {
    if (cycle > 0) this.made = Array.from({ length: cycle }, (_, i) => make(i));
  }
  /** At least `n` requests ready (new targets; a cycle is always ready). */
  ready(n: number): void {
    if (this.cycle > 0) return;
    this.made = this.made.slice(this.at);
    this.at = 0;
    while (this.made.length < n) this.made.push(this.make(++this.count));
  }
  next(): Buffer {
    if (this.cycle > 0) return this.made[this.at++ % this.cycle]!;
    return this.at < this.made.length ? this.made[this.at++]! : this.make(++this.count); // past what was made: made now
  }
}
/** The same request each time, or the next of a queue. */
type Requests = Buffer | RequestQueue;
const nextOf = (r: Requests): Buffer => (r instanceof RequestQueue ? r.next() : r);
/** Requests made ahead for a slice of `ms`: enough at 4 µs each, quicker than any side here. */
const readyFor = (r: Requests, ms: number): void => {
  if (r instanceof RequestQueue) r.ready(ms * 250);
};

/** Requests for `ms` over CONNECTIONS connections; the process's CPU µs per request in that time. */
function slice(side: Side, request: Requests, ms: number): Promise<{ requests: number; cpuPerRequest: number; bytes: number; counted: number; gc: GcCount }> {
  return new Promise((done) => {
    const sockets: MemorySocket[] = [];
    let requests = 0;
    let counted = 0;
    let open = CONNECTIONS;
    let cpu = -1;
    let gc: GcCount = { scavenges: 0, marks: 0, others: 0, ms: 0, bytes: 0 };
    readyFor(request, ms);
    const profiler = flags.gc ? new v8.GCProfiler() : null;
    const heap0 = flags.gc ? v8.getHeapStatistics().used_heap_size : 0;
    profiler?.start();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
      const socket = req.socket as unknown as MemorySocket;
      res.once('finish', () => {
        requests++;
        if (cpu < 0 && performance.now() - t0 >= ms) {
          const used = process.cpuUsage(cpu0);
          cpu = used.user + used.system;
          counted = requests;
          if (profiler !== null) gc = gcCount(profiler.stop(), heap0, v8.getHeapStatistics().used_heap_size);
        }
        if (cpu < 0) setImmediate(() => socket.push(nextOf(request)));
        else if (--open === 0) {
          side.server.off('request', onRequest);
          for (const s of sockets) s.destroy();
          done({ requests, cpuPerRequest: cpu / requests, bytes: sockets.reduce((a, s) => a + s.written, 0) / requests, counted, gc });
        }
      });
    };
    side.server.prependListener('request', onRequest);
    for (let i = 0; i < CONNECTIONS; i++) {
      const socket = new MemorySocket();
      sockets.push(socket);
      side.server.emit('connection', socket);
      socket.push(nextOf(request));
    }
  });
}

/**
 * Collections in a slice (--gc): scavenges, other kinds, their pause time in ms (wall time: on a loaded
 * machine it holds waits for V8's helper threads), and the bytes allocated on the heap in the slice
 * (the growth of the used heap between collections: garbage of this side alone).
 */
interface GcCount {
  scavenges: number;
  /** Mark-compacts (full collections) among `others`. */
  marks: number;
  others: number;
  ms: number;
  bytes: number;
}
interface GcStat {
  gcType: string;
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}
function gcCount(result: { statistics: GcStat[] } | undefined, heap0: number, heap1: number): GcCount {
  const c = { scavenges: 0, marks: 0, others: 0, ms: 0, bytes: 0 };
  let used = heap0;
  for (const g of result?.statistics ?? []) {
    if (g.gcType === 'Scavenge') c.scavenges++;
    else c.others++;
    if (g.gcType === 'MarkSweepCompact') c.marks++;
    c.ms += g.cost / 1000;
    c.bytes += g.beforeGC.heapStatistics.usedHeapSize - used;
    used = g.afterGC.heapStatistics.usedHeapSize;
  }
  c.bytes += heap1 - used;
  return c;
}

const sides: Side[] = [];
if (flags.against !== undefined) sides.push(await ours(resolve(flags.against), 'A'));
sides.push(await ours(HERE, flags.against === undefined ? 'ours' : 'B'));
sides.push(bare);

const request = (path: string, key: string | null, encoding = '') =>
  Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench\r\n${encoding === '' ? '' : `Accept-Encoding: ${encoding}\r\n`}${key === null ? '' : `x-api-key: ${key}\r\n`}\r\n`);
/** Requests for `path` with `&v=` and a number never sent before (ignored by the API): the same body under a new tag each time. */
let fresh = 0;
const firstRequests = (path: string, key: string, encoding: string) => new RequestQueue(() => request(`${path}&v=${++fresh}`, key, encoding));
for (const side of sides) {
  if (side === bare) continue;
  for (let i = 0; i < Number(flags.kept); i++) {
    const other = request(`/api/v1/celebrities?limit=20&kept=${i}`, side.key);
    await once(side, other);
    await once(side, other);
  }
}
const sample = JSON.parse((await once(sides[0]!, request('/api/v1/celebrities?limit=50&sort=name_desc', sides[0]!.key))).toString('latin1').split('\r\n\r\n')[1]!);
const pick = sample.data[7] as { nationality: string; slug: string };
const q = encodeURIComponent;
// Search terms as `npm run bench` asks them (test/bench/run.ts searchTerms): the distinct names of 1,000
// celebrities spread over the name order (rare), and their 4-unit slices without a space; each request
// one term in turn with a `&v=` never sent before, so neither kept pages nor the search cache (fewer
// entries than terms) answer it: a first search of that term.
const names = new Set<string>();
{
  const at = async (page: number) => JSON.parse((await once(sides[0]!, request(`/api/v1/celebrities?limit=1&sort=name_asc&page=${page}`, sides[0]!.key))).toString('utf8').split('\r\n\r\n')[1]!);
  const total = (await at(1)).pagination.total as number;
  const spots = Math.min(1000, total);
  for (let i = 0; i < spots; i++) for (const r of (await at(1 + Math.floor((i * total) / spots))).data as { name: string }[]) names.add(r.name.toLowerCase());
}
const fours = new Set<string>();
for (const n of names) for (let i = 0; i + 4 <= n.length; i++) if (!n.slice(i, i + 4).includes(' ')) fours.add(n.slice(i, i + 4));
// Distinct filter + sort pages as `npm run bench` asks them (test/bench/run.ts filterPages): every
// nationality found, each of its full pages in each sort, page 1 of all first; each request one in turn
// with a `&v=` never sent before: a first request for its answer, its 20 records others than the last.
const pages: string[] = [];
{
  const at = async (query: string) => JSON.parse((await once(sides[0]!, request(`/api/v1/celebrities?${query}`, sides[0]!.key))).toString('utf8').split('\r\n\r\n')[1]!);
  const total = (await at('limit=1')).pagination.total as number;
  const nationalities = new Set<string>();
  for (let i = 0; i < 20; i++) for (const r of (await at(`limit=100&sort=name_asc&page=${1 + Math.floor((i * total) / 2000)}`)).data as { nationality: unknown }[]) if (typeof r.nationality === 'string') nationalities.add(r.nationality);
  const counts: [string, number][] = [];
  for (const n of [...nationalities].sort()) counts.push([q(n), (await at(`limit=1&nationality=${q(n)}`)).pagination.total as number]);
  for (let page = 1; pages.length < 24_000; page++) {
    const before = pages.length;
    for (const [n, count] of counts) if (page * 20 <= count) for (const sort of ['name_asc', 'latest', 'name_desc', 'oldest']) pages.push(`/api/v1/celebrities?nationality=${n}&sort=${sort}&page=${page}`);
    if (pages.length === before) break;
  }
}
// Distinct pages of outfits and of news past the first (their items embed a celebrity's: fragments.ts
// joinEmbedded), 2,000 spread over each, each request one in turn with a `&v=` never sent before: a join.
const embedPages: Record<'outfits' | 'news', string[]> = { outfits: [], news: [] };
for (const c of ['outfits', 'news'] as const) {
  const total = JSON.parse((await once(sides[0]!, request(`/api/v1/${c}?limit=1`, sides[0]!.key))).toString('utf8').split('\r\n\r\n')[1]!).pagination.total as number;
  const last = Math.floor(total / 20);
  for (let i = 0; i < 2000 && last > 1; i++) embedPages[c].push(`/api/v1/${c}?page=${2 + Math.floor((i * (last - 1)) / 2000)}`);
}
/** Suffixes of `path`, URL-encoded: search terms, or whole targets (pages, with an empty path). */
const termLists: Record<string, string[]> = { names: [...names].map(q), fours: [...fours].map(q), pages, outfitPages: embedPages.outfits, newsPages: embedPages.news };
/** Each: name, path, which key (true: the account's; false: a malformed one, 401; 'spent': quota used up, 429), encoding, targets in turn. */
const scenarios: [string, string, boolean | 'spent', string?, number?, string?][] = [
  ['one-item page', '/api/v1/celebrities?limit=1', true],
  ['list default page', '/api/v1/celebrities', true],
  // 20 targets asked in turn, each kept after its second ask, as many clients paging: no request
  // asks what the one before it asked (the bare handler sends page 1's bytes to all).
  ['20 pages in turn', '/api/v1/celebrities?limit=20&page=', true, undefined, 20],
  ['filter + sort', `/api/v1/celebrities?nationality=${q(pick.nationality)}&sort=name_asc`, true],
  ['detail', `/api/v1/celebrities/${pick.slug}`, true],
  ['401 bad key', '/api/v1/celebrities', false],
  ['429 quota used up', '/api/v1/celebrities', 'spent'],
  // Never asked before: not kept (src/http/kept-pages.ts), built and kept now. Run by default beside
  // the rows above, which ask the same target again and again.
  ['list default page (first request)', '/api/v1/celebrities?limit=20', true, ''],
  // Distinct pages of a filter + sort in turn (above), each a first request for its answer.
  [`filter + sort (first request, ${pages.length} pages)`, '', true, '', undefined, 'pages'],
  // A term in turn (above), each request a first search of its term.
  [`search rare (full name) (first request, ${names.size} terms)`, '/api/v1/celebrities?search=', true, '', undefined, 'names'],
  [`search 4 units (first request, ${fours.size} terms)`, '/api/v1/celebrities?search=', true, '', undefined, 'fours'],
  // Compressed per request, never asked before (--only "first request"): not kept by the AnswerCache.
  ['filter + sort, br (first request)', '', true, 'br', undefined, 'pages'],
  ['filter + sort, gzip (first request)', '', true, 'gzip', undefined, 'pages'],
  // Pages of list items that embed a celebrity (its text read from the celebrity's list item at
  // join time: fragments.ts ListEmbed): run only when --only names them (`--only outfits,news`).
  ['outfits page', '/api/v1/outfits', true],
  ['outfits page (first request)', '/api/v1/outfits?limit=20', true, ''],
  ['news page', '/api/v1/news', true],
  ['news page (first request)', '/api/v1/news?limit=20', true, ''],
  ['outfits pages past the first (first request)', '', true, '', undefined, 'outfitPages'],
  ['news pages past the first (first request)', '', true, '', undefined, 'newsPages'],
];
const only = flags.only?.split(',') ?? null;
console.log(`CPU µs per request, best of ${ROUNDS} slices of ${SLICE_MS} ms each side (Node ${process.version}, ${DATA}, ${flags.kept} other pages kept, load ${os.loadavg()[0]!.toFixed(1)})`);
for (const [name, path, good, encoding, cycle, terms] of scenarios) {
  if (only === null ? (encoding ?? '') !== '' || /^(outfits|news) /.test(name) : !only.some((o) => name.includes(o))) continue;
  // The bare server gets no key, as in `npm run bench`: it reads the same request line and host.
  const list = terms === undefined ? null : termLists[terms]!;
  const requests: Requests[] = sides.map((s) =>
    s === bare
      ? request(list !== null ? `${path}${list[0]!}&v=0` : cycle === undefined ? path : `${path}1`, null, encoding)
      : list !== null
        ? new RequestQueue((n) => request(`${path}${list[n % list.length]!}&v=${++fresh}`, s.key, encoding))
        : cycle !== undefined
        ? new RequestQueue((n) => request(`${path}${n + 1}`, s.key), cycle)
        : encoding !== undefined
          ? firstRequests(path, s.key, encoding)
          : request(path, good === 'spent' ? s.spent : good === true ? s.key : 'cel_0000000000000000000000000000000000000000'),
  );
  answerWith(await once(sides[0]!, nextOf(requests[0]!)));
  for (const [i, s] of sides.entries()) await slice(s, requests[i]!, 1000); // warm up
  const best = sides.map(() => Infinity);
  const bytes = sides.map(() => 0);
  const gcs = sides.map(() => ({ requests: 0, scavenges: 0, marks: 0, others: 0, ms: 0, bytes: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides.keys() : [...sides.keys()].reverse();
    for (const i of order) {
      const r = await slice(sides[i]!, requests[i]!, SLICE_MS);
      best[i] = Math.min(best[i]!, r.cpuPerRequest);
      bytes[i] = r.bytes;
      const g = gcs[i]!;
      g.requests += r.counted;
      g.scavenges += r.gc.scavenges;
      g.others += r.gc.others;
      g.marks += r.gc.marks;
      g.ms += r.gc.ms;
      g.bytes += r.gc.bytes;
    }
  }
  const cells = sides.map((s, i) => `${s.name} ${best[i]!.toFixed(1)}`);
  const base = best[sides.length - 1]!;
  const ratios = sides.slice(0, -1).map((s, i) => `${s.name} ${(base / best[i]!).toFixed(2)}`);
  console.log(`${name.padEnd(18)} ${cells.join('  ')}   bare/ours: ${ratios.join(' ')}   bytes ${bytes.map((b) => b.toFixed(0)).join('/')}`);
  // Per 10,000 requests: scavenges (each side's young garbage), other collections, and GC pause ms.
  if (flags.gc) {
    const per = (g: (typeof gcs)[number], v: number) => ((v * 10_000) / g.requests).toFixed(1);
    console.log(`${''.padEnd(18)} per 10k requests: ${sides.map((s, i) => `${s.name} ${per(gcs[i]!, gcs[i]!.scavenges)} scavenges + ${per(gcs[i]!, gcs[i]!.others)} other (${per(gcs[i]!, gcs[i]!.marks)} mark-compact), ${per(gcs[i]!, gcs[i]!.ms)} ms`).join('; ')}`);
    console.log(`${''.padEnd(18)} heap bytes allocated per request: ${sides.map((s, i) => `${s.name} ${(gcs[i]!.bytes / gcs[i]!.requests).toFixed(0)}`).join('  ')}`);
  }
}
console.log(`load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (const s of sides) await s.close();
process.exit(0);
