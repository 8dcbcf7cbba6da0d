// Celebrities inserted in the middle of celebrities.json (patch-shift.ts): celebrities patched with
// every later record numbered anew, and outfits, news and movies (whose files did not change) kept
// with what they number by celebrities renumbered; every answer as a full build's, on a reload and
// a restart. (Outfits, reviews and movies inserted or removed in the middle: test/data/patch.test.ts.)
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { assertSameAnswers, editLines, infoLines, SETTLE_MS } from '../helpers/edits.ts';

let root: string;
before(async () => (root = await mkdtemp(join(tmpdir(), 'patch-shift-'))));
after(() => rm(root, { recursive: true, force: true }));

/** `count` celebrities inserted before record `at`: copies of those there, each with its own `_id`, slug and name; their ids. */
async function insertCelebrities(data: string, at: number, count: number, tag: string): Promise<number[]> {
  await editLines(data, 'celebrities', (lines) => {
    const added = Array.from({ length: count }, (_, k) => {
      const r = JSON.parse(lines[at + 1 + k]!.replace(/,$/, '')) as Record<string, unknown>;
      r._id = `inserted-${tag}-${k}`;
      r.slug = `inserted-celebrity-${tag}-${k}`;
      r.name = `Inserted Celebrity ${tag} ${k}`;
      return `${JSON.stringify(r)},`;
    });
    lines.splice(at + 1, 0, ...added);
  });
  return Array.from({ length: count }, (_, k) => at + k);
}

/** The celebrity of slug `slug` removed from celebrities.json (not the last). */
async function removeCelebrity(data: string, slug: string): Promise<void> {
  await editLines(data, 'celebrities', (lines) => {
    const at = lines.findIndex((l) => l.includes(`"slug":"${slug}"`));
    assert.ok(at > 0 && lines[at]!.endsWith(','), slug);
    lines.splice(at, 1);
  });
}

function loadLine(lines: readonly string[]): { built: string[]; unaffected?: string[]; patched?: string[]; unpatched?: Record<string, string> } {
  const line = lines.find((l) => l.startsWith('data read and indexed '));
  assert.ok(line, lines.join('\n'));
  return JSON.parse(line.slice('data read and indexed '.length)) as { built: string[] };
}

describe('celebrities inserted in the middle', () => {
  it('celebrities patched, outfits, news and movies kept with their celebrity ids renumbered: answers as a full build, on a reload and a restart', async () => {
    const data = join(root, 'data');
    const state = join(root, 'state');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    let live = await loadSnapshot(data, { cacheDir: state });
    const edits: [string, (d: string) => Promise<number[]>, 'reload' | 'restart'][] = [
      ['one in the middle', (d) => insertCelebrities(d, 50, 1, 'a'), 'reload'],
      ['two near the start and one further on', async (d) => [...(await insertCelebrities(d, 150, 1, 'b')), ...(await insertCelebrities(d, 3, 2, 'c'))], 'restart'],
      ['one first', (d) => insertCelebrities(d, 0, 1, 'd'), 'reload'],
      // Removed: ones no outfit, news item or movie names (an empty filmography).
      ['the one in the middle removed again', async (d) => (await removeCelebrity(d, 'inserted-celebrity-a-0'), []), 'reload'],
      ['two removed again, one first', async (d) => (await removeCelebrity(d, 'inserted-celebrity-d-0'), await removeCelebrity(d, 'inserted-celebrity-c-1'), []), 'restart'],
    ];
    for (const [what, edit, how] of edits) {
      const ids = await edit(data);
      const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never', patch: false });
      const { lines, log } = infoLines();
      const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never', ...(how === 'reload' ? { previous: live } : {}) });
      const line = loadLine(lines);
      assert.deepEqual(line.patched, ['celebrities'], `${what}: ${JSON.stringify(line)}`);
      assert.deepEqual([...(line.unaffected ?? [])].sort(), ['movies', 'news', 'outfits'], `${what}: ${JSON.stringify(line)}`);
      assertSameAnswers(full, got, { celebrities: ids }, what);
      for (const name of ['celebrities', 'outfits', 'news', 'movies'] as const) {
        assert.deepEqual(got.collections[name].postings, full.collections[name].postings, `${what}: ${name} filter tables`);
        assert.deepEqual(got.collections[name].orders, full.collections[name].orders, `${what}: ${name} orders`);
      }
      live = got;
    }
  });

  it('a celebrity removed that records name (an outfit, or a movie alone): a reload and a restart report what a full build reports', async () => {
    const data = join(root, 'data-invalid');
    const state = join(root, 'state-invalid');
    await writeDataset(data, { scale: 200 });
    // (Every generated celebrity has outfits and news: one that a movie's cast alone names, made here.)
    await insertCelebrities(data, 100, 1, 'movie');
    await editLines(data, 'movies', (lines) => {
      const r = JSON.parse(lines[6]!.replace(/,$/, '')) as { cast: Record<string, unknown>[] };
      r.cast = [{ celebrity: 'inserted-celebrity-movie-0', character: 'Someone', role: 'Lead' }, ...(r.cast ?? [])];
      lines[6] = `${JSON.stringify(r)},`;
    });
    await sleep(SETTLE_MS);
    const live = await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'celebrities.json');
    const good = await readFile(file, 'utf8');
    const records = async (name: string) => (await readFile(join(data, `${name}.json`), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l.replace(/,$/, '')) as Record<string, unknown>);
    const inMovies = new Set((await records('movies')).flatMap((m) => ((m.cast ?? []) as { celebrity?: string }[]).map((c) => c.celebrity)));
    const inOutfits = new Set((await records('outfits')).map((o) => o.celebrity as string));
    const inNews = new Set((await records('news')).map((o) => o.celebrity as string));
    const slugs = (await records('celebrities')).slice(0, -1).map((c) => c.slug as string);
    const cases = [slugs.find((x) => inOutfits.has(x) && !inMovies.has(x)), slugs.find((x) => inMovies.has(x) && !inOutfits.has(x) && !inNews.has(x))];
    for (const slug of cases) {
      assert.ok(slug !== undefined);
      await removeCelebrity(data, slug);
      const message = (p: Promise<unknown>) => p.then(() => 'loaded', (err: Error) => err.message);
      const want = await message(loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' }));
      assert.match(want, new RegExp(slug));
      assert.equal(await message(loadSnapshot(data, { cacheDir: state, previous: live, buildThreads: 'never' })), want, `${slug}: reload`);
      assert.equal(await message(loadSnapshot(data, { cacheDir: state, buildThreads: 'never' })), want, `${slug}: restart`);
      await writeFile(file, good);
      await sleep(SETTLE_MS);
    }
  });

  it('an outfit inserted in the middle: the patched index holds nothing of the memory of the index it was made from (a boot cache file is read into one allocation)', async () => {
    const data = join(root, 'data-memory');
    const state = join(root, 'state-memory');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    await loadSnapshot(data, { cacheDir: state });
    const live = await loadSnapshot(data, { cacheDir: state });
    const old = live.collections.outfits;
    const buffers = new Set<ArrayBufferLike>();
    const collect = (v: unknown): void => {
      // (Not Buffer.from's pool of small buffers, shared by any: only the memory of arrays of 4 KiB or more.)
      if (ArrayBuffer.isView(v)) v.byteLength >= 4096 && buffers.add(v.buffer);
      else if (Array.isArray(v)) v.forEach(collect);
      // (Not another collection's: the index an embed reads, or what a list item's embed reads of it.)
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (k !== 'def' && k !== 'index' && k !== 'source') collect(x);
    };
    collect(old);
    await editLines(data, 'outfits', (lines) => lines.splice(100, 0, lines[100]!.replace(/"slug":"/, '"slug":"copy-').replace(/"_id":"/, '"_id":"c')));
    const { lines, log } = infoLines();
    const next = (await loadSnapshot(data, { cacheDir: state, previous: live, log, buildThreads: 'never' })).collections.outfits;
    assert.deepEqual(loadLine(lines).patched, ['outfits'], lines.join('\n'));
    const walk = (v: unknown, path: string): void => {
      if (ArrayBuffer.isView(v)) assert.ok(!buffers.has(v.buffer), `${path} lies in the old index's memory`);
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}.${i}`));
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (k !== 'def' && k !== 'index' && k !== 'source') walk(x, `${path}.${k}`);
    };
    walk(next, 'outfits');
  });
});
