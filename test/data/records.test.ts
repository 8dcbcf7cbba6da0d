// The streaming record reader: records cut from bytes match JSON.parse of the whole file, across any
// chunk boundary; each bad file is one clear problem with file and record (issue 19).
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { DataError, readSources } from '../../src/data/load.ts';
import { arrayText, invalidUtf8At, MAX_RECORD_BYTES, readRecords, RecordsError } from '../../src/data/records.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { formatProblem } from '../../src/data/validate.ts';
import { fixture, type Fixture } from '../helpers/fixture.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'celebrity-records-'));
});
after(() => rm(dir, { recursive: true, force: true }));

let files = 0;
async function fileOf(content: string | Buffer): Promise<string> {
  const path = join(dir, `f${files++}.json`);
  await writeFile(path, content);
  return path;
}

async function readAll(path: string, options: { chunkBytes?: number; maxRecordBytes?: number; parseBytes?: number } = {}): Promise<unknown[]> {
  const out: unknown[] = [];
  await readRecords(
    path,
    (records, first) => {
      assert.equal(first, out.length, 'batches come in order, without a gap');
      out.push(...records);
    },
    options,
  );
  return out;
}

async function readError(path: string, options: { chunkBytes?: number; maxRecordBytes?: number; parseBytes?: number } = {}): Promise<RecordsError> {
  try {
    await readAll(path, options);
  } catch (err) {
    assert.ok(err instanceof RecordsError, String(err));
    return err;
  }
  assert.fail('read without an error');
}

test('records with brackets, quotes and backslashes in strings, nesting and odd spacing -> as JSON.parse reads them', async () => {
  const records = [
    { a: 'x]y}z', b: ['[', '{', '"'], c: { d: 'back\\slash\\', e: '\\"quoted\\"' } },
    { s: 'ends in a backslash\\' },
    { u: 'Zoë Martín, Björn 🎬', n: -1.5e3, t: true, f: null },
    [1, [2, [3]]],
    'a bare string, with a comma]',
    42,
    null,
  ];
  const text = ' \n[ ' + records.map((r) => JSON.stringify(r)).join(' ,\n\t') + ' ]\n ';
  for (const chunkBytes of [1, 2, 3, 7, 64, 1 << 20]) {
    assert.deepEqual(await readAll(await fileOf(text), { chunkBytes }), JSON.parse(text), `chunk ${chunkBytes}`);
  }
});

test('any array of JSON values, cut at any chunk size -> the records JSON.parse reads', async () => {
  const path = join(dir, 'property.json');
  await fc.assert(
    fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 8 }), fc.integer({ min: 1, max: 40 }), fc.boolean(), async (values, chunkBytes, pretty) => {
      const text = JSON.stringify(values, null, pretty ? 2 : undefined);
      await writeFile(path, text);
      assert.deepEqual(await readAll(path, { chunkBytes }), JSON.parse(text));
    }),
    { numRuns: 150 },
  );
});

test('an empty array -> no records; whitespace only after the closing bracket', async () => {
  assert.deepEqual(await readAll(await fileOf('[]')), []);
  assert.deepEqual(await readAll(await fileOf(' [ \n ] \n'), { chunkBytes: 1 }), []);
});

test('a chunk parsed in slices of a few records -> every record once, in order, and a bad one named by its index', async () => {
  const records = Array.from({ length: 200 }, (_, i) => ({ i, text: 'x'.repeat(i % 37), nested: [{ a: i }] }));
  const text = JSON.stringify(records);
  for (const parseBytes of [1, 60, 500, 1 << 20]) {
    assert.deepEqual(await readAll(await fileOf(text), { chunkBytes: 1 << 20, parseBytes }), records, `slices of ${parseBytes} bytes`);
    const bad = text.replace('{"i":150,', '{"i":150,,');
    assert.equal((await readError(await fileOf(bad), { chunkBytes: 1 << 20, parseBytes })).index, 150, `slices of ${parseBytes} bytes`);
  }
});

const syntax: [string, string, number | null][] = [
  ['an object, not an array', '{"a": 1}', null],
  ['an empty file', '', null],
  ['a missing comma between records', '[{"a":1} {"b":2}]', 0],
  ['a trailing comma', '[{"a":1},]', 1],
  ['a leading comma', '[,{"a":1}]', 0],
  ['data after the closing bracket', '[{"a":1}] x', null],
  ['no closing bracket', '[{"a":1}', null],
  ['a record cut short', '[{"a":"b', 0],
  ['a bad record among good ones', '[{"a":1},{"b":tru},{"c":3}]', 1],
];
for (const [what, text, index] of syntax) {
  test(`syntax: ${what} -> an error with its byte offset${index === null ? '' : ` and record ${index}`}`, async () => {
    for (const chunkBytes of [1, 4, 1024]) {
      const err = await readError(await fileOf(text), { chunkBytes });
      assert.equal(err.index, index, `chunk ${chunkBytes}: ${err.reason}`);
      assert.ok(err.offset !== null && err.offset >= 0 && err.offset <= Buffer.byteLength(text), `offset ${err.offset}`);
    }
  });
}

test('arrayText: the bytes as one array text, brackets put in place of the bytes around them and the buffer left as it was', () => {
  const bytes = Buffer.from('[{"a":"é”"},\n{"b":1}\n]', 'utf8');
  const copy = Buffer.from(bytes);
  const from = bytes.indexOf('{');
  const to = bytes.lastIndexOf('}') + 1;
  assert.equal(arrayText(bytes, from, to), '[{"a":"é”"},\n{"b":1}]');
  assert.deepEqual(bytes, copy, 'the bytes around are put back');
  // At either end of the buffer there is no byte to stand in for a bracket: joined.
  assert.equal(arrayText(bytes.subarray(from, to), 0, to - from), '[{"a":"é”"},\n{"b":1}]');
  assert.equal(arrayText(bytes.subarray(0, to), from, to), '[{"a":"é”"},\n{"b":1}]');
  assert.deepEqual(bytes, copy);
});

test('invalid UTF-8 -> an error naming the record and the byte offset (no silent U+FFFD)', async () => {
  const head = Buffer.from('[{"a":"ok"},\n{"b":"caf');
  const bytes = Buffer.concat([head, Buffer.from([0xc3, 0x28]), Buffer.from('"}]')]);
  for (const chunkBytes of [3, 1 << 20]) {
    const err = await readError(await fileOf(bytes), { chunkBytes });
    assert.equal(err.index, 1);
    assert.equal(err.reason, `invalid UTF-8 at byte offset ${head.length}`);
  }
});

test('invalidUtf8At: the first byte of a bad sequence, -1 for good text', () => {
  const cases: [number[], number][] = [
    [[...Buffer.from('Zoë 🎬 ok')], -1],
    [[0x61, 0xff], 1],
    [[0x61, 0xc0, 0x80], 1], // overlong
    [[0xed, 0xa0, 0x80], 0], // a surrogate
    [[0xf4, 0x90, 0x80, 0x80], 0], // past U+10FFFF
    [[0x61, 0xe2, 0x82], 1], // cut short
  ];
  for (const [bytes, at] of cases) assert.equal(invalidUtf8At(Uint8Array.from(bytes)), at, JSON.stringify(bytes));
});

test('a record over the limit -> an error naming the record, before it is read whole', async () => {
  const big = JSON.stringify({ a: 'x'.repeat(5000) });
  const err = await readError(await fileOf(`[{"a":1},${big},{"b":2}]`), { chunkBytes: 256, maxRecordBytes: 1000 });
  assert.equal(err.index, 1);
  assert.equal(err.reason, 'record larger than 1000 bytes');
  assert.equal(err.offset, null);
});

// Through the loader, as `serve` and `data check` report them.
async function dataDir(change: (f: Fixture) => Record<string, string | Buffer>): Promise<string> {
  const d = await mkdtemp(join(dir, 'data-'));
  const f = fixture();
  const raw = change(f);
  for (const name of ['celebrities', 'outfits', 'news', 'movies', 'reviews'] as const) {
    await writeFile(join(d, `${name}.json`), raw[name] ?? JSON.stringify(f[name], null, 2));
  }
  return d;
}

async function problemsIn(d: string): Promise<string[]> {
  try {
    await readSources(d);
  } catch (err) {
    assert.ok(err instanceof DataError, String(err));
    return err.problems.map(formatProblem);
  }
  return [];
}

test('loader: a file that is not an array -> the same problem as before streaming', async () => {
  assert.deepEqual(await problemsIn(await dataDir(() => ({ news: '{"records": []}' }))), ['news.json: must be a JSON array of records']);
});

test('loader: an empty array -> a valid empty collection', async () => {
  const d = await dataDir((f) => {
    f.reviews = [];
    return { reviews: '[]' };
  });
  const snapshot = await loadSnapshot(d);
  assert.equal(snapshot.collections.reviews.size, 0);
  assert.equal(snapshot.collections.movies.size, 2);
});

test('loader: invalid UTF-8 -> file, record and byte offset', async () => {
  const f = fixture();
  const text = JSON.stringify(f.news);
  const at = text.indexOf('wins');
  const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff]), Buffer.from(text.slice(at))]);
  assert.deepEqual(await problemsIn(await dataDir(() => ({ news: bytes }))), [`news.json, record 0: invalid UTF-8 at byte offset ${Buffer.byteLength(text.slice(0, at))}`]);
});

test(`loader: a record over ${MAX_RECORD_BYTES} bytes -> file and record, not an out-of-memory`, async () => {
  const f = fixture();
  const huge = { ...f.news[0]!, slug: 'huge', _id: 'n2', content: 'x'.repeat(MAX_RECORD_BYTES) };
  const text = `[${JSON.stringify(f.news[0])},${JSON.stringify(huge)}]`;
  assert.deepEqual(await problemsIn(await dataDir(() => ({ news: text }))), [`news.json, record 1: record larger than ${MAX_RECORD_BYTES} bytes`]);
});

test('loader: a duplicate slug at the last record -> file, record and field', async () => {
  const d = await dataDir((f) => {
    const last = { ...f.outfits[0]!, _id: 'o-last' };
    f.outfits.push({ ...f.outfits[0]!, _id: 'o2', slug: 'other' }, last);
    return {};
  });
  assert.deepEqual(await problemsIn(d), ['outfits.json, record 2, slug: duplicate slug "zoe-gala-gown"']);
});

test('loader: data edited while loading -> the new version whole, never a mix', async () => {
  const d = await dataDir(() => ({}));
  const next = fixture();
  next.celebrities[0]!.name = 'Zoë Renamed';
  next.news[0]!.title = 'A new title';
  let edits = 0;
  const sources = await readSources(d, async () => {
    if (edits++ > 0) return;
    // An editor's save: a new file renamed over the old one, two files, after every file was read once.
    for (const name of ['celebrities', 'news'] as const) {
      await writeFile(join(d, `${name}.json.tmp`), JSON.stringify(next[name]));
      await rename(join(d, `${name}.json.tmp`), join(d, `${name}.json`));
    }
  });
  assert.equal(edits, 2, 'read again after the edit');
  assert.equal(sources.celebrities[0]!.name, 'Zoë Renamed');
  assert.equal(sources.news[0]!.title, 'A new title');
});

test('loader: files that change during every read -> a problem, never a mix', async () => {
  const d = await dataDir(() => ({}));
  let n = 0;
  await assert.rejects(
    readSources(d, async () => {
      const f = fixture();
      f.news[0]!.title = `edit ${n++}`;
      await writeFile(join(d, 'news.json.tmp'), JSON.stringify(f.news));
      await rename(join(d, 'news.json.tmp'), join(d, 'news.json'));
    }),
    (err: DataError) => {
      assert.deepEqual(err.problems.map(formatProblem), ['(data directory): the files changed during each of 3 reads; try again once they are written']);
      return true;
    },
  );
});
