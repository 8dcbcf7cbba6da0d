// After an edit of one data file, a collection patched from its index before the edit (patch.ts)
// answers exactly as one built from every record of the same files, on a reload (from the live
// snapshot) and on a restart (from the boot cache); an edit it does not handle is built whole.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEPENDS } from '../../src/data/boot-cache-format.ts';
import { postingKeys, searchTextOf, slugOf, type CollectionIndex } from '../../src/data/indexes.ts';
import { knownCollection } from '../../src/data/known.ts';
import { loadLinked } from '../../src/data/load.ts';
import { patchable } from '../../src/data/patch.ts';
import { RECORD_GROUP } from '../../src/data/record-groups.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';
import { stringAt } from '../../src/data/string-table.ts';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { detail, listPage } from '../../src/http/handlers.ts';
import { COLLECTIONS, type CollectionName } from '../../src/resources/types.ts';

const TODAY = 20260115;
/** Longer than the boot cache's racy window: files written just before a load are not cached. */
const SETTLE_MS = 150;

/** A logger that keeps each info line as `message {fields}`. */
function infoLines(): { lines: string[]; log: never } {
  const lines: string[] = [];
  const log = { info: (m: string, f?: unknown) => lines.push(`${m} ${JSON.stringify(f)}`), warn: () => {}, error: () => {}, debug: () => {}, enabled: () => true } as never;
  return { lines, log };
}

/** List queries over every sort, filter and search path, and the searches of `ids`' texts. */
function queries(ix: CollectionIndex, ids: readonly number[]): string[] {
  const out = ['', 'page=2', 'limit=100', `page=${Math.ceil(ix.size / 7)}&limit=7`];
  for (const sort of ix.def.sorts) out.push(`sort=${sort.name}&limit=100`, `sort=${sort.name}&page=3&limit=100`, `sort=${sort.name}&limit=100&page=${Math.ceil(ix.size / 100)}`);
  for (const { param } of ix.postings) {
    // Every key of a filter of a few (categories: long postings, kept in each order), a dozen of one of many.
    const keys = postingKeys(ix, param);
    for (const key of keys.filter((_, i) => i % Math.ceil(keys.length / 12) === 0)) out.push(`${param}=${encodeURIComponent(key)}&limit=100`, `${param}=${encodeURIComponent(key)}&sort=${ix.def.sorts.at(-1)!.name}&limit=100`);
  }
  if (ix.range) {
    const filter = ix.def.filters.find((f) => f.kind === 'range')!;
    if (filter.kind === 'range') for (const v of [ix.range.values[0]!, ix.range.values[ix.range.values.length >> 1]!]) out.push(`${filter.minParam}=${v}&limit=100`, `${filter.maxParam}=${v}&limit=100`);
  }
  for (const id of [0, ix.size >> 1, ix.size - 1, ...ids]) {
    const text = searchTextOf(ix, id);
    for (const len of [1, 3, 5, 40]) out.push(`search=${encodeURIComponent(text.slice(0, len))}&limit=100`, `search=${encodeURIComponent(text.slice(2, 2 + len))}&limit=100`);
  }
  return out;
}

/** Every answer of `got` is byte for byte that of `want` (a full build of the same files). */
function assertSameAnswers(want: Snapshot, got: Snapshot, ids: Partial<Record<CollectionName, number[]>>): void {
  const edited = Object.keys(ids)[0] as CollectionName;
  for (const name of COLLECTIONS.filter((c) => DEPENDS[c].includes(edited))) {
    const x = want.collections[name];
    const y = got.collections[name];
    assert.equal(y.size, x.size, name);
    // The search index is built from the texts as a full build's is: the same arrays.
    assert.deepEqual(y.search, x.search, `${name} search index`);
    assert.deepEqual(y.searchFrom, x.searchFrom, `${name} derived texts`);
    assert.deepEqual(Array.from({ length: y.size }, (_, i) => stringAt(y.searchText, i)), Array.from({ length: x.size }, (_, i) => stringAt(x.searchText, i)), `${name} text table`);
    for (const q of queries(x, ids[name] ?? [])) assert.deepEqual(listPage(y, q, TODAY), listPage(x, q, TODAY), `${name}?${q}`);
    for (let id = 0; id < x.size; id++) {
      const slug = slugOf(x, id);
      assert.deepEqual(detail(y, slug, TODAY), detail(x, slug, TODAY), `${name}/${slug}`);
    }
  }
}

let root: string;
before(async () => (root = await mkdtemp(join(tmpdir(), 'patch-'))));
after(() => rm(root, { recursive: true, force: true }));

/** Record `k` of a data file written one record per line (write-dataset.ts) changed by `edit` (or the lines by `lines`). */
async function editRecord(data: string, name: CollectionName, k: number, edit: (r: Record<string, unknown>) => void): Promise<void> {
  await editLines(data, name, (lines) => {
    const line = lines[k + 1]!;
    const comma = line.endsWith(',');
    const r = JSON.parse(comma ? line.slice(0, -1) : line) as Record<string, unknown>;
    edit(r);
    lines[k + 1] = JSON.stringify(r) + (comma ? ',' : '');
  });
}

async function editLines(data: string, name: CollectionName, edit: (lines: string[]) => void): Promise<void> {
  const file = join(data, `${name}.json`);
  const lines = (await readFile(file, 'utf8')).split('\n');
  edit(lines);
  await writeFile(file, lines.join('\n'));
  await sleep(SETTLE_MS);
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
  // Built whole: celebrities (its link target) is rebuilt too, for the filmographies.
  { what: 'a movie synopsis', name: 'movies', patched: false, apply: async (d) => (await editRecord(d, 'movies', 7, (r) => (r.synopsis = 'New words.')), [7]) },
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
  // Built whole: `views` (the popular sort's key) is not served, so the order of the others cannot be read back.
  { what: 'a news view count and date', name: 'news', patched: false, apply: async (d) => (await editRecord(d, 'news', 11, (r) => ((r.views = 1), (r.publishDate = '2001-02-03T04:05:06.000Z'))), [11]) },
  { what: 'a filter value', name: 'outfits', patched: false, apply: async (d) => (await editRecord(d, 'outfits', 21, (r) => (r.category = 'Brand New Category')), [21]) },
  { what: 'a slug', name: 'outfits', patched: false, apply: async (d) => (await editRecord(d, 'outfits', 22, (r) => (r.slug = 'a-new-slug-for-it')), [22]) },
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
  { what: 'a record removed', name: 'outfits', patched: false, apply: async (d) => (await editLines(d, 'outfits', (l) => l.splice(30, 1)), []) },
  { what: 'a record added', name: 'outfits', patched: false, apply: async (d) => (await editLines(d, 'outfits', (l) => l.splice(30, 0, l[31]!.replace(/"slug":"/, '"slug":"copy-').replace(/"_id":"/, '"_id":"c'))), [29]) },
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
    for (const e of EDITS) {
      const ids = { [e.name]: await e.apply(data) };
      const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
      // A reload: from the live snapshot.
      const reload = infoLines();
      const reloaded = await loadSnapshot(data, { cacheDir: state, previous: live, log: reload.log, buildThreads: 'never' });
      const line = reload.lines.find((l) => l.startsWith('data read and indexed'))!;
      assert.ok(line, `${e.what}: ${reload.lines.join('\n')}`);
      assert.equal(line.includes(`"patched":["${e.name}"]`), e.patched, `${e.what}: ${line}`);
      assertSameAnswers(full, reloaded, ids);
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

  it('on a restart, from the boot cache written before the edit', async () => {
    const data = join(root, 'data-restart');
    const state = join(root, 'state-restart');
    await writeDataset(data, { scale: 200 });
    await sleep(SETTLE_MS);
    await loadSnapshot(data, { cacheDir: state });
    const edits = ['a title letter in the other case', 'two records in two groups, one shorter', 'a sort key', 'a title (search text and sort key)', 'news titles (texts grouped: one joins another group, one leaves its own)'];
    for (const e of edits.map((what) => EDITS.find((x) => x.what === what)!)) {
      const ids = { [e.name]: await e.apply(data) };
      const full = await loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' });
      const { lines, log } = infoLines();
      const restarted = await loadSnapshot(data, { cacheDir: state, log, buildThreads: 'never' });
      const line = lines.find((l) => l.startsWith('data read and indexed'))!;
      assert.ok(line, `${e.what}: ${lines.join('\n')}`);
      assert.equal(line.includes(`"patched":["${e.name}"]`), e.patched, `${e.what}: ${line}`);
      assertSameAnswers(full, restarted, ids);
    }
  });
});
