// After an edit of one data file, a collection patched from its index before the edit (patch.ts)
// answers exactly as one built from every record of the same files, on a reload (from the live
// snapshot) and on a restart (from the boot cache); an edit it does not handle is built whole.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEPENDS } from '../../src/data/boot-cache-format.ts';
import { knownCollection } from '../../src/data/known.ts';
import { loadLinked } from '../../src/data/load.ts';
import { patchable, patchCollection } from '../../src/data/patch.ts';
import { RECORD_GROUP } from '../../src/data/record-groups.ts';
import { buildSearchIndex, searchIndexRenumbered, searchIndexWith } from '../../src/data/search-index.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { COLLECTIONS, type CollectionName } from '../../src/resources/types.ts';
import { assertSameAnswers, assertSameRefusals, editLines, editRecord, infoLines, SETTLE_MS } from '../helpers/edits.ts';

/**
 * A build of the files with nothing patched: `name` (the edited collection) and what embeds it built
 * from every record, the other collections kept from `before` (itself such a build of the same files
 * but that one), or all built when there is none.
 */
async function fullBuild(data: string, name: CollectionName, before?: Snapshot): Promise<Snapshot> {
  const { lines, log } = infoLines();
  const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never', patch: false, log, ...(before ? { previous: before } : {}) });
  const line = lines.find((l) => l.startsWith('data read and indexed')) ?? '';
  for (const n of COLLECTIONS.filter((c) => DEPENDS[c].includes(name))) assert.ok(new RegExp(`"built":\\[[^\\]]*"${n}"`).test(line), `${n} built whole: ${lines.join('\n')}`);
  return full;
}

let root: string;
before(async () => (root = await mkdtemp(join(tmpdir(), 'patch-'))));
after(() => rm(root, { recursive: true, force: true }));

/**
 * `count` records added at the end of a data file: copies of records near its start, each with its
 * own `_id`, slug and title and another category; the id of the first.
 */
async function appendRecords(data: string, name: CollectionName, count: number): Promise<number> {
  let first = 0;
  await editLines(data, name, (lines) => {
    const close = lines.lastIndexOf(']');
    first = close - 1;
    const added = Array.from({ length: count }, (_, k) => {
      const r = JSON.parse(lines[1 + (k % 50)]!.replace(/,$/, '')) as Record<string, unknown>;
      r._id = `added${first + k}`;
      r.slug = `added-record-${first + k}`;
      r.title = `Added Record Number ${first + k} ${k % 3 === 0 ? 'Zqx' : ''}`;
      if ('category' in r) r.category = k % 2 === 0 ? 'Added Category' : r.category;
      return JSON.stringify(r);
    });
    lines[close - 1] += ',';
    lines.splice(close, 0, added.join(',\n'));
  });
  return first;
}

/** The last `count` records of a data file removed. */
async function removeLast(data: string, name: CollectionName, count: number): Promise<void> {
  await editLines(data, name, (lines) => {
    const close = lines.lastIndexOf(']');
    lines.splice(close - count, count);
    lines[close - count - 1] = lines[close - count - 1]!.replace(/,$/, '');
  });
}

/**
 * `count` records inserted before record `at` of a data file: copies of the records from there, each
 * with its own `_id`, slug and title (and `fields` set); the ids they get.
 */
async function insertRecords(data: string, name: CollectionName, at: number, count: number, fields: Record<string, unknown> = {}): Promise<number[]> {
  await editLines(data, name, (lines) => {
    const added = Array.from({ length: count }, (_, k) => {
      const r = JSON.parse(lines[at + 1 + k]!.replace(/,$/, '')) as Record<string, unknown>;
      r._id = `inserted${at}x${k}`;
      r.slug = `inserted-record-${at}-${k}`;
      r.title = `Inserted Record ${at} ${k} ${k % 2 === 0 ? 'Qzx' : ''}`;
      Object.assign(r, fields);
      return `${JSON.stringify(r)},`;
    });
    lines.splice(at + 1, 0, ...added);
  });
  return Array.from({ length: count }, (_, k) => at + k);
}

/** Records `at` to `at + count - 1` of a data file removed (not the last). */
async function removeRecords(data: string, name: CollectionName, at: number, count: number): Promise<void> {
  await editLines(data, name, (lines) => {
    lines.splice(at + 1, count);
  });
}

const flipFirst = (s: string) => (s[0] === s[0]!.toUpperCase() ? s[0]!.toLowerCase() : s[0]!.toUpperCase()) + s.slice(1);

/** An edit, the collection and records it touches, and whether it is patched (else built whole). */
interface Edit {
  readonly what: string;
  readonly name: CollectionName;
  readonly patched: boolean;
  apply(data: string): Promise<number[]>;
}

const mid = 400;
const EDITS: Edit[] = [
  { what: 'a title letter in the other case', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', mid, (r) => (r.title = flipFirst(r.title as string))), [mid]) },
  { what: 'a longer description', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', mid + 1, (r) => (r.description = `${r.description as string} And a much longer tail on it, é ü.`)), [mid + 1]) },
  {
    what: 'two records in two groups, one shorter',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      await editRecord(d, 'outfits', 3, (r) => (r.event = 'x'));
      await editRecord(d, 'outfits', 3 + 5 * RECORD_GROUP, (r) => (r.designer = 'Someone Else Entirely'));
      return [3, 3 + 5 * RECORD_GROUP];
    },
  },
  { what: 'the last record (a partial group)', name: 'outfits', patched: true, apply: async (d) => (await editLines(d, 'outfits', (l) => (l[l.length - 3] = l[l.length - 3]!.replace('"price":"', '"price":"about '))), []) },
  { what: 'a news title letter case', name: 'news', patched: true, apply: async (d) => (await editRecord(d, 'news', 10, (r) => (r.title = flipFirst(r.title as string))), [10]) },
  // Patched: celebrities (its link target) stands in as it was before the edit, then is kept (no filmography changed: filmography.ts).
  { what: 'a movie synopsis', name: 'movies', patched: true, apply: async (d) => (await editRecord(d, 'movies', 7, (r) => (r.synopsis = 'New words.')), [7]) },
  // A search text changed: the search index is built again from the texts, the title order patched.
  { what: 'a title (search text and sort key)', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', mid, (r) => (r.title = 'Zebra Qxj Title')), [mid]) },
  {
    what: 'titles with a quote, a backslash and accents, one read from the table (a trigram twice), one another\'s',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const other = (JSON.parse((await readFile(join(d, 'outfits.json'), 'utf8')).split('\n')[9]!.replace(/,$/, '')) as { title: string }).title;
      await editRecord(d, 'outfits', 5, (r) => (r.title = 'Él "dijo" \\ Ça'));
      await editRecord(d, 'outfits', 6, (r) => (r.title = 'Abcabcabc Abc'));
      await editRecord(d, 'outfits', 7 + RECORD_GROUP, (r) => (r.title = other));
      return [5, 6, 7 + RECORD_GROUP];
    },
  },
  // The next title edit reads the texts of those records from the index they are in.
  { what: 'a title after those', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', 100, (r) => (r.title = `${r.title as string} Redux`)), [100]) },
  {
    what: 'news titles (texts grouped: one joins another group, one leaves its own)',
    name: 'news',
    patched: true,
    apply: async (d) => {
      const lines = (await readFile(join(d, 'news.json'), 'utf8')).split('\n');
      const other = (JSON.parse(lines[31]!.replace(/,$/, '')) as { title: string }).title;
      await editRecord(d, 'news', 12, (r) => (r.title = other));
      await editRecord(d, 'news', 30, (r) => (r.title = 'A headline no one wrote before'));
      return [12, 30];
    },
  },
  { what: 'a sort key', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', 20, (r) => (r.likesCount = 999_999)), [20]) },
  {
    what: 'sort keys of three records, one to none, two to the same time (ties by _id)',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      await editRecord(d, 'outfits', 40, (r) => delete r.likesCount);
      await editRecord(d, 'outfits', 41, (r) => (r.createdAt = '2020-01-01T00:00:00.000Z'));
      await editRecord(d, 'outfits', 300, (r) => ((r.createdAt = '2020-01-01T00:00:00.000Z'), (r.likesCount = 0)));
      return [40, 41, 300];
    },
  },
  // `views` (the popular sort's key) is not served: the index keeps each record's (SortDef `kept`).
  { what: 'a news view count and date', name: 'news', patched: true, apply: async (d) => (await editRecord(d, 'news', 11, (r) => ((r.views = 1), (r.publishDate = '2001-02-03T04:05:06.000Z'))), [11]) },
  // A filter value changed: that filter's table made again from every record's key.
  { what: 'a filter value', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', 21, (r) => (r.category = 'Brand New Category')), [21]) },
  {
    what: "filter values: one gone, one another record's, the last of one key (the key gone), a case change (the same key)",
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const records = (await readFile(join(d, 'outfits.json'), 'utf8')).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l.replace(/,$/, '')) as { category?: string });
      // (Record 21 alone has the category the edit before gave it.)
      assert.equal(records.filter((r) => r.category === 'Brand New Category').length, 1);
      await editRecord(d, 'outfits', 50, (r) => delete r.brand);
      await editRecord(d, 'outfits', 51, (r) => (r.category = records[52 + RECORD_GROUP]!.category));
      await editRecord(d, 'outfits', 21, (r) => (r.category = records[22]!.category));
      await editRecord(d, 'outfits', 53, (r) => (r.category = (r.category as string).toUpperCase()));
      return [21, 50, 51, 53];
    },
  },
  { what: 'a news featured flag (a boolean filter)', name: 'news', patched: true, apply: async (d) => (await editRecord(d, 'news', 13, (r) => (r.featured = !r.featured)), [13]) },
  // A range value changed: the range index made again (and the rating orders patched).
  { what: 'review ratings (a range value and two sort keys)', name: 'reviews', patched: true, apply: async (d) => (await editRecord(d, 'reviews', 3, (r) => (r.rating = 9.9)), await editRecord(d, 'reviews', 4, (r) => (r.rating = 0)), [3, 4]) },
  { what: 'an _id', name: 'outfits', patched: false, apply: async (d) => (await editRecord(d, 'outfits', 54, (r) => (r._id = `${r._id as string}x`)), [54]) },
  // A slug changed: the slug table's slots made again.
  { what: 'a slug', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', 22, (r) => (r.slug = 'a-new-slug-for-it')), [22]) },
  {
    what: 'two records swap their slugs, in two groups',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const lines = (await readFile(join(d, 'outfits.json'), 'utf8')).split('\n');
      const slugOfLine = (k: number) => (JSON.parse(lines[k + 1]!.replace(/,$/, '')) as { slug: string }).slug;
      const [a, b] = [slugOfLine(24), slugOfLine(24 + 3 * RECORD_GROUP)];
      await editLines(d, 'outfits', (l) => {
        l[25] = l[25]!.replace(`"slug":"${a}"`, `"slug":"${b}"`);
        l[25 + 3 * RECORD_GROUP] = l[25 + 3 * RECORD_GROUP]!.replace(`"slug":"${b}"`, `"slug":"${a}"`);
      });
      return [24, 24 + 3 * RECORD_GROUP];
    },
  },
  {
    what: 'the embedded record',
    name: 'outfits',
    patched: false,
    apply: async (d) => {
      const other = (JSON.parse((await readFile(join(d, 'outfits.json'), 'utf8')).split('\n')[101]!.replace(/,$/, '')) as { celebrity: string }).celebrity;
      await editRecord(d, 'outfits', 23, (r) => (r.celebrity = other));
      return [23];
    },
  },
  // Records added at the end: their groups new, the last one before them changed, every order,
  // filter table, search gram and the slug table's slots made for the new count.
  { what: 'a record added at the end', name: 'outfits', patched: true, apply: async (d) => [await appendRecords(d, 'outfits', 1)] },
  { what: 'records added at the end, past a group', name: 'outfits', patched: true, apply: async (d) => [await appendRecords(d, 'outfits', RECORD_GROUP + 3)] },
  // News' popular sort's key (`views`) is not served: an added record placed by the kept keys.
  { what: 'a news item added at the end', name: 'news', patched: true, apply: async (d) => [await appendRecords(d, 'news', 1)] },
  // Records removed from the end: out of every order, filter table, search gram, and the slug table made for the new count.
  { what: 'a record removed from the end', name: 'outfits', patched: true, apply: async (d) => (await removeLast(d, 'outfits', 1), []) },
  { what: 'records removed from the end, a group and more', name: 'outfits', patched: true, apply: async (d) => (await removeLast(d, 'outfits', RECORD_GROUP + 5), []) },
  {
    what: 'records removed from the end to a group boundary (no group changed)',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const count = (await readFile(join(d, 'outfits.json'), 'utf8')).split('\n').filter((l) => l.startsWith('{')).length;
      await removeLast(d, 'outfits', count % RECORD_GROUP || RECORD_GROUP);
      return [];
    },
  },
  // The last group's sort digest covered the removed records too, so the others' keys are compared: news' `views` kept, not served.
  { what: 'a news item removed from the end', name: 'news', patched: true, apply: async (d) => (await removeLast(d, 'news', 2), []) },
  // Records removed or inserted in the middle: every later record numbered anew (patch-shift.ts).
  { what: 'a record removed', name: 'outfits', patched: true, apply: async (d) => (await editLines(d, 'outfits', (l) => l.splice(30, 1)), []) },
  { what: 'a record added', name: 'outfits', patched: true, apply: async (d) => (await editLines(d, 'outfits', (l) => l.splice(30, 0, l[31]!.replace(/"slug":"/, '"slug":"copy-').replace(/"_id":"/, '"_id":"c'))), [29]) },
  { what: 'three records inserted in the middle, one with a new category and the first likes', name: 'outfits', patched: true, apply: (d) => insertRecords(d, 'outfits', 200, 3, { category: 'Inserted Category', likesCount: 1_000_000 }) },
  { what: 'records removed in the middle, a group and more', name: 'outfits', patched: true, apply: async (d) => (await removeRecords(d, 'outfits', 100, RECORD_GROUP + 6), []) },
  { what: 'a record inserted first', name: 'outfits', patched: true, apply: (d) => insertRecords(d, 'outfits', 0, 1) },
  {
    what: 'a record inserted first with the category and brand of the last (keys numbered by their first records: in another order now)',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const lines = (await readFile(join(d, 'outfits.json'), 'utf8')).split('\n');
      const last = JSON.parse(lines[lines.lastIndexOf(']') - 1]!) as { category?: string; brand?: string };
      return insertRecords(d, 'outfits', 0, 1, { _id: 'insertedWithLastKeys', slug: 'inserted-with-last-keys', category: last.category, brand: last.brand });
    },
  },
  { what: 'the first record removed', name: 'outfits', patched: true, apply: async (d) => (await removeRecords(d, 'outfits', 0, 1), []) },
  { what: 'a whole group inserted at a group boundary', name: 'outfits', patched: true, apply: (d) => insertRecords(d, 'outfits', 2 * RECORD_GROUP, RECORD_GROUP) },
  // Groups numbered anew: their digests unknown, so a sort key and a filter value edited in one are compared record by record.
  { what: 'a sort key and a filter value in a group numbered anew', name: 'outfits', patched: true, apply: async (d) => (await editRecord(d, 'outfits', 250, (r) => ((r.likesCount = 7), (r.category = 'Other Category Now'))), [250]) },
  {
    what: 'a record inserted and another removed further on, a record moved',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const ids = await insertRecords(d, 'outfits', 10, 1);
      await removeRecords(d, 'outfits', 300, 2);
      await editLines(d, 'outfits', (l) => l.splice(400, 0, ...l.splice(40, 1)));
      return ids;
    },
  },
  {
    what: 'a record inserted and the next but one given other likes (in the group that did not match)',
    name: 'outfits',
    patched: true,
    apply: async (d) => {
      const ids = await insertRecords(d, 'outfits', 150, 1);
      await editRecord(d, 'outfits', 152, (r) => (r.likesCount = 12_345));
      return [...ids, 152];
    },
  },
  { what: 'review ratings inserted in the middle (a range value)', name: 'reviews', patched: true, apply: (d) => insertRecords(d, 'reviews', 20, 2, { rating: 3.3 }) },
  // News' popular sort's key (`views`) is not served: inserted records placed by the kept keys.
  { what: 'a news item inserted in the middle', name: 'news', patched: true, apply: (d) => insertRecords(d, 'news', 20, 1) },
  {
    // (Record 63's served JSON is as it was: only its kept key tells it from the old record of its slug.)
    what: 'news items inserted in the middle, the most viewed, and a view count in a group numbered anew',
    name: 'news',
    patched: true,
    apply: async (d) => {
      const ids = await insertRecords(d, 'news', 60, 2, { views: 10_000_000 });
      await editRecord(d, 'news', 63, (r) => (r.views = 7));
      return [...ids, 63];
    },
  },
  // Removed: no record to place, so no key to read (the others keep their places).
  { what: 'news items removed in the middle', name: 'news', patched: true, apply: async (d) => (await removeRecords(d, 'news', 40, 2), []) },
];

describe('a patch after an edit', () => {
  it("each sort key of a patchable collection reads back from its records' JSON for every record, or for none that has one (so a changed record's check speaks for the others)", async () => {
    const data = join(root, 'data-keys');
    await writeDataset(data, { scale: 100 });
    const linked = await loadLinked(data);
    const snapshot = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
    for (const def of RESOURCE_LIST.filter(patchable)) {
      const known = knownCollection(snapshot.collections[def.name]);
      for (const sort of def.sorts) {
        let same = 0;
        let other = 0;
        for (const r of linked[def.name]) {
          const a = sort.key(r);
          const b = sort.key(known.get(r.slug)! as never);
          if (a === b || (a === null && b === undefined)) same++;
          else if (a !== null && a !== undefined) other++;
        }
        assert.ok(other === 0 || same === 0 || linked[def.name].every((r) => sort.key(r) === null), `${def.name} ${sort.name}: ${same} read back, ${other} not`);
      }
      for (const r of linked[def.name]) assert.equal(known.get(r.slug)!._id, r._id, `${def.name} _id`);
    }
  });

  it('answers as a full build of the same files, on reloads and restarts; what it does not handle is built whole', async () => {
    const data = join(root, 'data');
    const state = join(root, 'state');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    let live = await loadSnapshot(data, { cacheDir: state });
    let full: Snapshot | undefined;
    for (const e of EDITS) {
      const ids = { [e.name]: await e.apply(data) };
      full = await fullBuild(data, e.name, full);
      // A reload: from the live snapshot.
      const reload = infoLines();
      const reloaded = await loadSnapshot(data, { cacheDir: state, previous: live, log: reload.log, buildThreads: 'never' });
      const line = reload.lines.find((l) => l.startsWith('data read and indexed'))!;
      assert.ok(line, `${e.what}: ${reload.lines.join('\n')}`);
      assert.equal(line.includes(`"patched":["${e.name}"]`), e.patched, `${e.what}: ${line}`);
      assertSameAnswers(full, reloaded, ids);
      // Every order and the range index as a full build lays them out (the pages above read a few places of each).
      assert.deepEqual(reloaded.collections[e.name].orders, full.collections[e.name].orders, `${e.what}: orders`);
      assert.deepEqual(reloaded.collections[e.name].range, full.collections[e.name].range, `${e.what}: range`);
      assert.deepEqual(reloaded.collections[e.name].sortKeys, full.collections[e.name].sortKeys, `${e.what}: kept sort keys`);
      live = reloaded;
    }
  });

  it('a patched index holds nothing of the memory of the arenas it replaced (a boot cache file is read into one allocation)', async () => {
    const data = join(root, 'data-memory');
    const state = join(root, 'state-memory');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    await loadSnapshot(data, { cacheDir: state });
    const live = await loadSnapshot(data, { cacheDir: state });
    const old = live.collections.outfits;
    await EDITS[0]!.apply(data);
    await editRecord(data, 'outfits', 20, (r) => (r.likesCount = 999_999));
    const next = (await loadSnapshot(data, { cacheDir: state, previous: live, buildThreads: 'never' })).collections.outfits;
    const gone = new Set([old.list.bytes.buffer, old.detail.own.bytes.buffer]);
    const walk = (v: unknown, path: string): void => {
      if (ArrayBuffer.isView(v)) assert.ok(!gone.has(v.buffer), `${path} lies in the old arenas' memory`);
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}.${i}`));
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (k !== 'def' && k !== 'index') walk(x, `${path}.${k}`);
    };
    assert.notEqual(next.list.bytes.buffer, old.list.bytes.buffer);
    walk(next, 'outfits');
  });

  it("groups cut across the reader's chunks (read 3 KB at a time): their bytes kept past the chunk", async () => {
    const data = join(root, 'data-chunks');
    await writeDataset(data, { scale: 200 });
    const live = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
    const ids = [5, 70, 71, 200];
    for (const k of ids) await editRecord(data, 'outfits', k, (r) => (r.title = `${r.title as string} and more`));
    const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
    const others = DEPENDS.outfits.filter((n) => n !== 'outfits');
    const known = Object.fromEntries(others.map((n) => [n, knownCollection(live.collections[n])]));
    const got = await patchCollection(data, RESOURCES.outfits, live.collections.outfits, (t) => live.collections[t], known, { chunkBytes: 3000 });
    assert.ok(got.index !== null, got.index === null ? got.why : '');
    assertSameAnswers(full, { ...live, collections: { ...live.collections, outfits: got.index } }, { outfits: ids });
  });

  it('movies (genres: several keys a record, numbered by first appearance) with records inserted and removed in the middle', async () => {
    // (A load builds movies whole after an edit of movies.json: celebrities, its link target, read them back. Patched here directly.)
    const data = join(root, 'data-movies');
    await writeDataset(data, { scale: 200 });
    let live = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
    const edits: [string, (d: string) => Promise<number[]>][] = [
      [
        'one inserted with genres none held first, in that order, two more further on, one before the first to hold three genres, with two of them the other way round',
        async (d) => {
          const second = JSON.parse((await readFile(join(d, 'movies.json'), 'utf8')).split('\n')[2]!.replace(/,$/, '')) as { genre: string[] };
          assert.ok(second.genre.length >= 2);
          await insertRecords(d, 'movies', 30, 1, { genre: ['Zeta Genre', 'Alpha Genre'] });
          await insertRecords(d, 'movies', 100, 2);
          await insertRecords(d, 'movies', 1, 1, { genre: second.genre.slice(0, 2).reverse() });
          return [1, 31, 101, 102];
        },
      ],
      // (Records no review names: those inserted. The record after the first is again the first to hold its genres: their order read from its JSON.)
      ['those removed again', async (d) => (await removeRecords(d, 'movies', 1, 1), await removeRecords(d, 'movies', 30, 1), await removeRecords(d, 'movies', 99, 2), [])],
    ];
    for (const [what, edit] of edits) {
      const ids = await edit(data);
      const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
      const others = DEPENDS.movies.filter((n) => n !== 'movies');
      const known = Object.fromEntries(others.map((n) => [n, knownCollection(live.collections[n])]));
      const got = await patchCollection(data, RESOURCES.movies, live.collections.movies, (t) => live.collections[t], known);
      assert.ok(got.index !== null, got.index === null ? `${what}: ${got.why}` : '');
      const patched = { ...full, collections: { ...full.collections, movies: got.index } };
      assertSameAnswers(full, patched, { movies: ids }, what);
      assert.deepEqual(got.index.orders, full.collections.movies.orders, `${what}: orders`);
      live = patched;
    }
  });

  it('an invalid edit is never patched: a reload and a restart report what a full build reports', async () => {
    const data = join(root, 'data-invalid');
    const state = join(root, 'state-invalid');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    const live = await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'outfits.json');
    const good = await readFile(file, 'utf8');
    const other = (JSON.parse(good.split('\n')[3]!.replace(/,$/, '')) as { slug: string }).slug;
    const invalid: [string, (d: string) => Promise<unknown>][] = [
      ["another record's slug", (d) => editRecord(d, 'outfits', 40, (r) => (r.slug = other))],
      ['a title that is not a string', (d) => editRecord(d, 'outfits', 41, (r) => (r.title = 12))],
      ['a title and a slug no slug may be', (d) => editRecord(d, 'outfits', 42, (r) => ((r.title = 'A New One'), (r.slug = 'Not A Slug!')))],
      ['a record cut short', (d) => editLines(d, 'outfits', (l) => (l[44] = l[44]!.slice(0, 50)))],
      // Appended: its groups are new, so the other records' _ids are not among those it is read with.
      ["a record added at the end with another record's _id", async (d) => {
        const first = JSON.parse(good.split('\n')[1]!.replace(/,$/, '')) as { _id: string };
        await appendRecords(d, 'outfits', 1);
        await editLines(d, 'outfits', (l) => (l[l.lastIndexOf(']') - 1] = l[l.lastIndexOf(']') - 1]!.replace(/"_id":"[^"]*"/, `"_id":${JSON.stringify(first._id)}`)));
      }],
      // Inserted in the middle (every later record numbered anew): a slug or an _id another record has.
      ["a record inserted in the middle with another record's slug", (d) => insertRecords(d, 'outfits', 100, 1, { slug: other })],
      ["a record inserted in the middle with another record's _id", (d) => insertRecords(d, 'outfits', 100, 1, { _id: (JSON.parse(good.split('\n')[300]!.replace(/,$/, '')) as { _id: string })._id })],
      ['a record inserted in the middle with a title that is not a string', (d) => insertRecords(d, 'outfits', 100, 1, { title: 7 })],
    ];
    await assertSameRefusals(data, state, live, file, good, invalid);
  });

  it('news whose titles repeat (the trigrams index groups of texts): the groups moved, on a reload and a restart, also with records inserted and removed in the middle', async () => {
    const data = join(root, 'data-grouped');
    const state = join(root, 'state-grouped');
    await writeDataset(data, { scale: 200 });
    // Most titles one of three (one with a quote: its text is read from the list item whole), a few their own.
    const titles = ['The same headline of the week', 'Another \\ "quoted" headline again', 'Élan: a third one, shared'];
    await editLines(data, 'news', (lines) => {
      for (let k = 1; k < lines.length; k++) {
        if (k % 10 === 0 || !lines[k]!.startsWith('{')) continue;
        const comma = lines[k]!.endsWith(',');
        const r = JSON.parse(comma ? lines[k]!.slice(0, -1) : lines[k]!) as Record<string, unknown>;
        r.title = titles[k % 3];
        lines[k] = JSON.stringify(r) + (comma ? ',' : '');
      }
    });
    let live = await loadSnapshot(data, { cacheDir: state });
    assert.ok(live.collections.news.search.groups.starts.length > 0, 'news texts grouped');
    const edits: [number, string][][] = [
      [[11, titles[0]!], [20, 'A headline of its own now']],
      [[12, 'One more new one'], [40, titles[2]!]],
    ];
    // Inserted in the middle (every later record numbered anew, search-regroup.ts regroupedIndexRenumbered):
    // one before the first record of its title's group (the group moves earlier), two of a title no record
    // had (a new group); then removed: that first one again (the group moves back: its first was record 2),
    // and records 30 and 62 (records 29 and 59 before: titles of their own, their groups go).
    const shifts: { insert: [number, string[]][]; remove: number[] }[] = [
      { insert: [[0, [titles[0]!]], [50, ['An inserted headline', 'An inserted headline']]], remove: [] },
      { insert: [], remove: [0, 30, 62] },
    ];
    for (const [n, edit] of [...edits, ...shifts].entries()) {
      let ids: Record<string, number[]>;
      if (Array.isArray(edit)) {
        for (const [k, title] of edit) await editRecord(data, 'news', k, (r) => (r.title = title));
        ids = { news: edit.map(([k]) => k) };
      } else {
        ids = { news: [] };
        await editLines(data, 'news', (lines) => {
          for (const k of [...edit.remove].reverse()) lines.splice(k + 1, 1);
          for (const [at, added] of [...edit.insert].reverse()) {
            lines.splice(at + 1, 0, ...added.map((title, j) => {
              const r = JSON.parse(lines[at + 1]!.replace(/,$/, '')) as Record<string, unknown>;
              Object.assign(r, { _id: `inserted-${at}-${j}`, slug: `inserted-news-${at}-${j}`, title });
              return `${JSON.stringify(r)},`;
            }));
          }
        });
      }
      const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
      const { lines, log } = infoLines();
      // Edits on a reload (from the live snapshot) and on a restart (from the boot cache), by turns.
      const got = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never', ...(n % 2 === 0 ? { previous: live } : {}) });
      const line = lines.find((l) => l.startsWith('data read and indexed'))!;
      assert.ok(line?.includes('"patched":["news"]'), lines.join('\n'));
      assert.ok(got.collections.news.search.groups.starts.length > 0);
      assertSameAnswers(full, got, ids);
      assert.deepEqual(got.collections.news.search, full.collections.news.search, `edit ${n}: the search index, array for array`);
      live = got;
    }
  });

  it('on a restart, from the boot cache written before the edit', async () => {
    const data = join(root, 'data-restart');
    const state = join(root, 'state-restart');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    await loadSnapshot(data, { cacheDir: state });
    const edits = ['a title letter in the other case', 'two records in two groups, one shorter', 'a sort key', 'a title (search text and sort key)', 'news titles (texts grouped: one joins another group, one leaves its own)', 'a filter value', 'a slug', 'records added at the end, past a group', 'records removed from the end, a group and more', 'a record added', 'records removed in the middle, a group and more', 'a record inserted first', 'a sort key and a filter value in a group numbered anew', 'review ratings inserted in the middle (a range value)'];
    let full: Snapshot | undefined;
    for (const e of edits.map((what) => EDITS.find((x) => x.what === what)!)) {
      const ids = { [e.name]: await e.apply(data) };
      full = await fullBuild(data, e.name, full);
      const { lines, log } = infoLines();
      const restarted = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never' });
      const line = lines.find((l) => l.startsWith('data read and indexed'))!;
      assert.ok(line, `${e.what}: ${lines.join('\n')}`);
      assert.equal(line.includes(`"patched":["${e.name}"]`), e.patched, `${e.what}: ${line}`);
      assertSameAnswers(full, restarted, ids);
    }
  });
});

describe('a search index with a few texts changed (search-index.ts searchIndexWith)', () => {
  /** A deterministic generator (the same texts each run). */
  const random = (seed: number) => () => ((seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5), (seed >>> 0) / 4294967296);

  it('is the index a build of the new texts makes, array for array (slots new and gone, bitmaps made and undone, positions, ids past 65,536)', () => {
    const next = random(19);
    const words = ['red', 'gown', 'silk', 'blue', 'coat', 'the', 'met', 'gala', 'look', 'denim', 'street', 'style'];
    const word = () => words[Math.floor(next() * words.length)]!;
    const n = 70_000;
    // Distinct texts (each ends with its number): the trigrams index records, not groups.
    let texts = Array.from({ length: n }, (_, i) => `${word()} ${word()} ${i.toString(36)}`);
    let ix = buildSearchIndex(texts);
    assert.equal(ix.groups.starts.length, 0);
    const rare = 'ж';
    const many = Array.from({ length: Math.ceil(n / 32) + 5 }, (_, k) => k * 29 + 3);
    const rounds: [number, (t: string) => string][][] = [
      [[5, () => 'zqxj brand new grams é 中文'], [66_000, () => ''], [66_001, () => 'ab'], [69_999, (t) => `${'long '.repeat(60)}${t}`]],
      [[7, () => 'abcabcabc abc'], [5, (t) => t.slice(3)], [66_002, (t) => t.toUpperCase()]],
      // A rare unit in more than 1/32 of the texts: its posting becomes a bitmap; then a few lose it again.
      many.map((id) => [id, (t: string) => `${t} ${rare}`]),
      many.slice(0, 10).map((id) => [id, (t: string) => t.replace(` ${rare}`, '')]),
      many.map((id) => [id, (t: string) => t.replace(` ${rare}`, '')]),
    ];
    for (const round of rounds) {
      const now = texts.slice();
      for (const [id, edit] of round) now[id] = edit(now[id]!);
      const changes = round.map(([id]) => ({ id, was: texts[id]!, now: now[id]! })).sort((a, b) => a.id - b.id);
      const got = searchIndexWith(ix, changes)!;
      const want = buildSearchIndex(now);
      assert.equal(want.groups.starts.length, 0);
      assert.deepEqual(got, want);
      ix = got;
      texts = now;
    }
    assert.ok(ix.unigrams.bitCounts.length > 0);
  });

  it('with texts added at the end: bitmaps widened or undone, ids into a new block of 65,536, as a build of all the texts', () => {
    const next = random(7);
    const words = ['red', 'gown', 'silk', 'blue', 'coat', 'met', 'gala', 'look'];
    const text = (i: number) => `${words[Math.floor(next() * words.length)]!} ${words[Math.floor(next() * words.length)]!} ${i.toString(36)}`;
    let texts = Array.from({ length: 65_530 }, (_, i) => text(i));
    // A unit in just 1/32 of the texts (a bitmap) that the added texts lack: its posting goes back to ids.
    for (let i = 0; i < Math.ceil(65_530 / 32); i++) texts[i * 32] += ' ж';
    let ix = buildSearchIndex(texts);
    for (const added of [3, 40, 1]) {
      const now = [...texts, ...Array.from({ length: added }, (_, k) => `${text(texts.length + k)} new ${k}`)];
      const changes = now.slice(texts.length).map((t, k) => ({ id: texts.length + k, was: '', now: t }));
      const got = searchIndexWith(ix, changes, now.length)!;
      assert.deepEqual(got, buildSearchIndex(now));
      ix = got;
      texts = now;
    }
    assert.ok(texts.length > 65_536);
    // And removed from the end again: back under 65,536, the unit's posting a bitmap again.
    for (const removed of [30, 14]) {
      const now = texts.slice(0, texts.length - removed);
      const changes = texts.slice(now.length).map((t, k) => ({ id: now.length + k, was: t, now: '' }));
      const got = searchIndexWith(ix, changes, now.length)!;
      assert.deepEqual(got, buildSearchIndex(now));
      ix = got;
      texts = now;
    }
    assert.ok(texts.length < 65_536);
  });

  it('with records numbered anew (inserted and removed in the middle): every posting renumbered, as a build of the new texts (searchIndexRenumbered)', () => {
    const next = random(23);
    const words = ['red', 'gown', 'silk', 'blue', 'coat', 'met', 'gala', 'look'];
    const text = (i: number) => `${words[Math.floor(next() * words.length)]!} ${words[Math.floor(next() * words.length)]!} ${i.toString(36)}`;
    let texts = Array.from({ length: 65_540 }, (_, i) => text(i));
    // A unit in just over 1/32 of the texts (a bitmap), most of them late: removals in front undo it, insertions redo it.
    for (let i = 0; i < Math.ceil(65_540 / 32) + 3; i++) texts[65_539 - i * 31] += ' ж';
    let ix = buildSearchIndex(texts);
    // Each round: [at, removed count, inserted texts] applied in order (numbers of the texts before the round).
    const rounds: [number, number, string[]][][] = [
      [[100, 0, ['zqxj inserted é 中文 ж']]],
      // Past 65,536: postings copied up to there, their blocks' starts too.
      [[65_537, 1, ['late insert ж', 'another late one']]],
      [[5, 3, []], [40_000, 0, ['ab', '', 'abcabcabc abc']]],
      [[0, 1, ['first one now']], [65_000, 200, []]],
      [[10, 0, Array.from({ length: 300 }, (_, k) => `many ж new ${k}`)]],
      [[0, 0, ['again at the first place']], [65_300, 300, ['near the end ж']]],
    ];
    for (const round of rounds) {
      const newOf = new Int32Array(texts.length);
      const now: string[] = [];
      const removed: { id: number; text: string }[] = [];
      const added: { id: number; text: string }[] = [];
      let r = 0;
      for (let i = 0; i < texts.length; i++) {
        const edit = round[r]?.[0] === i ? round[r++] : undefined;
        for (const t of edit?.[2] ?? []) added.push({ id: now.length, text: t }), now.push(t);
        if (edit !== undefined && edit[1] > 0) {
          for (let k = 0; k < edit[1]; k++) (newOf[i + k] = -1), removed.push({ id: i + k, text: texts[i + k]! });
          i += edit[1] - 1;
          continue;
        }
        newOf[i] = now.length;
        now.push(texts[i]!);
      }
      const got = searchIndexRenumbered(ix, newOf, now.length, removed, added)!;
      const want = buildSearchIndex(now);
      assert.equal(want.groups.starts.length, 0);
      assert.deepEqual(got, want);
      ix = got;
      texts = now;
    }
    assert.ok(texts.length < 65_536 && ix.unigrams.bitCounts.length > 0);
  });

  it('is null where the trigrams index groups of texts (the caller builds from every text)', () => {
    const texts = Array.from({ length: 200 }, (_, i) => `the same long title of many ${i % 3}`);
    const ix = buildSearchIndex(texts);
    assert.ok(ix.groups.starts.length > 0);
    assert.equal(searchIndexWith(ix, [{ id: 1, was: texts[1]!, now: 'other' }]), null);
  });
});
