// What the tests of a patched or kept collection after an edit share (test/data/patch.test.ts,
// patch-dependants.test.ts, filmography.test.ts): the edits of a data file written one record per line (write-dataset.ts),
// the load's log line, and the comparison of every answer with a full build's.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEPENDS } from '../../src/data/boot-cache-format.ts';
import { postingKeys, searchTextOf, slugOf, type CollectionIndex } from '../../src/data/indexes.ts';
import { stringAt } from '../../src/data/string-table.ts';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import { detail, listPage } from '../../src/http/handlers.ts';
import { COLLECTIONS, type CollectionName } from '../../src/resources/types.ts';

export const TODAY = 20260115;
/** Longer than the boot cache's racy window: files written just before a load are not cached. */
export const SETTLE_MS = 150;

/** A logger that keeps each info line as `message {fields}`. */
export function infoLines(): { lines: string[]; log: never } {
  const lines: string[] = [];
  const log = { info: (m: string, f?: unknown) => lines.push(`${m} ${JSON.stringify(f)}`), warn: () => {}, error: () => {}, debug: () => {}, enabled: () => true } as never;
  return { lines, log };
}

/** List queries over every sort, filter and search path, and the searches of `ids`' texts. */
export function queries(ix: CollectionIndex, ids: readonly number[]): string[] {
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

/**
 * Every answer of `got` is byte for byte that of `want` (a full build of the same files), for every
 * collection made from the edited file (the one key of `ids`, with the records the edit touched).
 */
export function assertSameAnswers(want: Snapshot, got: Snapshot, ids: Partial<Record<CollectionName, number[]>>, what = ''): void {
  const edited = Object.keys(ids)[0] as CollectionName;
  const at = (s: string) => (what === '' ? s : `${what}: ${s}`);
  for (const name of COLLECTIONS.filter((c) => DEPENDS[c].includes(edited))) {
    const x = want.collections[name];
    const y = got.collections[name];
    assert.equal(y.size, x.size, at(name));
    // The filter tables and the search index are made as a full build makes them: the same arrays.
    assert.deepEqual(y.postings, x.postings, at(`${name} filter tables`));
    assert.deepEqual(y.search, x.search, at(`${name} search index`));
    assert.deepEqual(y.searchFrom, x.searchFrom, at(`${name} derived texts`));
    assert.deepEqual(Array.from({ length: y.size }, (_, i) => stringAt(y.searchText, i)), Array.from({ length: x.size }, (_, i) => stringAt(x.searchText, i)), at(`${name} text table`));
    for (const q of queries(x, ids[name] ?? [])) assert.deepEqual(listPage(y, q, TODAY), listPage(x, q, TODAY), at(`${name}?${q}`));
    for (let id = 0; id < x.size; id++) {
      const slug = slugOf(x, id);
      assert.deepEqual(detail(y, slug, TODAY), detail(x, slug, TODAY), at(`${name}/${slug}`));
    }
  }
}

/** The lines of data file `name` changed by `edit`, then a pause past the racy window. */
export async function editLines(data: string, name: CollectionName, edit: (lines: string[]) => void): Promise<void> {
  const file = join(data, `${name}.json`);
  const lines = (await readFile(file, 'utf8')).split('\n');
  edit(lines);
  await writeFile(file, lines.join('\n'));
  await sleep(SETTLE_MS);
}

/** Record `k` of a data file changed by `edit`. */
export async function editRecord(data: string, name: CollectionName, k: number, edit: (r: Record<string, unknown>) => void): Promise<void> {
  await editLines(data, name, (lines) => {
    const line = lines[k + 1]!;
    const comma = line.endsWith(',');
    const r = JSON.parse(comma ? line.slice(0, -1) : line) as Record<string, unknown>;
    edit(r);
    lines[k + 1] = JSON.stringify(r) + (comma ? ',' : '');
  });
}

/**
 * Each of `invalid`'s edits of `data` refused on a reload from `live` and on a restart from the boot
 * cache in `state` with the very message a full build of the edited files gives; `file` is put back
 * to `good` after each.
 */
export async function assertSameRefusals(data: string, state: string, live: Snapshot, file: string, good: string, invalid: readonly (readonly [string, (d: string) => Promise<unknown>])[]): Promise<void> {
  const message = (p: Promise<unknown>) => p.then(() => 'loaded', (err: Error) => err.message);
  for (const [what, edit] of invalid) {
    await edit(data);
    const want = await message(loadSnapshot(data, { cacheDir: 'memory', buildThreads: 'never' }));
    assert.notEqual(want, 'loaded', what);
    assert.equal(await message(loadSnapshot(data, { cacheDir: state, previous: live, buildThreads: 'never' })), want, `${what}: reload`);
    assert.equal(await message(loadSnapshot(data, { cacheDir: state, buildThreads: 'never' })), want, `${what}: restart`);
    await writeFile(file, good);
    await sleep(SETTLE_MS);
  }
}
