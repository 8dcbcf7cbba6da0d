// After an edit of movies.json, the movies are patched, the celebrities (whose filmographies read
// the movies' casts back) kept when no filmography changes (src/data/filmography.ts), else built, and
// the reviews (which show their movie's title, poster and details as fields of their own, naming the
// movie by a slug they do not serve) kept when none of those changed, else the reviews of the changed
// movies found by what they show and written again (src/data/link-holders.ts, patch.ts relinked), or
// built where two movies would show them the same; either way every answer of celebrities, movies and
// reviews is byte for byte a full build's, on a reload and on a restart, and an invalid edit gets the
// full build's error.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { shownField } from '../../src/data/link-holders.ts';
import { RECORD_GROUP } from '../../src/data/record-groups.ts';
import { loadSnapshot, type CacheWrite } from '../../src/data/snapshot.ts';
import { cacheFile } from '../../src/data/boot-cache-format.ts';
import { forgetDigests } from '../../src/data/content-digest.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { RESOURCES } from '../../src/resources/index.ts';
import { assertSameAnswers, assertSameRefusals, editLines, editRecord, infoLines, SETTLE_MS } from '../helpers/edits.ts';

let root: string;
before(async () => (root = await mkdtemp(join(tmpdir(), 'filmography-'))));
after(() => rm(root, { recursive: true, force: true }));

type Movie = { slug: string; title: string; releaseDate: string; cast?: { celebrity?: string; name?: string; character?: string; role?: string }[] };
const recordsOf = async <T,>(data: string, name: string) =>
  (await readFile(join(data, `${name}.json`), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l.replace(/,$/, '')) as T);
const moviesOf = (data: string) => recordsOf<Movie>(data, 'movies');

/** The numbers of the movies that reviews name, in file order. */
async function reviewed(data: string): Promise<number[]> {
  const named = new Set((await recordsOf<{ movie: string }>(data, 'reviews')).map((r) => r.movie));
  return (await moviesOf(data)).flatMap((m, k) => (named.has(m.slug) ? [k] : []));
}

/** The numbers of the reviews of the movies numbered `movies`. */
async function reviewsOf(data: string, movies: readonly number[]): Promise<number[]> {
  const all = await moviesOf(data);
  const slugs = new Set(movies.map((k) => all[k]!.slug));
  return (await recordsOf<{ movie: string }>(data, 'reviews')).flatMap((r, k) => (slugs.has(r.movie) ? [k] : []));
}

/** Two reviewed movies released in one year (the year is all reviews show of a release date), from `from` on. */
async function sameYear(data: string, from: number): Promise<[number, number]> {
  const movies = await moviesOf(data);
  const ks = (await reviewed(data)).filter((k) => k >= from);
  for (const a of ks) for (const b of ks) if (a < b && movies[a]!.releaseDate.slice(0, 4) === movies[b]!.releaseDate.slice(0, 4)) return [a, b];
  throw new Error('no two reviewed movies of one year');
}

/** What reviews show of a movie, each field as it is (its release date's year aside). */
const SHOWN = ['title', 'poster', 'director', 'genre', 'duration'] as const;

/** The number of the first movie (from `from` on) whose cast names a celebrity that at least `films` movies cast. */
async function castMovie(data: string, films: number, from = 0): Promise<number> {
  const movies = await moviesOf(data);
  const count = new Map<string, number>();
  for (const m of movies) for (const c of m.cast ?? []) if (typeof c.celebrity === 'string') count.set(c.celebrity, (count.get(c.celebrity) ?? 0) + 1);
  const k = movies.findIndex((m, i) => i >= from && (m.cast ?? []).some((c) => typeof c.celebrity === 'string' && count.get(c.celebrity)! >= films && m.cast!.filter((x) => x.celebrity === c.celebrity).length === 1));
  assert.ok(k >= 0);
  return k;
}

/** The first cast entry of movie `r` that names a celebrity. */
const named = (r: Record<string, unknown>) => (r.cast as Movie['cast'])!.find((c) => typeof c.celebrity === 'string')!;

interface Edit {
  readonly what: string;
  /** The celebrities: kept as they were, kept with the filmographies that changed written again (filmography.ts), or built. */
  readonly celebrities: 'unaffected' | 'relinked' | 'built';
  /** The reviews: kept as they were, kept with the reviews of the changed movies written again, or built. */
  readonly reviews: 'unaffected' | 'relinked' | 'built';
  /** The edit; the numbers of the movies whose reviews it changes, when any. */
  apply(data: string): Promise<readonly number[] | void>;
}

/** The movies of the edits of a celebrity cast twice: the one that casts them twice, another that casts them. */
let twice = { x: -1, y: -1, slug: '' };

const EDITS: Edit[] = [
  { what: 'a synopsis', celebrities: 'unaffected', reviews: 'unaffected', apply: (d) => editRecord(d, 'movies', 7, (r) => (r.synopsis = 'New words.')) },
  // The filmographies show the title from the movies' list items as served: nothing held changes. Reviews show it as their own text (and search it).
  { what: 'a title (filmographies show it)', celebrities: 'unaffected', reviews: 'relinked', apply: async (d) => {
    const k = (await reviewed(d))[0]!;
    await editRecord(d, 'movies', k, (r) => (r.title = `${r.title as string} Returns`));
    return [k];
  } },
  { what: 'a cast entry that names no celebrity', celebrities: 'unaffected', reviews: 'unaffected', apply: (d) => editRecord(d, 'movies', 9, (r) => ((r.cast as unknown[]) ??= []).push({ name: 'Someone Else', character: 'Guard' })) },
  { what: "a cast entry's character", celebrities: 'relinked', reviews: 'unaffected', apply: async (d) => editRecord(d, 'movies', await castMovie(d, 1), (r) => (named(r).character = 'A New Part')) },
  // Newest first: a movie of a celebrity with two or more films dated far ahead comes first now (its reviews show the year).
  { what: 'a release date that moves the movie in a filmography', celebrities: 'relinked', reviews: 'relinked', apply: async (d) => {
    const k = await castMovie(d, 2);
    await editRecord(d, 'movies', k, (r) => (r.releaseDate = '2099-01-01T00:00:00.000Z'));
    return [k];
  } },
  // Named by name alone now: the celebrity's filmography loses it though the cast shows the same.
  { what: 'a celebrity named by name instead of slug', celebrities: 'relinked', reviews: 'unaffected', apply: async (d) => editRecord(d, 'movies', await castMovie(d, 1, 20), (r) => {
    const c = named(r);
    delete c.celebrity;
    c.name = 'Written Out';
  }) },
  // One no movie cast before: its filmography was empty (only the movie's cast names it now).
  { what: 'a celebrity added to a cast', celebrities: 'relinked', reviews: 'unaffected', apply: async (d) => {
    const cast = new Set((await moviesOf(d)).flatMap((m) => m.cast ?? []).map((c) => c.celebrity));
    const slugs = (await readFile(join(d, 'celebrities.json'), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l.replace(/,$/, '')) as { slug: string }).slug);
    const other = slugs.find((s) => !cast.has(s))!;
    assert.ok(other);
    await editRecord(d, 'movies', 11, (r) => ((r.cast as unknown[]) ??= []).push({ celebrity: other, role: 'Cameo' }));
  } },
  { what: 'a movie added at the end naming no celebrity', celebrities: 'unaffected', reviews: 'unaffected', apply: (d) => editLines(d, 'movies', (lines) => {
    const close = lines.lastIndexOf(']');
    const r = JSON.parse(lines[1]!.replace(/,$/, '')) as Record<string, unknown>;
    Object.assign(r, { _id: 'added-movie-1', slug: 'added-movie-1', title: 'Added Movie', cast: [{ name: 'Nobody Known' }] });
    lines[close - 1] += ',';
    lines.splice(close, 0, JSON.stringify(r));
  }) },
  // Reviews show the poster (in their list items), not as search text.
  { what: 'a poster', celebrities: 'unaffected', reviews: 'relinked', apply: async (d) => {
    const k = (await reviewed(d))[3]!;
    await editRecord(d, 'movies', k, (r) => (r.poster = 'https://images.example.com/movies/other/poster.jpg'));
    return [k];
  } },
  { what: 'a title given the title of another reviewed movie', celebrities: 'unaffected', reviews: 'relinked', apply: async (d) => {
    const [a, b] = await sameYear(d, 30);
    const title = (await moviesOf(d))[a]!.title;
    await editRecord(d, 'movies', b, (r) => (r.title = title));
    return [b];
  } },
  // The reviews that show that title now are those of both: told apart by the rest they show (the poster...).
  { what: 'one of two movies of one title retitled', celebrities: 'unaffected', reviews: 'relinked', apply: async (d) => {
    const [a] = await sameYear(d, 30);
    await editRecord(d, 'movies', a, (r) => (r.title = `${r.title as string}: The Sequel`));
    return [a];
  } },
  { what: 'a movie given every value reviews show of another of its year', celebrities: 'unaffected', reviews: 'relinked', apply: async (d) => {
    const [a, b] = await sameYear(d, 30);
    const from = (await recordsOf<Record<string, unknown>>(d, 'movies'))[a]!;
    await editRecord(d, 'movies', b, (r) => SHOWN.forEach((f) => (r[f] = from[f])));
    return [b];
  } },
  // Their reviews show the same: which are whose cannot be told from what they serve.
  { what: 'one of two movies reviews cannot tell apart retitled', celebrities: 'unaffected', reviews: 'built', apply: async (d) => {
    const [a, b] = await sameYear(d, 30);
    await editRecord(d, 'movies', a, (r) => (r.title = 'Told Apart By None'));
    return [a, b];
  } },
  // A movie that names a celebrity twice: that celebrity's entries from it in cast order.
  { what: 'a celebrity cast twice in one movie', celebrities: 'relinked', reviews: 'unaffected', apply: async (d) => {
    const movies = await moviesOf(d);
    const once = (m: Movie, slug: string) => (m.cast ?? []).filter((c) => c.celebrity === slug).length === 1;
    for (const [x, m] of movies.entries()) {
      const slug = x >= 40 ? (m.cast ?? []).find((c) => typeof c.celebrity === 'string' && once(m, c.celebrity))?.celebrity : undefined;
      const y = slug === undefined ? -1 : movies.findIndex((o, k) => Math.floor(k / RECORD_GROUP) !== Math.floor(x / RECORD_GROUP) && once(o, slug));
      if (y < 0) continue;
      twice = { x, y, slug: slug! };
      await editRecord(d, 'movies', x, (r) => (r.cast as Movie['cast'])!.push({ celebrity: slug, character: 'Their Double' }));
      return;
    }
    throw new Error('no celebrity cast in two movies');
  } },
  // Another movie of theirs edited (in another group of records: those of a changed group are all read again): the order of the two entries of the movie not edited is not held, so not told.
  { what: 'another film of the celebrity cast twice', celebrities: 'built', reviews: 'unaffected', apply: (d) => editRecord(d, 'movies', twice.y, (r) => ((r.cast as Movie['cast'])!.find((c) => c.celebrity === twice.slug)!.character = 'Someone Else Now')) },
  // Told apart again: the reviews of the other one kept as they are.
  { what: 'the other one retitled', celebrities: 'unaffected', reviews: 'relinked', apply: async (d) => {
    const [, b] = await sameYear(d, 30);
    await editRecord(d, 'movies', b, (r) => (r.title = 'Told Apart Again'));
    return [b];
  } },
];

describe('celebrities and reviews after an edit of movies.json (filmography.ts, link-holders.ts)', () => {
  it('reviews name their movie by a slug they do not serve, and show its title as their movieTitle', () => {
    assert.deepEqual(shownField(RESOURCES.reviews, 'movies'), { ref: 'movie', shows: 'movieTitle', from: 'title' });
    // Outfits serve their celebrity (embedded): found by its id, not by what they show.
    assert.equal(shownField(RESOURCES.outfits, 'celebrities'), null);
  });

  for (const restart of [false, true]) {
    it(`celebrities and reviews kept, relinked (what changed of them written again) or built; movies patched: the answers of a full build, on a ${restart ? 'restart' : 'reload'}`, async () => {
      const data = join(root, `data-${restart}`);
      const state = join(root, `state-${restart}`);
      await writeDataset(data, { scale: 200 });
      await sleep(SETTLE_MS);
      let live = await loadSnapshot(data, { cacheDir: state, buildThreads: 'never' });
      for (const e of EDITS) {
        const movies = (await e.apply(data)) ?? [];
        const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
        const { lines, log } = infoLines();
        const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never', ...(restart ? {} : { previous: live }) });
        const line = JSON.parse(lines.find((l) => l.startsWith('data read and indexed '))!.slice('data read and indexed '.length)) as { built: string[]; patched?: string[]; unaffected?: string[]; relinked?: string[] };
        const at = `${e.what}: ${JSON.stringify(line)}`;
        assert.deepEqual(line.patched, ['movies'], at);
        assert.equal(line.unaffected?.includes('celebrities') ?? false, e.celebrities === 'unaffected', at);
        assert.equal(line.relinked?.includes('celebrities') ?? false, e.celebrities === 'relinked', at);
        assert.equal(line.built.includes('celebrities'), e.celebrities === 'built', at);
        assert.equal(line.unaffected?.includes('reviews') ?? false, e.reviews === 'unaffected', at);
        assert.equal(line.relinked?.includes('reviews') ?? false, e.reviews === 'relinked', at);
        assert.equal(line.built.includes('reviews'), e.reviews === 'built', at);
        // (The searches of the changed reviews' texts among the queries compared.)
        assertSameAnswers(full, got, { movies: [], reviews: await reviewsOf(data, movies) }, e.what);
        if (e.reviews !== 'unaffected') assert.ok(movies.length > 0 && (await reviewsOf(data, movies)).length > 0, e.what);
        live = got;
      }
    });
  }

  // A restart after a touch of movies.json rewrites the caches of what is made from it under the new
  // identity after it listens; stopped at once, some are written, some not: the bases of movies and
  // reviews are then keyed to two identities of the same bytes, which their digests tell.
  it('after a touch whose cache writes were called off partway, a movie title edit still relinks reviews on a restart', async () => {
    const data = join(root, 'data-touched');
    const state = join(root, 'state-touched');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    await loadSnapshot(data, { cacheDir: state, buildThreads: 'never' });
    const movies = cacheFile(state, 'movies');
    const before = await readFile(movies);
    const now = new Date();
    await utimes(join(data, 'movies.json'), now, now);
    await sleep(SETTLE_MS);
    let write: CacheWrite | null = null;
    await loadSnapshot(data, { cacheDir: state, buildThreads: 'never', writeLater: (w) => (write = w) });
    await (write as CacheWrite | null)!.start();
    // (The movies' cache as the touch left it unwritten: keyed to the identity before the touch.)
    await writeFile(movies, before);
    const k = (await reviewed(data))[1]!;
    await editRecord(data, 'movies', k, (r) => (r.title = `${r.title as string} Again`));
    const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
    const { lines, log } = infoLines();
    // (A restart is a new process: it knows the digests the caches it reads say, no other.)
    forgetDigests();
    const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never' });
    const line = lines.find((l) => l.startsWith('data read and indexed '))!;
    const fields = JSON.parse(line.slice('data read and indexed '.length)) as { built: string[]; patched?: string[]; relinked?: string[]; unaffected?: string[] };
    assert.deepEqual([fields.built, fields.patched, fields.relinked, fields.unaffected], [[], ['movies'], ['reviews'], ['celebrities']], line);
    assertSameAnswers(full, got, { movies: [], reviews: await reviewsOf(data, [k]) });
  });

  it('an invalid edit is never kept: a reload and a restart report what a full build reports', async () => {
    const data = join(root, 'data-invalid');
    const state = join(root, 'state-invalid');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    const live = await loadSnapshot(data, { cacheDir: state, buildThreads: 'never' });
    const file = join(data, 'movies.json');
    const good = await readFile(file, 'utf8');
    const k = (await reviewed(data))[2]!;
    const invalid: [string, (d: string) => Promise<unknown>][] = [
      // Reviews name it by its old slug (movies patched: no cast names a movie).
      ['the slug of a reviewed movie changed', (d) => editRecord(d, 'movies', k, (r) => (r.slug = 'a-slug-no-review-names'))],
      ['a reviewed movie retitled, its release date not a date', (d) => editRecord(d, 'movies', k, (r) => ((r.title = 'Retitled'), (r.releaseDate = 'soon')))],
    ];
    await assertSameRefusals(data, state, live, file, good, invalid);
  });
});
