// After an edit of a file other collections link to (celebrities.json: outfits, news and movies embed
// or read its records), a collection whose own file did not change is kept as it was when what it
// holds of the edited records (their slugs, names, pictures...: patch.ts bakedFields) did not change,
// and built otherwise; either way every answer is byte for byte that of a full build of the same
// files, on a reload (from the live snapshot) and on a restart (from the boot cache), and an invalid
// edit gets the full build's error.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bakedFields } from '../../src/data/patch.ts';
import { RECORD_GROUP } from '../../src/data/record-groups.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import type { CollectionName } from '../../src/resources/types.ts';
import { assertSameAnswers, assertSameRefusals, editLines, editRecord, infoLines, SETTLE_MS } from '../helpers/edits.ts';
import { RESOURCES } from '../../src/resources/index.ts';

/** The fields of the "data read and indexed" line. */
function loadLine(lines: readonly string[]): { built: string[]; unaffected?: string[]; patched?: string[]; relinked?: string[]; unpatched?: Record<string, string> } {
  const line = lines.find((l) => l.startsWith('data read and indexed '));
  assert.ok(line, lines.join('\n'));
  return JSON.parse(line.slice('data read and indexed '.length)) as { built: string[]; unaffected?: string[] };
}

let root: string;
before(async () => (root = await mkdtemp(join(tmpdir(), 'patch-dependants-'))));
after(() => rm(root, { recursive: true, force: true }));

/** Record `k` of a data file as it is. */
async function recordAt(data: string, name: CollectionName, k: number): Promise<Record<string, unknown>> {
  return JSON.parse((await readFile(join(data, `${name}.json`), 'utf8')).split('\n')[k + 1]!.replace(/,$/, '')) as Record<string, unknown>;
}

/** The numbers of the celebrities that at least `films` movies cast (their filmographies: holes filled from the movies' list items), in file order. */
async function castIn(data: string, films: number): Promise<number[]> {
  const count = new Map<string, number>();
  for (const line of (await readFile(join(data, 'movies.json'), 'utf8')).split('\n')) {
    if (!line.startsWith('{')) continue;
    const m = JSON.parse(line.replace(/,$/, '')) as { cast?: { celebrity?: string }[] };
    for (const c of m.cast ?? []) if (typeof c.celebrity === 'string') count.set(c.celebrity, (count.get(c.celebrity) ?? 0) + 1);
  }
  const slugs = (await readFile(join(data, 'celebrities.json'), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l.replace(/,$/, '')) as { slug: string }).slug);
  return slugs.flatMap((slug, k) => ((count.get(slug) ?? 0) >= films ? [k] : []));
}

/** The numbers of two celebrities one movie casts both of, each with outfits and news, in file order. */
async function coStars(data: string): Promise<[number, number]> {
  const records = async (name: CollectionName) => (await readFile(join(data, `${name}.json`), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l.replace(/,$/, '')) as Record<string, unknown>);
  const slugs = (await records('celebrities')).map((r) => r.slug as string);
  const held = new Set([...(await records('outfits')), ...(await records('news'))].map((r) => r.celebrity as string));
  for (const m of await records('movies')) {
    const cast = ((m.cast ?? []) as { celebrity?: string }[]).flatMap((c) => (typeof c.celebrity === 'string' && held.has(c.celebrity) ? [slugs.indexOf(c.celebrity)] : []));
    const pair = [...new Set(cast)].sort((a, b) => a - b);
    if (pair.length >= 2 && pair[0]! > 20) return [pair[0]!, pair[1]!];
  }
  throw new Error('no two celebrities in one movie');
}

/**
 * An edit of celebrities.json, whether celebrities is patched (patch.ts; else built whole), and which
 * collections it leaves as they were (the rest of those that link to it are built).
 */
interface Edit {
  readonly what: string;
  readonly patched: boolean;
  readonly unaffected: readonly CollectionName[];
  /** Those kept with the records that hold the edited ones written again (patch.ts relinked); none when absent. */
  readonly relinked?: readonly CollectionName[];
  /** Made on a restart alone (what it tests reads a base from the boot cache), or on a reload alone (it does not depend on where the base comes from); both when absent. */
  readonly only?: 'restart' | 'reload';
  apply(data: string): Promise<number[]>;
}

const EDITS: Edit[] = [
  {
    what: "a celebrity's career (its detail alone; it has films)",
    patched: true,
    unaffected: ['outfits', 'news', 'movies'],
    apply: async (d) => {
      const k = (await castIn(d, 2))[0]!;
      await editRecord(d, 'celebrities', k, (r) => (r.career = `Ça "changed" \\ ${r.career as string}`));
      return [k];
    },
  },
  {
    what: "two celebrities' born dates (the late age), in two groups, with films",
    patched: true,
    unaffected: ['outfits', 'news', 'movies'],
    apply: async (d) => {
      const cast = await castIn(d, 1);
      const [a, b] = [cast[1]!, cast.find((k) => k >= cast[1]! + RECORD_GROUP)!];
      await editRecord(d, 'celebrities', a, (r) => (r.born = '1999-12-31'));
      await editRecord(d, 'celebrities', b, (r) => delete r.born);
      return [a, b];
    },
  },
  // A filter whose records may hold several values: its table made again, keys numbered as a full build numbers them.
  { what: "a celebrity's occupations", patched: true, unaffected: ['outfits', 'news', 'movies'], apply: async (d) => (await editRecord(d, 'celebrities', 4, (r) => (r.occupation = ['Astronaut'])), [4]) },
  {
    what: 'two new occupations, first held by the first celebrity, then by one further on in the other order',
    patched: true,
    unaffected: ['outfits', 'news', 'movies'],
    apply: async (d) => {
      await editRecord(d, 'celebrities', 0, (r) => (r.occupation = ['Zeta Job', 'Alpha Job']));
      await editRecord(d, 'celebrities', 150, (r) => (r.occupation = ['Alpha Job', 'Zeta Job', 'Actor']));
      return [0, 150];
    },
  },
  // The one further on (not changed) is now the first to hold both: its own order numbers them.
  { what: 'the first celebrity without them', patched: true, unaffected: ['outfits', 'news', 'movies'], apply: async (d) => (await editRecord(d, 'celebrities', 0, (r) => (r.occupation = ['Actor'])), [0]) },
  // Outfits and news show the nationality in their details alone, which read it from the celebrity's list item as they are served.
  { what: "a celebrity's nationality", patched: true, unaffected: ['outfits', 'news', 'movies'], apply: async (d) => (await editRecord(d, 'celebrities', 8, (r) => (r.nationality = 'Lunar')), [8]) },
  // Outfits' list items show the picture, read from the celebrity's list item as they are served (kept as its id); news and movies do not.
  { what: "a celebrity's picture", patched: true, unaffected: ['outfits', 'news', 'movies'], apply: async (d) => (await editRecord(d, 'celebrities', 9, (r) => (r.profileImage = 'https://images.example.com/other.jpg')), [9]) },
  // Outfits and news show the name as they show the picture: kept; the movies' casts hold it as text.
  { what: "a celebrity's name", patched: true, unaffected: ['outfits', 'news'], relinked: ['movies'], apply: async (d) => (await editRecord(d, 'celebrities', 10, (r) => (r.name = `${r.name as string} Junior`)), [10]) },
  // On a restart the records after those that hold it move right, then left, in the arenas read from the
  // boot cache (patch.ts spliceInPlace), each further than the record before it is long.
  { what: "a celebrity's name made longer than a list item", only: 'restart', patched: true, unaffected: ['outfits', 'news'], relinked: ['movies'], apply: async (d) => (await editRecord(d, 'celebrities', 10, (r) => (r.name = `${r.name as string}${' Longer'.repeat(300)}`)), [10]) },
  { what: "a celebrity's name shortened", only: 'restart', patched: true, unaffected: ['outfits', 'news'], relinked: ['movies'], apply: async (d) => (await editRecord(d, 'celebrities', 10, (r) => (r.name = (r.name as string).split(' ')[0])), [10]) },
  { what: "a celebrity's career, with a name in another case", patched: true, unaffected: ['outfits', 'news'], relinked: ['movies'], apply: async (d) => (await editRecord(d, 'celebrities', 11, (r) => ((r.career = 'Short.'), (r.name = (r.name as string).toUpperCase()))), [11]) },
  // Two celebrities of one name in one movie: the cast entry of the one renamed cannot be told from the other's.
  { what: 'a celebrity given the name of one it plays beside', only: 'reload', patched: true, unaffected: ['outfits', 'news'], relinked: ['movies'], apply: async (d) => {
    const [a, b] = await coStars(d);
    const name = (await recordAt(d, 'celebrities', a)).name as string;
    await editRecord(d, 'celebrities', b, (r) => (r.name = name));
    return [b];
  } },
  { what: 'the other one renamed', only: 'reload', patched: true, unaffected: ['outfits', 'news'], apply: async (d) => {
    const [a] = await coStars(d);
    await editRecord(d, 'celebrities', a, (r) => (r.name = `${r.name as string} Senior`));
    return [a];
  } },
  // Outfits and news kept, their celebrity filter tables with a posting more (empty).
  { what: 'a celebrity added at the end', patched: true, unaffected: ['outfits', 'news', 'movies'], apply: async (d) => {
    let k = 0;
    await editLines(d, 'celebrities', (l) => {
      const close = l.lastIndexOf(']');
      k = close - 1;
      const r = JSON.parse(l[1]!.replace(/,$/, '')) as Record<string, unknown>;
      r._id = 'added-celebrity';
      r.slug = 'added-celebrity';
      l[close - 1] += ',';
      l.splice(close, 0, JSON.stringify(r));
    });
    return [k];
  } },
  // No record names it: its slug may change (to one no record had), and what holds it is kept.
  { what: "the added celebrity's slug, which no record names", patched: true, unaffected: [], relinked: ['outfits', 'news', 'movies'], apply: async (d) => {
    let k = 0;
    await editLines(d, 'celebrities', (l) => {
      k = l.findIndex((x) => x.includes('"slug":"added-celebrity"'));
      l[k] = l[k]!.replace('"slug":"added-celebrity"', '"slug":"added-celebrity-renamed"');
    });
    return [k - 1];
  } },
  { what: "a celebrity's career again", patched: true, unaffected: ['outfits', 'news', 'movies'], apply: async (d) => (await editRecord(d, 'celebrities', 12, (r) => (r.career = 'Again.')), [12]) },
];

describe('collections that link to an edited file', () => {
  it('hold, of a celebrity, its slug, what links read and the fields embedded', () => {
    assert.deepEqual(bakedFields(RESOURCES.outfits, 'celebrities')?.sort(), ['name', 'nationality', 'profileImage', 'slug']);
    assert.deepEqual(bakedFields(RESOURCES.news, 'celebrities')?.sort(), ['name', 'nationality', 'slug']);
    assert.deepEqual(bakedFields(RESOURCES.movies, 'celebrities')?.sort(), ['name', 'slug']);
    // Filmographies are made from the movies' casts: told apart otherwise (filmography.ts).
    assert.equal(bakedFields(RESOURCES.celebrities, 'movies'), null);
  });

  it("hold not the fields of an embedded object kept as the record's id (a detail's, a list item's): outfits and news hold only the slug", async () => {
    const data = join(root, 'data-baked');
    await writeDataset(data, { scale: 50 });
    const { collections } = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
    assert.deepEqual(bakedFields(RESOURCES.outfits, 'celebrities', collections.outfits), ['slug']);
    assert.deepEqual(bakedFields(RESOURCES.news, 'celebrities', collections.news), ['slug']);
    assert.deepEqual(bakedFields(RESOURCES.movies, 'celebrities', collections.movies)?.sort(), ['name', 'slug']);
  });

  for (const restart of [false, true]) {
    it(`are kept when what they hold of the edited records did not change, else built: the answers of a full build, on a ${restart ? 'restart' : 'reload'}`, async () => {
      const data = join(root, `data-${restart}`);
      const state = join(root, `state-${restart}`);
      await writeDataset(data, { scale: 200 });
      await sleep(SETTLE_MS);
      let live = await loadSnapshot(data, { cacheDir: state });
      for (const e of EDITS.filter((x) => x.only === undefined || x.only === (restart ? 'restart' : 'reload'))) {
        const ids = await e.apply(data);
        const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
        const { lines, log } = infoLines();
        const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never', ...(restart ? {} : { previous: live }) });
        const line = loadLine(lines);
        assert.deepEqual(line.unaffected ?? [], e.unaffected, `${e.what}: ${JSON.stringify(line)}`);
        assert.deepEqual(line.patched ?? [], e.patched ? ['celebrities'] : [], `${e.what}: ${JSON.stringify(line)}`);
        assert.deepEqual(line.relinked ?? [], e.relinked ?? [], `${e.what}: ${JSON.stringify(line)}`);
        const kept = [...e.unaffected, ...(e.relinked ?? [])];
        assert.deepEqual(line.built, ['celebrities', 'outfits', 'news', 'movies'].filter((n) => !kept.includes(n as CollectionName) && (n !== 'celebrities' || !e.patched)), `${e.what}: ${JSON.stringify(line)}`);
        assertSameAnswers(full, got, { celebrities: ids }, e.what);
        live = got;
      }
    });
  }

  it('after a movie synopsis edit: movies patched, reviews kept (what they show of a movie is the same), celebrities kept (no filmography changed: filmography.ts), on a reload and a restart', async () => {
    const data = join(root, 'data-movies');
    const state = join(root, 'state-movies');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    let live = await loadSnapshot(data, { cacheDir: state });
    for (const restart of [false, true]) {
      await editRecord(data, 'movies', restart ? 8 : 7, (r) => (r.synopsis = `New words ${restart}.`));
      const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
      const { lines, log } = infoLines();
      const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never', ...(restart ? {} : { previous: live }) });
      const line = loadLine(lines);
      assert.deepEqual(line.unaffected, ['celebrities', 'reviews'], JSON.stringify(line));
      assert.deepEqual(line.patched, ['movies'], JSON.stringify(line));
      assert.deepEqual(line.built, [], JSON.stringify(line));
      assertSameAnswers(full, got, { movies: [] }, `movie synopsis, ${restart ? 'restart' : 'reload'}`);
      live = got;
    }
  });

  it('an invalid edit is never kept: a reload and a restart report what a full build reports', async () => {
    const data = join(root, 'data-invalid');
    const state = join(root, 'state-invalid');
    await writeDataset(data, { scale: 200 });
    // A celebrity that movies alone name (its outfits and news given to another).
    const filmsOnly = (await castIn(data, 1))[0]!;
    const [gone, to] = [(await recordAt(data, 'celebrities', filmsOnly)).slug as string, (await recordAt(data, 'celebrities', filmsOnly === 0 ? 1 : 0)).slug as string];
    for (const name of ['outfits', 'news'] as const) await editLines(data, name, (l) => l.forEach((x, i) => (l[i] = x.replaceAll(`"celebrity":"${gone}"`, `"celebrity":"${to}"`))));
    const live = await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'celebrities.json');
    const good = await readFile(file, 'utf8');
    const other = (await recordAt(data, 'celebrities', 4)).slug as string;
    const invalid: [string, (d: string) => Promise<unknown>][] = [
      // Outfits, news and movies name it by its old slug.
      ['a slug changed', (d) => editRecord(d, 'celebrities', 5, (r) => (r.slug = 'a-slug-no-one-names'))],
      ["another celebrity's slug", (d) => editRecord(d, 'celebrities', 6, (r) => (r.slug = other))],
      // (Celebrities built whole, as its filmography is not empty: only the movies name the old slug.)
      ['the slug of a celebrity that movies alone name', (d) => editRecord(d, 'celebrities', filmsOnly, (r) => (r.slug = 'a-slug-movies-named'))],
      ['a career that is not a string', (d) => editRecord(d, 'celebrities', 7, (r) => (r.career = 12))],
      ['a celebrity removed', (d) => editLines(d, 'celebrities', (l) => l.splice(3, 1))],
    ];
    await assertSameRefusals(data, state, live, file, good, invalid);
  });
});
