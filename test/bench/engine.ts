// In-process timing of the list and detail handlers (no HTTP, no TLS): what the engine costs per
// request, to find hot spots that wrk's numbers hide behind the transport.
//   node --import tsx test/bench/engine.ts DATA_DIR
import { utcYmd } from '../../src/data/fragments.ts';
import { loadLinked } from '../../src/data/load.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { detail, listPage } from '../../src/http/handlers.ts';

const dir = process.argv[2] ?? 'data';
const t0 = performance.now();
const snap = await loadSnapshot(dir);
const today = utcYmd(Date.now());
console.log(`loaded ${dir} in ${((performance.now() - t0) / 1000).toFixed(1)} s, rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`);
const celebs = snap.collections.celebrities;
const pick = (await loadLinked(dir)).celebrities[7]!;
const nat = encodeURIComponent(pick.nationality as string);
const occ = encodeURIComponent((pick.occupation as string[])[0]!);
const cases: [string, () => unknown][] = [
  ['list default', () => listPage(celebs, '', today)],
  ['deep page 2000', () => listPage(celebs, 'page=2000', today)],
  ['filter + sort', () => listPage(celebs, `nationality=${nat}&sort=name_asc`, today)],
  ['two filters', () => listPage(celebs, `occupation=${occ}&nationality=${nat}`, today)],
  ['search an', () => listPage(celebs, 'search=an', today)],
  ['search a', () => listPage(celebs, 'search=a', today)],
  ['search full name', () => listPage(celebs, `search=${encodeURIComponent(pick.name as string)}`, today)],
  ['search absent', () => listPage(celebs, 'search=zqxj', today)],
  ['outfits search + filter', () => listPage(snap.collections.outfits, 'search=dress&sort=popular', today)],
  ['reviews range', () => listPage(snap.collections.reviews, 'minRating=7.5&sort=rating_low', today)],
  ['detail', () => detail(celebs, pick.slug, today)],
];
for (const [name, fn] of cases) {
  for (let i = 0; i < 200; i++) fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < 500) {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
  }
  console.log(`${name.padEnd(26)} ${((1000 * (performance.now() - start)) / n).toFixed(1).padStart(8)} µs/op`);
}
