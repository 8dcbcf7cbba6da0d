// Deterministic synthetic data: the bundled sample files and data sets of any scale, streamed to disk.
import type { CollectionName } from '../resources/types.ts';
import { Rng } from '../random.ts';
import { Deck, SlugBook, slugify } from './random.ts';
import * as V from './vocabulary.ts';

export interface GenerateOptions {
  /** Number of celebrities, an integer >= 1; the other collections follow in proportion. */
  scale: number;
  seed?: string | number;
}
export type DataRecord = Record<string, unknown>;
type Counts = Record<CollectionName, number>;

export const DEFAULT_SEED = 'celebrity-api';
const DAY = 86_400_000;
/** "Now" of the data set, fixed so that the output never depends on the day it is generated. */
const NOW = Date.UTC(2026, 10, 1);
const SITE_START = Date.UTC(2019, 0, 1);
/** Referenced collections come before the ones that reference them, so the summaries exist. */
const ORDER: readonly CollectionName[] = ['celebrities', 'movies', 'outfits', 'news', 'reviews'];

export function collectionSizes(scale: number): Counts {
  if (!Number.isInteger(scale) || scale < 1) throw new RangeError(`scale must be an integer >= 1, got ${scale}`);
  // Integer arithmetic: 2.7 * n in floating point can land just above an integer and ceil up.
  const ceilDiv = (a: number, b: number) => Math.ceil(a / b);
  return { celebrities: scale, outfits: ceilDiv(27 * scale, 10), news: 2 * scale, movies: ceilDiv(8 * scale, 10), reviews: ceilDiv(134 * scale, 100) };
}

/** What later collections need to know about earlier ones, kept small so huge scales stream. */
interface World {
  sizes: Counts;
  celebs: { slug: string; name: string }[];
  actors: number[];
  directors: number[];
  movies: { slug: string; title: string; release: number; released: boolean; quality: number; lead: string; director: string }[];
}

const iso = (ms: number) => new Date(ms).toISOString();
const fill = (t: string, vars: Record<string, string>) => t.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? '');
const article = (word: string) => (/^[AEIOU]/i.test(word) ? 'an' : 'a');
const listWords = (xs: string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);
const money = (n: number) => `$${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
const person = (rng: Rng) => { const r = rng.pick(V.REGIONS); return `${rng.pick(r.first)} ${rng.pick(r.last)}`; };
const city = (rng: Rng) => rng.pick(rng.pick(V.REGIONS).cities).split(',')[0]!;
const img = (kind: string, file: string) => `https://images.example.com/${kind}/${file}.jpg`;

function* celebrities(rng: Rng, w: World): Generator<DataRecord> {
  const regions = new Deck(rng, V.REGIONS);
  const jobs = new Deck(rng, [...V.OCCUPATIONS, 'Actor', 'Actor', 'Singer']);
  const book = new SlugBook();
  for (let i = 0; i < w.sizes.celebrities; i++) {
    const region = regions.draw();
    const [name, slug] = book.fresh(() => (rng.chance(0.06) ? rng.pick(V.MONONYMS) : `${rng.pick(region.first)} ${rng.pick(region.last)}`));
    const primary = jobs.draw();
    const occupation = [primary, ...rng.some(V.SIDE_JOBS[primary]!, 0, 2)];
    const year = rng.int(1950, 2006);
    const born = iso(Date.UTC(year, rng.int(0, 11), rng.int(1, 28))).slice(0, 10);
    const birthPlace = rng.pick(region.cities);
    const createdMs = rng.int(SITE_START, NOW - DAY);
    const cm = rng.int(152, 198);
    const inches = Math.round(cm / 2.54);
    const millions = 0.5 + 400 * rng.next() ** 3;
    const worth = rng.chance(0.04) ? `$${rng.int(1, 3)}.${rng.int(0, 9)} billion` : `$${millions < 10 ? millions.toFixed(1) : Math.round(millions)} million`;
    const occ = listWords(occupation.map((o) => (o === 'TV Host' ? 'TV host' : o.toLowerCase())));
    const nets = rng.some(V.NETWORKS, 1, 4);
    w.celebs.push({ slug, name });
    if (occupation.includes('Actor')) w.actors.push(i);
    if (occupation.includes('Director')) w.directors.push(i);
    const first = name.split(' ')[0]!;
    yield {
      _id: rng.objectId(createdMs, i), name, slug, profileImage: img('celebrities', slug), occupation, nationality: region.nationality,
      netWorth: worth, born, isVerified: rng.chance(0.7), createdAt: iso(createdMs),
      birthPlace: rng.chance(0.03) ? null : birthPlace,
      height: rng.chance(0.04) ? null : `${(cm / 100).toFixed(2)} m (${Math.floor(inches / 12)} ft ${inches % 12} in)`,
      introduction: `${name} is ${article(region.nationality)} ${region.nationality} ${occ} from ${birthPlace.split(',')[0]} who ${rng.pick(V.INTRO_HOOKS)}.`,
      career: `${first} ${V.DEBUTS[primary]} in ${Math.min(2024, year + rng.int(16, 25))}. ${rng.some(V.CAREER_BEATS, 2, 3).join(' ')}`,
      // A few profiles have no social links at all: absent rather than null, to exercise both.
      ...(rng.chance(0.03) ? {} : { socialMedia: Object.fromEntries(nets.map((n) => [n, `https://${n}.example/${slug}`])) }),
    };
  }
}

function* movies(rng: Rng, w: World): Generator<DataRecord> {
  const statuses = new Deck(rng, ['released', 'released', 'released', 'released', 'released', 'released', 'released', 'upcoming', 'upcoming', 'in-production']);
  const genres = new Deck(rng, V.GENRES);
  const book = new SlugBook();
  const titles: (() => string)[] = [
    () => `The ${rng.pick(V.TITLE_NOUNS)}`, () => `${rng.pick(V.TITLE_ADJECTIVES)} ${rng.pick(V.TITLE_NOUNS)}`,
    () => `The ${rng.pick(V.TITLE_ADJECTIVES)} ${rng.pick(V.TITLE_NOUNS)}`, () => `${rng.pick(V.TITLE_NOUNS)} of ${rng.pick(V.TITLE_PLACES)}`,
  ];
  for (let i = 0; i < w.sizes.movies; i++) {
    const [title, slug] = book.fresh(() => rng.pick(titles)());
    const status = statuses.draw();
    const released = status === 'released';
    // Release dates are whole days; released ones end at least 3 days before NOW, the rest are after it.
    const release = Math.floor(
      (released ? NOW - 3 * DAY - (NOW - Date.UTC(1995, 0, 1)) * rng.next() ** 2
        : status === 'upcoming' ? NOW + rng.int(7, 300) * DAY : NOW + rng.int(200, 1000) * DAY) / DAY) * DAY;
    // Listed up to 400 days before release; films older than the site were added at some point since it opened.
    const createdMs = !released ? rng.int(NOW - 400 * DAY, NOW - DAY)
      : release > SITE_START + 400 * DAY ? rng.int(release - 400 * DAY, release) : rng.int(SITE_START, NOW - DAY);
    const primary = genres.draw();
    const genre = [primary, ...rng.some(V.GENRES.filter((g) => g !== primary), 0, 2)];
    const director = w.directors.length > 0 && rng.chance(0.4) ? w.celebs[rng.pick(w.directors)]!.name : person(rng);
    const cast: DataRecord[] = [];
    const taken = new Set<number>();
    let lead = '';
    for (let k = 0, n = rng.int(3, 8); k < n; k++) {
      const a = w.actors.length > 0 && rng.chance(0.85) ? rng.pick(w.actors) : -1;
      const character = rng.chance(0.8) ? `${rng.pick(V.CHARACTER_FIRST)} ${rng.pick(V.CHARACTER_LAST)}` : rng.pick(V.CHARACTER_FIRST);
      const role = k < 2 ? 'Lead' : k === n - 1 && n > 4 ? 'Cameo' : 'Supporting';
      const star = a >= 0 && !taken.has(a) ? w.celebs[a]! : null;
      const name = star ? star.name : person(rng);
      cast.push(star ? { celebrity: star.slug, character, role } : { name, character, role });
      taken.add(a);
      lead ||= name;
    }
    const sellsTickets = !released || NOW - release < 60 * DAY;
    const quality = 3.5 + 6 * rng.next();
    w.movies.push({ slug, title, release, released, quality, lead, director });
    const trailer = status === 'in-production' ? rng.chance(0.5) : rng.chance(0.95);
    yield {
      _id: rng.objectId(createdMs, i), title, slug, releaseDate: iso(release), poster: img(`movies/${slug}`, 'poster'), genre, director, status,
      synopsis: `${rng.pick(V.PROTAGONISTS).replace(/^./, (c) => c.toUpperCase())} ${rng.pick(V.INCIDENTS)} and ${rng.pick(V.STAKES)}.`,
      anticipationScore: released ? rng.int(5, 95) : rng.int(40, 100),
      language: rng.chance(0.6) ? ['English'] : rng.some(V.LANGUAGES, 1, 2), featured: rng.chance(0.15), createdAt: iso(createdMs),
      backdrop: img(`movies/${slug}`, 'backdrop'),
      writers: rng.chance(0.3) ? [director, ...Array.from({ length: rng.int(0, 1) }, () => person(rng))] : Array.from({ length: rng.int(1, 3) }, () => person(rng)),
      cast,
      ...(trailer ? { trailer: `https://video.example.com/trailers/${slug}` } : {}),
      ticketLinks: sellsTickets && status !== 'in-production'
        ? rng.some(V.TICKET_PLATFORMS, 1, 3).map((p) => ({ platform: p, url: `https://tickets.example.com/${slugify(p)}/${slug}`, available: released || rng.chance(0.5) }))
        : [],
      budget: rng.chance(0.05) ? null : rng.int(2, 250) * 1_000_000 + rng.int(0, 9) * 100_000,
      duration: genre.includes('Animation') ? rng.int(80, 110) : rng.int(85, 190),
      filmBoardRating: genre.includes('Animation') ? rng.pick(['G', 'PG']) : genre.includes('Horror') ? rng.pick(['R', 'NC-17'])
        : rng.pick(['G', 'PG', 'PG-13', 'PG-13', 'R', 'R', 'NC-17']),
    };
  }
}

function* outfits(rng: Rng, w: World): Generator<DataRecord> {
  const categories = new Deck(rng, V.OUTFIT_CATEGORIES);
  const brands = new Deck(rng, V.BRANDS);
  const everyone = rng.permutation(w.sizes.celebrities);
  const book = new SlugBook();
  const priceRange: Record<string, [number, number]> = { 'Red Carpet': [3000, 45000], Formal: [1200, 12000], 'Evening Wear': [800, 9000], Swimwear: [90, 900] };
  for (let j = 0; j < w.sizes.outfits; j++) {
    // Everyone gets one outfit first; the rest go mostly to the most photographed.
    const c = w.celebs[j < everyone.length ? everyone[j]! : rng.skewed(w.celebs.length)]!;
    const category = categories.draw();
    const [garments, events] = V.OUTFIT_STYLES[category]!;
    const [brand, designers] = brands.draw();
    const createdMs = rng.int(SITE_START, NOW - DAY);
    const event = fill(rng.pick(events), { city: city(rng), year: String(new Date(createdMs).getUTCFullYear()) });
    let garment = '', color = '';
    const [title, slug] = book.fresh(() => {
      [garment, color] = [rng.pick(garments), rng.pick(V.COLORS)];
      return `${c.name} in ${article(color)} ${color} ${brand} ${garment}`;
    });
    // Custom red-carpet pieces are not for sale: no price, no shop link.
    const custom = category === 'Red Carpet' && rng.chance(0.25);
    const [lo, hi] = priceRange[category] ?? [120, 2500];
    const designer = rng.pick(designers);
    yield {
      _id: rng.objectId(createdMs, j), title, slug, celebrity: c.slug,
      images: Array.from({ length: rng.int(1, 3) }, (_, k) => img('outfits', `${slug}-${k + 1}`)),
      event, designer, brand, category, price: custom ? null : money(Math.round(rng.int(lo, hi) / 10) * 10 - (rng.chance(0.3) ? 5 : 0)),
      purchaseLink: custom ? null : `https://shop.example.com/${slugify(brand)}/${slug}`,
      tags: [category.toLowerCase(), color.toLowerCase(), garment.toLowerCase(), ...(custom ? ['custom'] : []), ...rng.some(['designer', 'trending', 'celebrity style', 'look of the day'], 0, 2)],
      likesCount: Math.floor(40 + 250_000 * rng.next() ** 4), createdAt: iso(createdMs), color, isFeatured: rng.chance(0.15),
      description: `${c.name} wore ${article(color)} ${color.toLowerCase()} ${garment.toLowerCase()} by ${designer} for ${brand} (${event}). ${rng.pick(V.OUTFIT_LINES)}`,
    };
  }
}

function* news(rng: Rng, w: World): Generator<DataRecord> {
  const categories = new Deck(rng, V.NEWS_CATEGORIES);
  const everyone = rng.permutation(w.sizes.celebrities);
  const book = new SlugBook();
  // Casting news is about films still to come, when there are any.
  const upcoming = w.movies.filter((m) => !m.released);
  const projects = upcoming.length > 0 ? upcoming : w.movies;
  for (let j = 0; j < w.sizes.news; j++) {
    const c = w.celebs[j < everyone.length ? everyone[j]! : rng.skewed(w.celebs.length)]!;
    const category = categories.draw();
    const vars = { name: c.name, movie: rng.pick(projects).title, brand: rng.pick(V.BRANDS)[0], city: city(rng) };
    const [title, slug] = book.fresh(() => fill(rng.pick(V.NEWS_TITLES[category]!), vars));
    const publishMs = rng.int(SITE_START, NOW - DAY);
    const createdMs = publishMs - rng.int(10 * 60_000, 3 * DAY);
    const excerpt = fill(rng.pick(V.NEWS_LEADS), vars);
    const [quote, closer, body] = [rng.pick(V.NEWS_QUOTES), rng.pick(V.NEWS_CLOSERS), rng.pick(V.NEWS_BODY)];
    yield {
      _id: rng.objectId(createdMs, j), title, slug, excerpt, thumbnail: rng.chance(0.03) ? null : img('news', slug), author: rng.pick(V.NEWS_AUTHORS),
      category, tags: [category.toLowerCase(), c.name.toLowerCase(), ...rng.some(['exclusive', 'trending', 'interview', 'red carpet', 'first look'], 1, 2)],
      publishDate: iso(publishMs), featured: rng.chance(0.15), celebrity: c.slug, createdAt: iso(createdMs),
      // Vocabulary holds no <, > or &, so text goes into the markup without escaping.
      content: `<p>${excerpt} ${fill(body, vars)}</p><h2>${rng.pick(V.NEWS_HEADINGS)}</h2><p>${fill(rng.pick(V.NEWS_BODY), vars)}</p>`
        + `<blockquote>“${quote}”</blockquote><p>${closer}</p>`,
      views: Math.floor(100 + 2_000_000 * rng.next() ** 5),
    };
  }
}

function* reviews(rng: Rng, w: World): Generator<DataRecord> {
  const released = w.movies.filter((m) => m.released);
  const pool = released.length > 0 ? released : w.movies;
  const everyone = rng.permutation(pool.length);
  const book = new SlugBook();
  const jitter = () => rng.next() + rng.next() - 1;
  const clamp = (v: number, hi: number) => Math.min(hi, Math.max(0, v));
  for (let j = 0; j < w.sizes.reviews; j++) {
    const m = pool[j < everyone.length ? everyone[j]! : rng.skewed(pool.length)]!;
    const rating = Math.round(clamp(m.quality + 2.5 * jitter(), 10) * 10) / 10;
    const band = V.VERDICTS.find((b) => rating >= b.min)!;
    const [title, slug] = book.fresh(() => (rng.chance(0.5) ? `'${m.title}' Review: ${rng.pick(band.hooks)}` : `${rng.pick(band.hooks)}: '${m.title}' Reviewed`));
    // Reviews follow the release (within four months, or any time since the site opened for older films);
    // a data set without released films gets festival previews from the last two months.
    const publishMs = !m.released ? rng.int(NOW - 60 * DAY, NOW - DAY)
      : m.release >= SITE_START ? rng.int(m.release + DAY / 2, Math.min(NOW - DAY / 2, m.release + 120 * DAY)) : rng.int(SITE_START, NOW - DAY);
    const critic = rng.pick(V.CRITICS);
    const excerpt = rng.pick(band.excerpts);
    const views = Math.floor(200 + 500_000 * rng.next() ** 4);
    const vars = { lead: m.lead, director: m.director };
    yield {
      _id: rng.objectId(publishMs, j), title, slug, movie: m.slug, rating, excerpt,
      author: { name: critic.name, bio: critic.bio, credentials: critic.credentials }, publishDate: iso(publishMs),
      scores: {
        criticsScore: Math.round(clamp(rating * 10 + 12 * jitter(), 100)), audienceScore: Math.round(clamp(rating * 10 + 20 * jitter(), 100)),
        externalRating: rng.chance(0.04) ? null : Math.round(clamp(rating + jitter(), 10) * 10) / 10,
        externalPercentScore: Math.round(clamp(rating * 10 + 15 * jitter(), 100)),
      },
      verdict: band.verdict, stats: { views, likes: Math.floor(views * (0.01 + 0.07 * rng.next())) }, featured: rng.chance(0.15),
      content: `<p>${excerpt} ${fill(V.REVIEW_PARAGRAPHS[0]!, vars)}</p><h2>What works, and what does not</h2>`
        + `<p>${rng.some(V.REVIEW_PARAGRAPHS.slice(1), 2, 3).join(' ')}</p><blockquote>${excerpt}</blockquote><p>Verdict: ${band.verdict}.</p>`,
      pros: rng.some(V.PROS, 2, 3).map((p) => fill(p, vars)), cons: rng.some(V.CONS, 1, 3),
    };
  }
}

const BUILDERS: Record<CollectionName, (rng: Rng, w: World) => Generator<DataRecord>> = { celebrities, movies, outfits, news, reviews };

/** Each collection as a lazy sequence, in ORDER; consume each one fully before the next. */
export function* collections(options: GenerateOptions): Generator<[CollectionName, Iterable<DataRecord>]> {
  const seed = String(options.seed ?? DEFAULT_SEED);
  const w: World = { sizes: collectionSizes(options.scale), celebs: [], actors: [], directors: [], movies: [] };
  // One stream per collection, so a change to one collection's recipe leaves the others as they were.
  for (const name of ORDER) yield [name, BUILDERS[name](new Rng(`${seed}/${name}`), w)];
}

/** The five collections in memory: for tests and small scales. */
export function generateRecords(options: GenerateOptions): Record<CollectionName, DataRecord[]> {
  const out = {} as Record<CollectionName, DataRecord[]>;
  for (const [name, records] of collections(options)) out[name] = [...records];
  return out;
}
