// The loader: every problem reported with file, record and field; linking derives what is written once.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DataError, readSources } from '../../src/data/load.ts';
import { detailBody, listItem, type CollectionIndex } from '../../src/data/indexes.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { ageOn } from '../../src/resources/celebrities.ts';
import { formatProblem } from '../../src/data/validate.ts';
import { fixture, type Fixture } from '../helpers/fixture.ts';


async function problemsOf(change: (f: Fixture) => void): Promise<string[]> {
  const f = fixture();
  change(f);
  try {
    await readSources(f);
  } catch (err) {
    assert.ok(err instanceof DataError);
    return err.problems.map(formatProblem);
  }
  return [];
}

const cases: [string, (f: Fixture) => void, string[]][] = [
  ['valid fixture -> no problem', () => {}, []],
  ['missing required name -> is required', (f) => delete f.celebrities[1]!.name, ['celebrities.json, record 1, name: is required']],
  ['bad slug shape', (f) => (f.outfits[0]!.slug = 'Gala Gown'), ['outfits.json, record 0, slug: must be a slug: lower-case letters and digits separated by single hyphens']],
  ['duplicate slug', (f) => (f.movies[1]!.slug = 'night-train'), ['movies.json, record 1, slug: duplicate slug "night-train"']],
  ['duplicate _id', (f) => (f.movies[1]!._id = 'm1'), ['movies.json, record 1, _id: duplicate _id "m1"']],
  ['unknown reference', (f) => (f.news[0]!.celebrity = 'nobody'), ['news.json, record 0, celebrity: no celebrities record with slug "nobody"']],
  ['unknown reference in a cast entry', (f) => ((f.movies[0]!.cast as Record<string, unknown>[])[0]!.celebrity = 'ghost'), ['movies.json, record 0, cast[0].celebrity: no celebrities record with slug "ghost"']],
  ['cast entry with neither celebrity nor name', (f) => (f.movies[1]!.cast = [{ character: 'X' }]), ['movies.json, record 1, cast[0]: needs one of celebrity, name']],
  ['bad timestamp', (f) => (f.outfits[0]!.createdAt = '2025-13-01'), ['outfits.json, record 0, createdAt: must be an ISO 8601 UTC timestamp such as 2026-11-22T10:54:22.000Z']],
  ['bad date', (f) => (f.celebrities[0]!.born = '1990-02-30'), ['celebrities.json, record 0, born: must be a date YYYY-MM-DD']],
  ['bad enum', (f) => (f.movies[0]!.status = 'done'), ['movies.json, record 0, status: must be one of upcoming, released, in-production']],
  ['rating above 10', (f) => (f.reviews[0]!.rating = 11), ['reviews.json, record 0, rating: must be at most 10']],
  ['wrong type in array', (f) => (f.celebrities[0]!.occupation = ['Actor', 3]), ['celebrities.json, record 0, occupation[1]: must be a string, got number']],
  ['not a URL', (f) => (f.celebrities[0]!.profileImage = 'images/zoe.jpg'), ['celebrities.json, record 0, profileImage: must be an absolute http or https URL']],
  ['unknown field (a typo)', (f) => (f.celebrities[0]!.nationalty = 'French'), ['celebrities.json, record 0, nationalty: is not a known field']],
  // Names every object inherits: a lookup in the schema's properties must not find Object.prototype's.
  ['unknown field named __proto__', (f) => Object.defineProperty(f.celebrities[0]!, '__proto__', { value: 'x', enumerable: true }), ['celebrities.json, record 0, __proto__: is not a known field']],
  ['unknown fields named constructor and toString', (f) => Object.assign(f.outfits[0]!, { constructor: 'x' }, { toString: 'y' }), ['outfits.json, record 0, constructor: is not a known field', 'outfits.json, record 0, toString: is not a known field']],
  ['unknown nested field named hasOwnProperty', (f) => Object.assign((f.movies[0]!.cast as Record<string, unknown>[])[0]!, { hasOwnProperty: 1 }), ['movies.json, record 0, cast[0].hasOwnProperty: is not a known field']],
  ['record not an object', (f) => (f.reviews[0] = 'x' as never), ['reviews.json, record 0: must be an object']],
  ['collection not an array', (f) => (f.news = {} as never), ['news.json: must be a JSON array of records']],
  [
    'several problems are all reported',
    (f) => {
      delete f.outfits[0]!.title;
      f.reviews[0]!.rating = 'high';
    },
    ['outfits.json, record 0, title: is required', 'reviews.json, record 0, rating: must be a number, got string'],
  ],
];

for (const [name, change, expected] of cases) {
  test(`problems: ${name}`, async () => {
    assert.deepEqual(await problemsOf(change), expected);
  });
}

test('files: a missing file and invalid JSON are reported with file, line and column', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'celebrity-load-'));
  try {
    const f = fixture();
    for (const name of ['celebrities', 'outfits', 'news', 'reviews'] as const) await writeFile(join(dir, `${name}.json`), JSON.stringify(f[name], null, 2));
    await writeFile(join(dir, 'news.json'), '[\n  {"_id": "n1",\n  }\n]');
    await assert.rejects(readSources(dir), (err: DataError) => {
      const lines = err.problems.map(formatProblem);
      assert.equal(lines.length, 2);
      assert.match(lines.find((l) => l.startsWith('news.json'))!, /^news\.json: invalid JSON at line 3, column \d+/);
      assert.equal(lines.find((l) => l.startsWith('movies.json')), 'movies.json: file not found');
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const TODAY = 20260315; // the serving day, yyyymmdd
const json = (b: Buffer) => JSON.parse(b.toString());
const item = (ix: CollectionIndex, id: number, today = TODAY) => json(listItem(ix, id, today));
const body = (ix: CollectionIndex, id: number, today = TODAY) => json(detailBody(ix, id, today));

test('linking: embedded objects, age, filmography, review movie details, timestamps normalized', async () => {
  const snap = await loadSnapshot(fixture());
  const celeb = body(snap.collections.celebrities, 0).data;
  assert.equal(celeb.age, 36, 'born 1990-03-15, served on 2026-03-15: birthday today');
  assert.deepEqual(celeb.filmography, [
    { title: 'Day Boat', slug: 'day-boat', releaseDate: '2026-05-01T00:00:00.000Z', character: 'Eve', role: 'Supporting' },
    { title: 'Night Train', slug: 'night-train', releaseDate: '2024-05-01T00:00:00.000Z', character: 'Ada', role: 'Lead' },
  ]);
  const bjorn = item(snap.collections.celebrities, 1);
  assert.equal(bjorn.createdAt, '2025-02-01T00:00:00.000Z', 'served as toISOString gives it');
  assert.equal(bjorn.age, 45);
  assert.equal(bjorn.profileImage, null, 'missing scalar -> null');
  const outfit = item(snap.collections.outfits, 0);
  assert.deepEqual(outfit.celebrity, { name: 'Zoë Martín', slug: 'zoe-martin', profileImage: 'https://images.example.com/zoe.jpg' });
  assert.deepEqual(outfit.tags, [], 'missing array -> []');
  const movie = body(snap.collections.movies, 0).data;
  assert.deepEqual(movie.cast, [
    { name: 'Zoë Martín', character: 'Ada', role: 'Lead' },
    { name: 'Sam Extra', character: 'Guard', role: 'Cameo' },
  ]);
  const review = body(snap.collections.reviews, 0).data;
  assert.equal(review.movieTitle, 'Night Train');
  assert.deepEqual(review.movieDetails, { releaseYear: 2024, director: 'Björn Berg', genre: ['Drama'], runtime: 120 });
  assert.deepEqual(review.scores, { criticsScore: 80, audienceScore: null, externalRating: null, externalPercentScore: null });
  assert.equal(review.stats, null, 'missing object -> null, never {} (CONTRACT 1)');
  assert.equal(body(snap.collections.celebrities, 1).data.socialMedia, null, 'missing map -> null');
  assert.deepEqual(item(snap.collections.news, 0).celebrity, { name: 'Zoë Martín', slug: 'zoe-martin' });
});

test('age is right on the day it is served, in both shapes and in its place', async () => {
  const f = fixture();
  delete f.celebrities[1]!.born;
  const snap = await loadSnapshot(f);
  const celebrities = snap.collections.celebrities;
  const cases: [day: number, age: number, what: string][] = [
    [20260314, 35, 'the day before the birthday'],
    [20260315, 36, 'on the birthday'],
    [20250315, 35, 'a clock moved back a year'],
    [20900101, 99, 'two digits'],
    [20900315, 100, 'three digits'],
  ];
  for (const [day, age, what] of cases) {
    const shown = item(celebrities, 0, day);
    assert.equal(shown.age, age, what);
    assert.deepEqual(Object.keys(shown).indexOf('age'), 8, 'age keeps its place in the shape');
    assert.equal(body(celebrities, 0, day).data.age, age, `${what} (detail)`);
  }
  assert.equal(item(celebrities, 1).age, null, 'no birth date -> null');
  assert.equal(body(celebrities, 1).data.age, null);
});

test('a leap-day birthday counts on March 1 in common years', () => {
  assert.equal(ageOn(20000229, 20270228), 26);
  assert.equal(ageOn(20000229, 20270301), 27);
  assert.equal(ageOn(20000229, 20280229), 28);
});
