// The loader's order: a collection is indexed once what it links to is read, each exactly once, and
// `only` indexes the affected collections while every file is still validated.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { collecting, DataError, loadCollections } from '../../src/data/load.ts';
import { checkObject, timestampNormalizer } from '../../src/data/validate.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';
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

/** The fixture written as data files into a fresh directory. */
async function fixtureDir(data = fixture()): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'load-order-'));
  for (const def of RESOURCE_LIST) await writeFile(join(dir, def.file), JSON.stringify(data[def.name], null, 2));
  return dir;
}

test('from files, a collection read before what it links to (celebrities, before movies) is held as its kept fields and linked from a second read of its file: the same records as from arrays', async () => {
  const dir = await fixtureDir();
  try {
    const fromFiles = await loadCollections(dir, collecting((_def, records) => records));
    const fromArrays = await loadCollections(fixture(), collecting((_def, records) => records));
    assert.deepEqual(fromFiles, fromArrays);
    assert.equal((fromFiles.celebrities[0]!.filmography as unknown[]).length, 2);
    assert.equal(fromFiles.celebrities[0]!.introduction, 'Intro', 'a field no link reads, from the second read');
    // Not validated again there, but what validation changes is done: a timestamp in toISOString() form.
    assert.equal(fixture().celebrities[1]!.createdAt, '2025-02-01T00:00:00Z');
    assert.equal(fromFiles.celebrities[1]!.createdAt, '2025-02-01T00:00:00.000Z');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('from files, celebrities edited between their two reads (while movies are linked): the load is done again on the new files, never a mix', async () => {
  const dir = await fixtureDir();
  try {
    let edits = 0;
    const out = await loadCollections(
      dir,
      collecting((def, records) => {
        if (def.name === 'movies' && edits++ === 0) {
          const edited = fixture();
          edited.celebrities[0]!.name = 'Zoë Martín-Edited';
          writeFileSync(join(dir, 'celebrities.json'), JSON.stringify(edited.celebrities, null, 2));
        }
        return records;
      }),
    );
    assert.equal(out.celebrities[0]!.name, 'Zoë Martín-Edited');
    assert.equal((out.movies[0]!.cast as { name: string }[])[0]!.name, 'Zoë Martín-Edited', 'cast names of the same version');
    assert.equal(edits, 2, 'movies linked twice: the load ran again');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('from files, celebrities made invalid between their two reads (the second read does not validate): the load is done again and reports them', async () => {
  const dir = await fixtureDir();
  try {
    let edits = 0;
    const load = loadCollections(
      dir,
      collecting((def, records) => {
        if (def.name === 'movies' && edits++ === 0) {
          const edited = fixture();
          edited.celebrities[1]!.createdAt = 'yesterday';
          delete (edited.celebrities[0] as { name?: string }).name;
          writeFileSync(join(dir, 'celebrities.json'), JSON.stringify(edited.celebrities, null, 2));
        }
        return records;
      }),
    );
    await assert.rejects(load, (err: unknown) => {
      assert.ok(err instanceof DataError);
      assert.deepEqual(
        err.problems.map((p) => `${p.file} ${p.index} ${p.field}`),
        ['celebrities.json 0 name', 'celebrities.json 1 createdAt'],
      );
      return true;
    });
    assert.equal(edits, 1, 'the second pass stops at celebrities, before movies are linked');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('timestampNormalizer changes a record as checkObject does when it validates it, and nothing else', () => {
  const data = fixture() as unknown as Record<CollectionName, Record<string, unknown>[]>;
  data.celebrities[0]!.createdAt = '2025-01-01T00:00:00.5Z';
  data.movies[0]!.releaseDate = '2024-05-01T00:00:00Z';
  data.news[0]!.publishDate = '2025-04-01T10:00:00.12Z';
  for (const def of RESOURCE_LIST) {
    const normalize = timestampNormalizer(def.source);
    assert.ok(normalize, `${def.name} has timestamps`);
    for (const record of data[def.name]) {
      const checked = structuredClone(record);
      checkObject(def.source, checked, '', { problems: [], refs: [] });
      const normalized = structuredClone(record);
      normalize(normalized);
      assert.deepEqual(normalized, checked);
    }
  }
  assert.equal(data.celebrities[0]!.createdAt, '2025-01-01T00:00:00.5Z', 'the fixture itself untouched');
  const changed = { ...data.news[0]! };
  timestampNormalizer(RESOURCES.news.source)!(changed);
  assert.equal(changed.publishDate, '2025-04-01T10:00:00.120Z');
  const invalid = { createdAt: 'yesterday', name: 7 };
  timestampNormalizer(RESOURCES.celebrities.source)!(invalid);
  assert.deepEqual(invalid, { createdAt: 'yesterday', name: 7 }, 'what is not a valid timestamp is left for validation to report');
});
