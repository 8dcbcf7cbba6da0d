// `celebrity-api data check|generate` (CONTRACT 6, 7): every problem printed as file, record, field;
// exit codes 0 / 1 / 2; generated data that checks clean and repeats for a seed.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { fixture } from '../helpers/fixture.ts';
import { fakeIo, tempState } from '../helpers/state.ts';

async function cli(args: string[], cwd?: string) {
  const io = fakeIo('', cwd);
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

test('data check on the bundled data -> exit 0 with the counts', async () => {
  const r = await cli(['data', 'check']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /: valid \(150 celebrities, 405 outfits, 300 news, 120 movies, 201 reviews\)\n$/);
});

test('data check prints every problem as file, record index, field: reason -> exit 1', async () => {
  const dir = await tempState(after);
  const f = fixture();
  f.outfits[0]!.slug = 'Bad Slug';
  delete f.reviews[0]!.rating;
  f.news[0]!.celebrity = 'nobody';
  for (const [name, records] of Object.entries(f)) await writeFile(join(dir, `${name}.json`), JSON.stringify(records));
  const r = await cli(['data', 'check', '--data', dir]);
  assert.equal(r.code, 1);
  assert.deepEqual(r.out.trim().split('\n').sort(), [
    'news.json, record 0, celebrity: no celebrities record with slug "nobody"',
    'outfits.json, record 0, slug: must be a slug: lower-case letters and digits separated by single hyphens',
    'reviews.json, record 0, rating: is required',
  ]);
  assert.match(r.err, /3 problems\n$/);
});

test('data generate writes a data set that checks clean, the same for the same seed', async () => {
  const dir = await tempState(after);
  const a = await cli(['data', 'generate', '--out', 'a', '--scale', '20', '--seed', 's1'], dir);
  assert.equal(a.code, 0, a.err);
  assert.match(a.out, /^wrote 20 celebrities, 16 movies, 54 outfits, 40 news, 27 reviews to a in [\d.]+ s\n$/);
  assert.equal((await cli(['data', 'check', '--data', join(dir, 'a')])).code, 0);
  await cli(['data', 'generate', '--out', 'b', '--scale', '20', '--seed', 's1'], dir);
  await cli(['data', 'generate', '--out', 'c', '--scale', '20', '--seed', 's2'], dir);
  const file = (d: string) => readFile(join(dir, d, 'outfits.json'), 'utf8');
  assert.equal(await file('b'), await file('a'));
  assert.notEqual(await file('c'), await file('a'));
});

test('usage errors -> exit 2 with a hint on stderr; --help -> exit 0', async () => {
  for (const args of [
    ['data'],
    ['data', 'frobnicate'],
    ['data', 'generate', '--scale', '5'],
    ['data', 'generate', '--out', 'x', '--scale', '0'],
    ['data', 'generate', '--out', 'x', '--scale', 'ten'],
    ['data', 'check', '--scale', '5'],
    ['data', 'check', '--nope'],
    ['data', 'check', 'extra'],
  ]) {
    const r = await cli(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, /Run 'celebrity-api data --help' for usage\./, args.join(' '));
  }
  const help = await cli(['data', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /celebrity-api data check \[--data DIR\]/);
  assert.equal((await cli(['frobnicate'])).code, 2);
  assert.equal((await cli([])).code, 2);
  assert.equal((await cli(['--help'])).code, 0);
});
