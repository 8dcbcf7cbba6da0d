// `data schema` and `data check` agree: the same broken records, one per case, are refused by both
// (the loader names the field; the JSON Schema, run by ajv as an editor would, refuses the file), the
// same edge cases pass both, the bundled data passes the schemas, and the committed data/schemas/ that
// .vscode/settings.json maps onto data/*.json are the ones the command writes.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { main } from '../../src/cli/main.ts';
import { schemaFile } from '../../src/cli/data.ts';
import { DataError, readSources } from '../../src/data/load.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';
import { dataFileSchema } from '../../src/resources/json-schema.ts';
import type { CollectionName } from '../../src/resources/types.ts';
import { fixture, type Fixture } from '../helpers/fixture.ts';
import { fakeIo } from '../helpers/state.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validators = Object.fromEntries(RESOURCE_LIST.map((def) => [def.name, ajv.compile(dataFileSchema(def))])) as Record<CollectionName, ValidateFunction>;

/** [what, collection, change to its record 0] */
const BROKEN: [string, CollectionName, (r: Record<string, unknown>) => void][] = [
  ['a required field missing', 'reviews', (r) => delete r.rating],
  ['null in a required field', 'celebrities', (r) => (r.name = null)],
  ['a string where a number goes', 'outfits', (r) => (r.likesCount = '10')],
  ['a fractional integer', 'outfits', (r) => (r.likesCount = 1.5)],
  ['a number below its minimum', 'outfits', (r) => (r.likesCount = -1)],
  ['a rating above 10', 'reviews', (r) => (r.rating = 10.5)],
  ['a score above 100', 'reviews', (r) => (r.scores = { criticsScore: 101 })],
  ['an unknown field (a typo)', 'movies', (r) => (r.titel = 'x')],
  ['an unknown field in a nested object', 'reviews', (r) => (r.author = { name: 'A', homepage: 'x' })],
  ['a slug that is not one', 'news', (r) => (r.slug = 'Zoë Wins')],
  ['a reference that is not slug-shaped', 'outfits', (r) => (r.celebrity = 'Zoe Martin')],
  ['a URL without http(s)', 'celebrities', (r) => (r.profileImage = 'ftp://x.example/a.jpg')],
  ['a date that does not exist', 'celebrities', (r) => (r.born = '1990-02-30')],
  ['a date in another format', 'celebrities', (r) => (r.born = '15/03/1990')],
  ['a timestamp without a zone', 'news', (r) => (r.publishDate = '2025-04-01T10:00:00')],
  ['a status outside the enum', 'movies', (r) => (r.status = 'cancelled')],
  ['a boolean as a string', 'news', (r) => (r.featured = 'true')],
  ['null inside an array', 'movies', (r) => (r.genre = ['Drama', null])],
  ['a cast entry with neither celebrity nor name', 'movies', (r) => (r.cast = [{ character: 'Ada' }])],
  ['a social media link that is not a URL', 'celebrities', (r) => (r.socialMedia = { instagram: 'zoe' })],
  ['an object where an array goes', 'outfits', (r) => (r.tags = { a: 1 })],
];
/** Edge cases both accept. */
const FINE: [string, CollectionName, (r: Record<string, unknown>) => void][] = [
  ['an optional field null', 'celebrities', (r) => (r.nationality = null)],
  ['an optional object absent', 'reviews', (r) => delete r.scores],
  ['a timestamp without milliseconds', 'news', (r) => (r.publishDate = '2025-04-01T10:00:00Z')],
  ['a leap day', 'celebrities', (r) => (r.born = '2000-02-29')],
  ['a null social media entry', 'celebrities', (r) => (r.socialMedia = { x: null })],
  ['a cast entry by name only', 'movies', (r) => (r.cast = [{ name: 'Sam', character: null }])],
];

async function loaderProblems(data: Fixture): Promise<string[]> {
  try {
    await readSources(data);
    return [];
  } catch (err) {
    if (!(err instanceof DataError)) throw err;
    return err.problems.map((p) => `${p.file}:${p.index}:${p.field}`);
  }
}

for (const [what, collection, change] of BROKEN) {
  test(`${what} (${collection}): data check and the schema both refuse it`, async () => {
    const data = fixture();
    change(data[collection][0]!);
    const problems = await loaderProblems(data);
    assert.ok(problems.some((p) => p.startsWith(`${collection}.json:0:`)), `data check: ${problems}`);
    assert.equal(validators[collection](data[collection]), false, 'the schema accepted it');
  });
}

for (const [what, collection, change] of FINE) {
  test(`${what} (${collection}): data check and the schema both accept it`, async () => {
    const data = fixture();
    change(data[collection][0]!);
    assert.deepEqual(await loaderProblems(data), []);
    assert.equal(validators[collection](data[collection]), true, JSON.stringify(validators[collection].errors));
  });
}

test('the bundled data passes every schema', async () => {
  for (const def of RESOURCE_LIST) {
    const records = JSON.parse(await readFile(join(ROOT, 'data', def.file), 'utf8'));
    assert.equal(validators[def.name](records), true, `${def.file}: ${JSON.stringify(validators[def.name].errors?.slice(0, 3))}`);
  }
});

let out: string;
before(async () => {
  out = await mkdtemp(join(tmpdir(), 'celebrity-schema-'));
});
after(() => rm(out, { recursive: true, force: true }));

test('data schema --out DIR writes one schema per file; data/schemas/ and .vscode/settings.json are current', async () => {
  const io = fakeIo('', ROOT);
  assert.equal(await main(['data', 'schema', '--out', out], io), 0, io.err());
  assert.match(io.out(), /^wrote celebrities\.schema\.json, outfits\.schema\.json, news\.schema\.json, movies\.schema\.json, reviews\.schema\.json to /);
  const settings = JSON.parse(await readFile(join(ROOT, '.vscode/settings.json'), 'utf8'));
  for (const def of RESOURCE_LIST) {
    const written = await readFile(join(out, schemaFile(def.name)), 'utf8');
    assert.equal(await readFile(join(ROOT, 'data', 'schemas', schemaFile(def.name)), 'utf8'), written, `schemas/ is stale: run celebrity-api data schema --out data/schemas`);
    assert.ok(settings['json.schemas'].some((m: { fileMatch: string[]; url: string }) => m.fileMatch.includes(`/data/${def.file}`) && m.url === `./data/schemas/${schemaFile(def.name)}`), def.file);
  }
});

test('data schema without --out, or with data flags -> usage error, exit 2', async () => {
  for (const args of [['data', 'schema'], ['data', 'schema', '--out', out, '--data', 'x']]) {
    const io = fakeIo('', ROOT);
    assert.equal(await main(args, io), 2);
    assert.match(io.err(), /schema (needs --out DIR|takes only --out)/);
  }
});
