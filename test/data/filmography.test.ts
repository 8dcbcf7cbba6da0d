// After an edit of movies.json, the movies are patched and the celebrities (whose filmographies read
// the movies' casts back) kept when no filmography changes (src/data/filmography.ts), else built;
// either way every answer of celebrities, movies and reviews is byte for byte a full build's, on a
// reload and on a restart.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { assertSameAnswers, editLines, editRecord, infoLines, SETTLE_MS } from '../helpers/edits.ts';

let root: string;
before(async () => (root = await mkdtemp(join(tmpdir(), 'filmography-'))));
after(() => rm(root, { recursive: true, force: true }));

type Movie = { slug: string; cast?: { celebrity?: string; name?: string; character?: string; role?: string }[] };
const moviesOf = async (data: string) =>
  (await readFile(join(data, 'movies.json'), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l.replace(/,$/, '')) as Movie);

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
  /** Whether the celebrities are kept (else built). */
  readonly kept: boolean;
  apply(data: string): Promise<unknown>;
}

const EDITS: Edit[] = [
  { what: 'a synopsis', kept: true, apply: (d) => editRecord(d, 'movies', 7, (r) => (r.synopsis = 'New words.')) },
  // The filmographies show the title from the movies' list items as served: nothing held changes.
  { what: 'a title (filmographies show it)', kept: true, apply: async (d) => editRecord(d, 'movies', await castMovie(d, 1), (r) => (r.title = `${r.title as string} Returns`)) },
  { what: 'a cast entry that names no celebrity', kept: true, apply: (d) => editRecord(d, 'movies', 9, (r) => ((r.cast as unknown[]) ??= []).push({ name: 'Someone Else', character: 'Guard' })) },
  { what: "a cast entry's character", kept: false, apply: async (d) => editRecord(d, 'movies', await castMovie(d, 1), (r) => (named(r).character = 'A New Part')) },
  // Newest first: a movie of a celebrity with two or more films dated far ahead comes first now.
  { what: 'a release date that moves the movie in a filmography', kept: false, apply: async (d) => editRecord(d, 'movies', await castMovie(d, 2), (r) => (r.releaseDate = '2099-01-01T00:00:00.000Z')) },
  // Named by name alone now: the celebrity's filmography loses it though the cast shows the same.
  { what: 'a celebrity named by name instead of slug', kept: false, apply: async (d) => editRecord(d, 'movies', await castMovie(d, 1, 20), (r) => {
    const c = named(r);
    delete c.celebrity;
    c.name = 'Written Out';
  }) },
  // One no movie cast before: its filmography was empty (only the movie's cast names it now).
  { what: 'a celebrity added to a cast', kept: false, apply: async (d) => {
    const cast = new Set((await moviesOf(d)).flatMap((m) => m.cast ?? []).map((c) => c.celebrity));
    const slugs = (await readFile(join(d, 'celebrities.json'), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l.replace(/,$/, '')) as { slug: string }).slug);
    const other = slugs.find((s) => !cast.has(s))!;
    assert.ok(other);
    await editRecord(d, 'movies', 11, (r) => ((r.cast as unknown[]) ??= []).push({ celebrity: other, role: 'Cameo' }));
  } },
  { what: 'a movie added at the end naming no celebrity', kept: true, apply: (d) => editLines(d, 'movies', (lines) => {
    const close = lines.lastIndexOf(']');
    const r = JSON.parse(lines[1]!.replace(/,$/, '')) as Record<string, unknown>;
    Object.assign(r, { _id: 'added-movie-1', slug: 'added-movie-1', title: 'Added Movie', cast: [{ name: 'Nobody Known' }] });
    lines[close - 1] += ',';
    lines.splice(close, 0, JSON.stringify(r));
  }) },
];

describe('celebrities after an edit of movies.json (filmography.ts)', () => {
  for (const restart of [false, true]) {
    it(`are kept when no filmography changes, else built; movies patched: the answers of a full build, on a ${restart ? 'restart' : 'reload'}`, async () => {
      const data = join(root, `data-${restart}`);
      const state = join(root, `state-${restart}`);
      await writeDataset(data, { scale: 200 });
      await sleep(SETTLE_MS);
      let live = await loadSnapshot(data, { cacheDir: state, buildThreads: 'never' });
      for (const e of EDITS) {
        await e.apply(data);
        const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
        const { lines, log } = infoLines();
        const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never', ...(restart ? {} : { previous: live }) });
        const line = JSON.parse(lines.find((l) => l.startsWith('data read and indexed '))!.slice('data read and indexed '.length)) as { built: string[]; patched?: string[]; unaffected?: string[] };
        assert.deepEqual(line.patched, ['movies'], `${e.what}: ${JSON.stringify(line)}`);
        assert.equal(line.built.includes('celebrities'), !e.kept, `${e.what}: ${JSON.stringify(line)}`);
        assert.equal(line.unaffected?.includes('celebrities') ?? false, e.kept, `${e.what}: ${JSON.stringify(line)}`);
        assertSameAnswers(full, got, { movies: [] }, e.what);
        live = got;
      }
    });
  }
});
