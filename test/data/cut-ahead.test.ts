// A file cut into records ahead of its read (records.ts cutRecords, collect.ts cutAhead: the build
// thread's wait for celebrities, issue 19): the read that takes the cuts gives the records, problems
// and source digests of a read that scans, and never takes cuts of another version of the file.
import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { collectFile, cutAhead } from '../../src/data/collect.ts';
import { cutRecords, readRecords, RecordsError, type RecordCuts } from '../../src/data/records.ts';
import { SourceDigester } from '../../src/data/record-groups.ts';
import { RESOURCES } from '../../src/resources/index.ts';
import { fixture } from '../helpers/fixture.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'celebrity-cut-ahead-'));
});
after(() => rm(dir, { recursive: true, force: true }));

let files = 0;
async function fileOf(content: string | Buffer): Promise<string> {
  const path = join(dir, `f${files++}.json`);
  await writeFile(path, content);
  return path;
}

async function readAll(path: string, options: { chunkBytes?: number; parseBytes?: number; cuts?: RecordCuts } = {}): Promise<{ records: unknown[]; taken: boolean }> {
  const records: unknown[] = [];
  let taken = false;
  await readRecords(
    path,
    (batch, first) => {
      assert.equal(first, records.length, 'batches come in order, without a gap');
      records.push(...batch);
    },
    { ...options, onCutsTaken: () => (taken = true) },
  );
  return { records, taken };
}

/** Records of various sizes (one larger than the small chunks below), with brackets and quotes in strings. */
const RECORDS = Array.from({ length: 40 }, (_, i) => ({ i, s: `x}]"{[${'é'.repeat(i % 7)}`, nested: { a: [i, { b: '\\' }] }, pad: 'p'.repeat(i === 17 ? 300 : i * 3) }));

test('cutRecords, then a read that takes the cuts -> the records JSON.parse reads, at any chunk and batch size', async () => {
  const text = ' [\n' + RECORDS.map((r) => JSON.stringify(r)).join(' ,\n  ') + '\n] \n';
  const path = await fileOf(text);
  for (const chunkBytes of [1, 7, 64, 333, 1 << 20]) {
    const cuts = await cutRecords(path, undefined, { chunkBytes });
    assert.ok(cuts, `cut at chunk ${chunkBytes}`);
    assert.equal(cuts.count, RECORDS.length);
    for (let k = 0; k < cuts.count; k++) assert.deepEqual(JSON.parse(Buffer.from(text).subarray(cuts.starts[k], cuts.ends[k]).toString()), RECORDS[k]);
    for (const readChunk of [1, 50, 400, 1 << 20]) {
      for (const parseBytes of [1, 200, 32 << 10]) {
        const got = await readAll(path, { cuts, chunkBytes: readChunk, parseBytes });
        assert.equal(got.taken, true);
        assert.deepEqual(got.records, RECORDS, `chunk ${chunkBytes}, read chunk ${readChunk}, parse ${parseBytes}`);
      }
    }
  }
});

test('an empty array cut ahead -> no records', async () => {
  const path = await fileOf('[ ]');
  const cuts = await cutRecords(path);
  assert.equal(cuts?.count, 0);
  assert.deepEqual(await readAll(path, { cuts: cuts! }), { records: [], taken: true });
});

test('a file that is not a well-formed array of objects -> no cuts: its read words the problem as always', async () => {
  for (const text of ['{"a":1}', '[{"a":1},]', '[{"a":1}', '[{"a":1}] x', '[{"a":1}, 2]', '[{"a":1}, "s"]', '[{"a":1]]', '[[1]]']) {
    assert.equal(await cutRecords(await fileOf(text)), null, text);
  }
  assert.equal(await cutRecords(await fileOf(Buffer.concat([Buffer.from('[{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]')]))), null, 'invalid UTF-8');
  assert.equal(await cutRecords(await fileOf(`[{"a":"${'x'.repeat(100)}"}]`), undefined, { maxRecordBytes: 50 }), null, 'a record over the limit');
});

test('the file edited after it was cut (same size, records moved) -> the cuts are not taken; the records are the new ones', async () => {
  const a = '[{"a":1},{"bb":22}]';
  const b = '[{"aa":11},{"b":2}]';
  assert.equal(a.length, b.length);
  const path = await fileOf(a);
  const cuts = (await cutRecords(path))!;
  await writeFile(path, b);
  // A time apart from the first write's for certain (two writes within one clock tick share their mtime).
  await utimes(path, new Date(2001, 0, 1), new Date(2001, 0, 1));
  assert.deepEqual(await readAll(path, { cuts }), { records: JSON.parse(b), taken: false });
});

test('cuts of the same identity whose records are not where they say -> an error, never bytes parsed as other records', async () => {
  const path = await fileOf('[{"a":1},{"b":2}]');
  const cuts = (await cutRecords(path))!;
  const moved = { ...cuts, starts: cuts.starts.map((s) => s + 1), ends: cuts.ends.map((e) => e + 1) };
  await assert.rejects(readAll(path, { cuts: moved }), (err) => err instanceof RecordsError && /changed while it was read/.test(err.reason));
  const past = { ...cuts, starts: Float64Array.of(cuts.starts[0]!, 100), ends: Float64Array.of(cuts.ends[0]!, 120) };
  await assert.rejects(readAll(path, { cuts: past }), (err) => err instanceof RecordsError && /changed while it was read/.test(err.reason));
});

/** A file of outfits (valid but for a duplicate _id at record 150) large enough for several source groups. */
function outfitsText(): string {
  const base = fixture().outfits[0]!;
  const list = Array.from({ length: 200 }, (_, i) => ({ ...base, _id: `o${i === 150 ? 3 : i}`, slug: `outfit-${i}`, title: `Outfit ${i} «${i % 5}»` }));
  return JSON.stringify(list, null, 1);
}

test('collectFile after cutAhead -> the same records, problems and source digests as without, and the cuts taken once', async () => {
  const def = RESOURCES.outfits;
  const path = await fileOf(outfitsText());
  const collect = async () => {
    const digester = new SourceDigester();
    const records: unknown[] = [];
    const got = await collectFile(def, path, { keep: false, digester, each: (r, i) => (records[i] = r) });
    return { problems: got.problems, records, sources: digester.finish(records.length) };
  };
  const scanned = await collect();
  assert.equal(scanned.problems.length, 1);
  assert.equal(scanned.problems[0]!.index, 150);
  assert.ok(scanned.sources && scanned.sources.length === 4 * 4);
  // Told when a read takes the cut file's digests (the cuts were taken).
  const adopt = SourceDigester.prototype.adopt;
  let adopted = 0;
  SourceDigester.prototype.adopt = function (this: SourceDigester, from: SourceDigester) {
    adopted++;
    adopt.call(this, from);
  };
  after(() => void (SourceDigester.prototype.adopt = adopt));
  await cutAhead(path);
  const cut = await collect();
  assert.deepEqual(cut, scanned);
  assert.equal(adopted, 1);
  // Taken: an edit now (the same size and records) is read as it is, not through the cuts.
  await cutAhead(path);
  await writeFile(path, outfitsText().replaceAll('"o3"', '"o9"'));
  await utimes(path, new Date(2002, 0, 1), new Date(2002, 0, 1));
  const edited = await collect();
  assert.equal(adopted, 1);
  assert.deepEqual(
    edited.problems.map((p) => [p.index, p.reason]),
    [9, 150].map((i) => [i, 'duplicate _id "o9"']),
  );
  // The digests of the bytes read (the groups of records 0-63 and 128-191 changed), not of the cut ones.
  assert.deepEqual(
    [0, 1, 2, 3].map((g) => edited.sources!.subarray(g * 4, g * 4 + 4).join() === scanned.sources!.subarray(g * 4, g * 4 + 4).join()),
    [false, true, false, true],
  );
});
