// The loader's order: a collection is indexed once what it links to is read, each exactly once, and
// `only` indexes the affected collections while every file is still validated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collecting, DataError, loadCollections } from '../../src/data/load.ts';
import { COLLECTIONS, type CollectionName } from '../../src/resources/types.ts';
import { fixture } from '../helpers/fixture.ts';

test('every collection is indexed exactly once, as soon as what it links to is read', async () => {
  const order: CollectionName[] = [];
  const out = await loadCollections(
    fixture(),
    collecting((def, records) => {
      order.push(def.name);
      return records.length;
    }),
  );
  assert.deepEqual([...order].sort(), [...COLLECTIONS].sort());
  // Collections no one links to are indexed as soon as read and let go; celebrities wait for movies,
  // which are read next so that celebrities are held whole only while movies are read.
  assert.deepEqual(order, ['movies', 'celebrities', 'outfits', 'news', 'reviews']);
  assert.deepEqual(out, { celebrities: 2, outfits: 1, news: 1, movies: 2, reviews: 1 });
});

test('linked fields are whole whatever the order: filmography, cast names, embedded celebrity, movie details', async () => {
  const linked = await loadCollections(fixture(), collecting((_def, records) => records));
  assert.deepEqual((linked.celebrities[0]!.filmography as { slug: string }[]).map((f) => f.slug), ['day-boat', 'night-train']);
  assert.equal((linked.movies[0]!.cast as { name: string }[])[0]!.name, 'Zoë Martín');
  assert.equal((linked.outfits[0]!.celebrity as { name: string }).name, 'Zoë Martín');
  assert.equal((linked.reviews[0]!.movieDetails as { releaseYear: number }).releaseYear, 2024);
});

test('only: just those collections are indexed, with their links; a problem elsewhere still fails the load', async () => {
  const seen: CollectionName[] = [];
  const out = await loadCollections(fixture(), collecting((def, records) => (seen.push(def.name), records)), { only: new Set(['outfits', 'celebrities'] as const) });
  assert.deepEqual(seen.sort(), ['celebrities', 'outfits']);
  assert.deepEqual(Object.keys(out).sort(), ['celebrities', 'outfits']);
  assert.equal((out.celebrities[0]!.filmography as unknown[]).length, 2);
  const bad = fixture();
  bad.reviews[0]!.rating = 11;
  await assert.rejects(loadCollections(bad, collecting(() => 0), { only: new Set(['outfits'] as const) }), DataError);
});
