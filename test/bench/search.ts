// In-process cost of a search (issues 19, 20), and of filters (`--only filters`): CPU µs per list request on one snapshot
// (no HTTP), for common and rare terms, best of interleaved slices; with --against, another
// checkout's handler runs beside this one's on the very same snapshot (an A/B of the query side; the
// layouts must agree). Also prints the bytes of each collection's search grams and the answers'
// totals. The snapshot comes from a boot cache in --state (made on the first run: at 100k that first
// run takes minutes and about 2.5 GB; later ones a few seconds). The cache's key holds a fingerprint of
// src/data, so an edit there makes the next run build it anew: `--load-with CHECKOUT` loads the
// snapshot with that checkout's code instead (its cache still matches), when the layouts agree.
//   node --import tsx test/bench/search.ts DATA_DIR [--state DIR] [--against CHECKOUT] [--load-with CHECKOUT] [--rounds 8] [--slice-ms 200] [--only a,b]
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { utcYmd } from '../../src/data/fragments.ts';
import { listItem, searchTextOf, type CollectionIndex } from '../../src/data/indexes.ts';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    state: { type: 'string' },
    against: { type: 'string' },
    'load-with': { type: 'string' },
    rounds: { type: 'string', default: '8' },
    'slice-ms': { type: 'string', default: '200' },
    only: { type: 'string' },
  },
});
const DATA = resolve(positionals[0] ?? 'data');
const HERE = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = Number(flags.rounds);
const SLICE_MS = Number(flags['slice-ms']);

const { loadSnapshot } = await import(join(resolve(flags['load-with'] ?? HERE), 'src/data/snapshot.ts'));
const t0 = performance.now();
const snap: { collections: Record<string, CollectionIndex> } = await loadSnapshot(DATA, { cacheDir: flags.state ?? 'memory' });
const mb = (n: number) => (n / 1e6).toFixed(1);
console.log(`loaded ${DATA} in ${((performance.now() - t0) / 1000).toFixed(1)} s, rss ${mb(process.memoryUsage().rss)} MB (Node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)})`);

/** Bytes of every typed array reachable from `o` (the search grams of a collection). */
function bytes(o: unknown): number {
  if (ArrayBuffer.isView(o)) return o.byteLength;
  if (o === null || typeof o !== 'object') return 0;
  let n = 0;
  for (const v of Object.values(o)) n += bytes(v);
  return n;
}
let gramBytes = 0;
for (const [name, ix] of Object.entries(snap.collections)) {
  const b = bytes(ix.search);
  gramBytes += b;
  console.log(`  ${name.padEnd(12)} ${String(ix.size).padStart(8)} records, search grams ${mb(b)} MB, search texts ${mb(bytes(ix.searchText))} MB`);
}
console.log(`  all          search grams ${mb(gramBytes)} MB`);

type ListPage = (index: CollectionIndex, query: string, today: number) => { ok: boolean; body?: Buffer };
const sides: { name: string; listPage: ListPage }[] = [{ name: 'this', listPage: (await import(join(HERE, 'src/http/handlers.ts'))).listPage }];
if (flags.against) sides.push({ name: 'against', listPage: (await import(join(resolve(flags.against), 'src/http/handlers.ts'))).listPage });

const celebs = snap.collections.celebrities;
const today = utcYmd(Date.now());
// A rare name: the 8th celebrity by name descending, as `npm run bench` picks it.
const pick = searchTextOf(celebs, celebs.orders[celebs.def.sorts.findIndex((s) => s.name === 'name_desc')]![7]!);
const [first, ...rest] = pick.split(' ');
const q = encodeURIComponent;
// Terms asked in turn, more than the search cache keeps (SEARCH_CACHE_ENTRIES), so each is searched
// anew as a first request for it is: the distinct full names of 2,000 celebrities spread over the
// name order, and their 4-unit slices (as `npm run bench` asks them).
const byName = celebs.orders[celebs.def.sorts.findIndex((s) => s.name === 'name_asc')]!;
const names = [...new Set(Array.from({ length: Math.min(2000, byName.length) }, (_, i) => searchTextOf(celebs, byName[Math.floor((i * byName.length) / Math.min(2000, byName.length))]!)))];
const slices = [...new Set(names.flatMap((n) => Array.from({ length: Math.max(0, n.length - 3) }, (_, i) => n.slice(i, i + 4))).filter((t) => t.trim().length === 4))];
// Filters alone, no search (--only "filters"): each request is a first request at this level (kept
// pages are the HTTP layer's), an intersection of postings and a selection in the sort order.
const item = JSON.parse(listItem(celebs, 7, today).toString()) as { nationality: string; occupation: string[] };
const outfit = JSON.parse(listItem(snap.collections.outfits, 7, today).toString()) as { category: string; brand: string };
const cases: [string, CollectionIndex, string | string[]][] = [
  [`filters: two "${item.occupation[0]}" + "${item.nationality}"`, celebs, `occupation=${q(item.occupation[0]!)}&nationality=${q(item.nationality)}`],
  [`filters: one + sort name_asc`, celebs, `nationality=${q(item.nationality)}&sort=name_asc`],
  [`filters: outfits category + brand, popular`, snap.collections.outfits, `category=${q(outfit.category)}&brand=${q(outfit.brand)}&sort=popular`],
  [`filters: reviews minRating=7.5 rating_low`, snap.collections.reviews, 'minRating=7.5&sort=rating_low'],
  [`filters: reviews minRating=7.5 latest`, snap.collections.reviews, 'minRating=7.5'],
  [`filters: reviews 3-4 rating_high page 5`, snap.collections.reviews, 'minRating=3&maxRating=4&sort=rating_high&page=5'],
  [`rare full names in turn (${names.length})`, celebs, names.map((n) => `search=${q(n)}`)],
  [`4-unit slices in turn (${slices.length})`, celebs, slices.map((n) => `search=${q(n)}`)],
  ['common "anna"', celebs, 'search=anna'],
  ['common "an"', celebs, 'search=an'],
  ['common "a"', celebs, 'search=a'],
  ['common "anna" name_asc p3', celebs, 'search=anna&sort=name_asc&page=3'],
  [`rare full name "${pick}"`, celebs, `search=${q(pick)}`],
  [`first name "${first}"`, celebs, `search=${q(first!)}`],
  [`surname "${rest.join(' ')}"`, celebs, `search=${q(rest.join(' '))}`],
  ['absent "zqxj"', celebs, 'search=zqxj'],
  ['outfits "dress" popular', snap.collections.outfits, 'search=dress&sort=popular'],
  ['news "the"', snap.collections.news, 'search=the'],
];
const only = flags.only?.split(',') ?? null;

function cpuNow(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** CPU µs per call of `fn` over a slice of SLICE_MS wall time. */
function slice(fn: () => unknown): number {
  const start = performance.now();
  const cpu = cpuNow();
  let n = 0;
  while (performance.now() - start < SLICE_MS) {
    for (let i = 0; i < 20; i++) fn();
    n += 20;
  }
  return (cpuNow() - cpu) / n;
}

console.log(`CPU µs per list request with search, best of ${ROUNDS} slices of ${SLICE_MS} ms${sides.length > 1 ? ' each side (this / against)' : ''}`);
for (const [name, ix, query] of cases) {
  if (only !== null && !only.some((o) => name.includes(o))) continue;
  const queries = typeof query === 'string' ? [query] : query;
  let turn = 0;
  const next = () => queries[turn++ % queries.length]!;
  const answers = sides.map((s) => s.listPage(ix, queries[0]!, today));
  const body = answers[0]!.body!;
  for (const a of answers) if (!a.body?.equals(body)) throw new Error(`${name}: the sides answer differently`);
  const total = JSON.parse(body.toString()).pagination.total as number;
  const best = sides.map(() => Infinity);
  for (const s of sides) for (let i = 0; i < 100; i++) s.listPage(ix, next(), today); // warm up
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [...sides.keys()] : [...sides.keys()].reverse();
    for (const i of order) best[i] = Math.min(best[i]!, slice(() => sides[i]!.listPage(ix, next(), today)));
  }
  console.log(`${name.padEnd(40)} total ${String(total).padStart(7)}  ${best.map((b) => b.toFixed(1).padStart(8)).join(' /')} µs`);
}
