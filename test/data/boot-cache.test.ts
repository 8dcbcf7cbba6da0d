// The boot cache (src/data/boot-cache-*.ts): a cached snapshot serves byte for byte what a fresh load
// serves; any change to the data files, or damage to the cache, is a miss; invalid data is never cached.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { appendFile, cp, mkdtemp, open, readdir, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { align8, cacheFile as collectionFile, crc32, DEPENDS, MAGIC, PREFIX_BYTES, readDataIdentity, type Header, type Section } from '../../src/data/boot-cache-format.ts';
import { loadSnapshotCache, readCollectionCache } from '../../src/data/boot-cache-read.ts';
import { forgetDigests, hashStats } from '../../src/data/content-digest.ts';
import { saveCollectionCache } from '../../src/data/boot-cache-write.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';
import type { CollectionName, LinkContext } from '../../src/resources/types.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { DataError } from '../../src/data/load.ts';
import { loadSnapshot, type CacheWrite, type Snapshot } from '../../src/data/snapshot.ts';
import { writeDataset } from '../../src/generate/write-dataset.ts';
import { detail, listPage } from '../../src/http/handlers.ts';
import { linkEmbeds, postingKeys, searchTextOf, slugOf, type CollectionIndex } from '../../src/data/indexes.ts';
import { COLLECTIONS } from '../../src/resources/types.ts';
import { startService } from '../../src/service.ts';
import { releaseSendBuffer, sendRoomOf } from '../../src/data/send-buffer.ts';
import { joinLargeAbove } from '../../src/data/fragments.ts';
import type { Outcome } from '../../src/http/handlers.ts';
import { stillHeld } from '../helpers/collected.ts';

/** The body of a 200. */
function pageBody(o: Outcome): Buffer {
  assert.ok(o.ok);
  return o.body;
}

const SCALE = 100;
const TODAY = 20260115;
/** Longer than the cache's racy window: files written just before a load are not cached. */
const SETTLE_MS = 150;

/** The cache file the damage and presence checks look at (each collection has its own). */
const cacheFile = (state: string) => collectionFile(state, 'celebrities');

/** The celebrities' cache read on its own: the index, or why it missed. */
async function readSnapshotCache(state: string, data: string) {
  return readCollectionCache(state, data, RESOURCES.celebrities, await readDataIdentity(data));
}

/** An edit of a data file that changes no record (a space more at its end), then long enough for the result to be cacheable. */
async function editFile(file: string): Promise<void> {
  await appendFile(file, ' ');
  await sleep(SETTLE_MS);
}

/** A new mtime and ctime for a data file, its bytes as they were (a touch, a copy over it, a checkout). */
async function touchFile(file: string): Promise<void> {
  await utimes(file, new Date(), new Date(Date.now() - 60_000));
  await sleep(SETTLE_MS);
}

/** A logger that keeps each info line as `message {fields}`. */
function infoLines(): { lines: string[]; log: never } {
  const lines: string[] = [];
  const log = { info: (m: string, f?: unknown) => lines.push(`${m} ${JSON.stringify(f)}`), warn: () => {}, error: () => {}, debug: () => {}, enabled: () => true } as never;
  return { lines, log };
}

let root: string;
let n = 0;
before(async () => (root = await mkdtemp(join(tmpdir(), 'boot-cache-'))));
after(() => rm(root, { recursive: true, force: true }));

/** A fresh data directory and state directory, the data written long enough ago to be cacheable. */
async function setup(): Promise<{ data: string; state: string }> {
  const data = join(root, `data-${++n}`);
  await writeDataset(data, { scale: SCALE });
  await sleep(SETTLE_MS);
  return { data, state: join(root, `state-${n}`) };
}

/** List queries that reach every sort, filter, search path and deep pages, built from the fresh index. */
function queries(ix: CollectionIndex): string[] {
  const out = ['', 'page=2', 'limit=100', `page=${Math.ceil(ix.size / 7)}&limit=7`, 'page=9999'];
  for (const sort of ix.def.sorts) out.push(`sort=${sort.name}`, `sort=${sort.name}&page=3&limit=5`, `sort=${sort.name}&limit=1&page=${ix.size}`);
  for (const { param } of ix.postings) {
    const keys = postingKeys(ix, param);
    for (const key of [keys[0]!, keys[keys.length >> 1]!, keys.at(-1)!, 'no-such-value']) {
      const value = encodeURIComponent(key);
      out.push(`${param}=${value}`, `${param}=${value}&sort=${ix.def.sorts.at(-1)!.name}&page=2&limit=3`);
    }
  }
  if (ix.range) {
    const filter = ix.def.filters.find((f) => f.kind === 'range')!;
    if (filter.kind === 'range') {
      const mid = ix.range.values[ix.range.values.length >> 1]!;
      out.push(`${filter.minParam}=${mid}`, `${filter.maxParam}=${mid}&sort=${ix.def.sorts[1]!.name}`);
    }
  }
  for (const id of [0, 1, ix.size >> 1, ix.size - 1]) {
    const text = searchTextOf(ix, id);
    for (const len of [1, 2, 3, 5, 9]) {
      const q = encodeURIComponent(text.slice(1, 1 + len));
      out.push(`search=${q}`, `search=${q}&limit=3&page=2`, `search=${encodeURIComponent(text.slice(0, len))}`);
      for (const { param } of ix.postings) out.push(`search=${q}&${param}=${encodeURIComponent(postingKeys(ix, param)[0]!)}`);
    }
  }
  out.push('search=zzqx', 'sort=nope', 'limit=0');
  return out;
}

/** Every answer the two snapshots give to the queries (built from `a`), compared byte for byte. */
function assertSameAnswers(a: Snapshot, b: Snapshot): number {
  let compared = 0;
  for (const name of COLLECTIONS) {
    const x = a.collections[name];
    const y = b.collections[name];
    assert.equal(y.size, x.size);
    for (const q of queries(x)) {
      assert.deepEqual(listPage(y, q, TODAY), listPage(x, q, TODAY), `${name}?${q}`);
      compared++;
    }
    for (const id of [0, 1, x.size >> 1, x.size - 1]) {
      const slug = x.size > id ? slugOf(x, id) : '';
      assert.deepEqual(detail(y, slug, TODAY), detail(x, slug, TODAY), `${name}/${slug}`);
      assert.deepEqual(detail(y, slug, TODAY + 10_000), detail(x, slug, TODAY + 10_000), `${name}/${slug} a year later`);
    }
    assert.deepEqual(detail(y, 'no-such-slug', TODAY), detail(x, 'no-such-slug', TODAY));
  }
  return compared;
}

describe('boot cache', () => {
  it('DEPENDS lists every collection a link reads (get and referrers), so an edit rebuilds all it affects', () => {
    const sources = generateRecords({ scale: 20 }) as Record<CollectionName, Record<string, unknown>[]>;
    for (const def of RESOURCE_LIST) {
      const asked = new Set<string>();
      const ctx: LinkContext = {
        get: (collection) => (asked.add(collection), undefined),
        referrers: (_collection, _slug, from) => (asked.add(from), []),
      };
      for (const r of sources[def.name]) {
        try {
          def.link(r as never, ctx);
        } catch {
          // A required reference found missing throws after it was asked for: what counts is the asking.
        }
      }
      for (const c of asked) assert.ok(DEPENDS[def.name].includes(c as CollectionName), `${def.name} reads ${c}`);
      assert.ok(DEPENDS[def.name].includes(def.name));
    }
  });

  it('an edit rebuilds only the collections made from that file: a reload keeps the others as they are, a restart reads them from the cache', async () => {
    const { data, state } = await setup();
    const first = await loadSnapshot(data, { cacheDir: state });
    await editFile(join(data, 'outfits.json'));
    const reloaded = await loadSnapshot(data, { cacheDir: state, previous: first });
    for (const name of COLLECTIONS) {
      if (name === 'outfits') assert.notEqual(reloaded.collections[name], first.collections[name], 'outfits rebuilt');
      else assert.equal(reloaded.collections[name], first.collections[name], `${name} kept`);
    }
    assertSameAnswers(await loadSnapshot(data), reloaded);

    const lines: string[] = [];
    const log = { info: (m: string, f?: unknown) => lines.push(`${m} ${JSON.stringify(f)}`), warn: () => {}, error: () => {}, debug: () => {}, enabled: () => true } as never;
    await editFile(join(data, 'celebrities.json'));
    const restarted = await loadSnapshot(data, { cacheDir: state, log });
    const built = lines.find((l) => l.startsWith('data read and indexed'))!;
    // (Its records unchanged, a space at the end of the file: patched (patch.ts), and what outfits,
    // news and movies hold of it is the same, so they are kept from the cache written before,
    // test/data/patch-dependants.test.ts.)
    assert.match(built, /"built":\[\].*"patched":\["celebrities"\],"unaffected":\["outfits","news","movies"\]/, built);
    assert.match(built, /"cached":\["reviews"\]/);
    assert.ok(lines.some((l) => /boot cache not used.*"celebrities":"written for other data files/.test(l)), 'the miss says why');
    assertSameAnswers(await loadSnapshot(data), restarted);
    assert.ok(await loadSnapshotCache(state, data), 'the rebuilt ones are cached again');

    // Reviews link to movies (detail-only fields included): from the cached movies, movies.json unread.
    lines.length = 0;
    await editFile(join(data, 'reviews.json'));
    const again = await loadSnapshot(data, { cacheDir: state, log });
    // (Its records unchanged, a space at the end of the file: patched, patch.ts.)
    assert.match(lines.find((l) => l.startsWith('data read and indexed'))!, /"built":\[\].*"patched":\["reviews"\]/);
    assertSameAnswers(await loadSnapshot(data), again);
  });

  it('an edit of movies -> celebrities rebuilt, and the outfits and news kept read their embedded celebrities from the new index (a copy of each, the old one untouched)', async () => {
    const { data, state } = await setup();
    const first = await loadSnapshot(data, { cacheDir: state });
    await editFile(join(data, 'movies.json'));
    const reloaded = await loadSnapshot(data, { cacheDir: state, previous: first });
    const celebrities = reloaded.collections.celebrities;
    assert.notEqual(celebrities, first.collections.celebrities, 'celebrities rebuilt (their filmography reads movies)');
    for (const name of ['outfits', 'news'] as const) {
      const [was, now] = [first.collections[name], reloaded.collections[name]];
      assert.equal(now.list, was.list, `${name} kept: the same arrays`);
      assert.equal(now.embeds[0]!.ids, was.embeds[0]!.ids);
      assert.equal(now.embeds[0]!.index, celebrities, `${name} reads the snapshot's celebrities`);
      assert.equal(was.embeds[0]!.index, first.collections.celebrities, `the live snapshot's ${name} unchanged`);
    }
    assertSameAnswers(await loadSnapshot(data), reloaded);
    assertSameAnswers(await loadSnapshot(data), await loadSnapshot(data, { cacheDir: state }));
  });

  it('an edit during the load -> the load starts over: every collection from the same version of the files', async () => {
    const { data, state } = await setup();
    const first = await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'reviews.json');
    const original = await readFile(file, 'utf8');
    const edited = original.replace('"rating":', '"rating": ');
    let edits = 0;
    const lines: string[] = [];
    // The edit lands while the load runs: the identity taken before differs from the one after.
    const log = {
      info: (m: string) => {
        lines.push(m);
        if (m.startsWith('boot cache not used') && edits++ === 0) writeFileSync(file, edited);
      },
      warn: () => {}, error: () => {}, debug: () => {}, enabled: () => true,
    } as never;
    await editFile(file);
    const next = await loadSnapshot(data, { cacheDir: state, previous: first, log });
    assert.ok(lines.includes('data files changed while loading; loading again'), lines.join('\n'));
    assertSameAnswers(await loadSnapshot(data), next);
  });

  it('a snapshot loaded from the cache answers every list and detail query like a fresh load', async () => {
    const { data, state } = await setup();
    const fresh = await loadSnapshot(data);
    assert.equal(existsSync(cacheFile(state)), false);
    const first = await loadSnapshot(data, { cacheDir: state });
    assert.ok(existsSync(cacheFile(state)), 'the first load writes the cache');
    const cached = await loadSnapshotCache(state, data);
    assert.ok(cached, 'the cache matches the files it was written for');
    const viaCache = await loadSnapshot(data, { cacheDir: state });
    assert.notEqual(viaCache.version, first.version);
    assert.ok(assertSameAnswers(fresh, { ...fresh, collections: cached }) > 500);
    // And structure by structure: typed arrays, string tables, fragments, gram postings.
    for (const name of COLLECTIONS) assert.deepEqual(cached[name], fresh.collections[name], name);
    // Text groups (records that share a search text) read back too, and none where texts are their own.
    const grouped = COLLECTIONS.filter((name) => cached[name].search.groups.starts.length > 0);
    assert.ok(grouped.length > 0 && grouped.length < COLLECTIONS.length, `grouped: ${grouped}`);
    assertSameAnswers(fresh, viaCache);
    assertSameAnswers(fresh, first);
  });

  it('a list arena read from the cache has a room for bodies after it (none in SharedArrayBuffers): each page built there, then given back, is the fresh load\'s', async () => {
    const { data, state } = await setup();
    const fresh = await loadSnapshot(data);
    await loadSnapshot(data, { cacheDir: state });
    const cached = (await loadSnapshotCache(state, data))!;
    const shared = (await loadSnapshotCache(state, data, true))!;
    for (const name of COLLECTIONS) {
      assert.ok(sendRoomOf(cached[name].list.bytes.buffer) !== null, name);
      assert.equal(sendRoomOf(shared[name].list.bytes.buffer), null, `${name}, shared`);
      let inRoom = 0;
      for (const q of queries(fresh.collections[name])) {
        const got = listPage(cached[name], q, TODAY);
        assert.deepEqual(got, listPage(fresh.collections[name], q, TODAY), `${name}?${q}`);
        if (!got.ok) continue;
        if (got.body.buffer === cached[name].list.bytes.buffer) inRoom++;
        releaseSendBuffer(got.body);
      }
      // Those whose items embed another collection's record (outfits, news: joinEmbedded) too.
      assert.ok(inRoom > 40, `${name}: ${inRoom} pages built in its room`);
    }
  });

  it('list arenas read from the cache, pages built in their rooms (one given back, one still held), then replaced by a reload\'s data joined since -> their memory can be collected', async (t) => {
    const { data, state } = await setup();
    await loadSnapshot(data, { cacheDir: state });
    const reloaded = await loadSnapshot(data); // built, as a reload builds what changed: no room
    const refs = await (async () => {
      const cached = (await loadSnapshotCache(state, data))!;
      const out: WeakRef<ArrayBufferLike>[] = [];
      for (const name of COLLECTIONS) {
        const memory = cached[name].list.bytes.buffer;
        assert.ok(sendRoomOf(memory) !== null, name);
        releaseSendBuffer(pageBody(listPage(cached[name], 'page=2', TODAY)));
        // Joined as a large arena too (its cuts made and kept with it), the last body still held (a
        // TLS write, a 304 after the join): nothing gives it back.
        joinLargeAbove(0);
        try {
          pageBody(listPage(cached[name], 'page=3&sort=' + cached[name].def.sorts.at(-1)!.name, TODAY));
        } finally {
          joinLargeAbove(16 << 20);
        }
        out.push(new WeakRef(memory));
      }
      return out;
    })();
    // What a reload's warm does next: the new data's first pages joined, in the slab.
    for (const name of COLLECTIONS) pageBody(listPage(reloaded.collections[name], 'page=2', TODAY));
    assert.equal(await stillHeld(refs), 0, 'replaced list arenas still held');
    t.diagnostic(`${refs.length} arenas collected`);
  });

  it('arena offsets as Float64Array (an arena past 4 GiB) -> written and read back as they are, same answers', async () => {
    const { data, state } = await setup();
    const fresh = await loadSnapshot(data);
    const ix = fresh.collections.celebrities;
    assert.ok(ix.list.starts instanceof Uint32Array && ix.searchText.starts instanceof Uint32Array, 'a small arena has 4-byte offsets');
    assert.ok(ix.detail.cuts instanceof Uint16Array && ix.detail.ownCuts instanceof Uint16Array, 'and 2-byte offsets within its records');
    // What a collection whose arena passes 4 GiB holds (too large to build in a test): 8-byte offsets.
    const wide = (o: Uint32Array | Float64Array) => Float64Array.from(o);
    const widened: CollectionIndex = {
      ...ix,
      list: { ...ix.list, starts: wide(ix.list.starts), gaps: ix.list.gaps && wide(ix.list.gaps) },
      // And a record of 64 KB or more: 4-byte offsets within records.
      detail: { ...ix.detail, own: { ...ix.detail.own, starts: wide(ix.detail.own.starts) }, cuts: Uint32Array.from(ix.detail.cuts), ownCuts: Uint32Array.from(ix.detail.ownCuts) },
      searchText: { ...ix.searchText, starts: wide(ix.searchText.starts) },
    };
    assert.ok(await saveCollectionCache(state, data, 'celebrities', widened, await readDataIdentity(data)));
    const read = await readSnapshotCache(state, data);
    assert.ok(read.index, read.miss ?? '');
    assert.ok(read.index.list.starts instanceof Float64Array && read.index.detail.own.starts instanceof Float64Array && read.index.searchText.starts instanceof Float64Array);
    assert.deepEqual([...read.index.list.starts], [...ix.list.starts]);
    assert.ok(read.index.detail.cuts instanceof Uint32Array && read.index.detail.ownCuts instanceof Uint32Array);
    assertSameAnswers(fresh, { ...fresh, collections: linkEmbeds({ ...fresh.collections, celebrities: read.index }) });
  });

  it('content change (same size), touch, or a replaced file -> miss, and the next load caches the new data', async () => {
    const { data, state } = await setup();
    await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'celebrities.json');
    const text = await readFile(file, 'utf8');
    const at = text.indexOf('"name":"') + '"name":"'.length;
    const edited = text.slice(0, at) + (text[at] === 'Q' ? 'X' : 'Q') + text.slice(at + 1);
    const { mtime } = await stat(file);
    // Same size, and the old mtime put back: the inode's change time still tells.
    const fh = await open(file, 'r+');
    await fh.write(edited, 0, 'utf8');
    await fh.close();
    await utimes(file, mtime, mtime);
    assert.equal((await stat(file)).size, Buffer.byteLength(text));
    assert.equal(await loadSnapshotCache(state, data), null, 'content change');
    await sleep(SETTLE_MS);
    const reloaded = await loadSnapshot(data, { cacheDir: state });
    assertSameAnswers(await loadSnapshot(data), reloaded);
    const cached = await loadSnapshotCache(state, data);
    assert.ok(cached, 'rewritten for the new data');
    assertSameAnswers(reloaded, { ...reloaded, collections: cached });

    await appendFile(file, ' ');
    assert.equal(await loadSnapshotCache(state, data), null, 'a byte more');
  });

  it('a touch, or a file rewritten with the same bytes -> the cache kept (the same bytes), written again under the new identity', async () => {
    const { data, state } = await setup();
    const fresh = await loadSnapshot(data, { cacheDir: state });
    for (const change of [
      (file: string) => touchFile(file),
      async (file: string) => (await writeFile(file, await readFile(file)), await sleep(SETTLE_MS)),
    ]) {
      await change(join(data, 'celebrities.json'));
      const id = await readDataIdentity(data);
      const read = await readCollectionCache(state, data, RESOURCES.celebrities, id);
      assert.ok(read.index && read.stale, `a hit, to be written again: ${read.miss}`);
      const { lines, log } = infoLines();
      const restarted = await loadSnapshot(data, { cacheDir: state, log });
      const loaded = lines.find((l) => l.startsWith('data loaded from the boot cache'));
      assert.ok(loaded, `nothing built: ${lines.join('\n')}`);
      assert.match(loaded, /"sameBytes":\["celebrities","outfits","news","movies"\]/);
      assertSameAnswers(fresh, restarted);
      const again = await readCollectionCache(state, data, RESOURCES.celebrities, id);
      assert.ok(again.index && !again.stale, 'written again for the new identity');
    }
  });

  it('a restart after an edit of celebrities.json (a process that knows no digest) reads no data file only to hash it but the edited one when its size is the same', async () => {
    const { data, state } = await setup();
    await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'celebrities.json');
    for (const [what, edit, hashed] of [
      // Same size: hashed to tell it from a touch; the patch then takes that digest (its read hashes nothing).
      ['a name letter', async () => {
        const text = await readFile(file, 'utf8');
        const at = text.indexOf('"name":"') + '"name":"'.length;
        await writeFile(file, text.slice(0, at) + (text[at] === 'Q' ? 'X' : 'Q') + text.slice(at + 1));
        await sleep(SETTLE_MS);
      }, 1],
      // Another size: other bytes without a hash; the patch's read makes the digest the cache write takes.
      ['a space at the end', () => editFile(file), 0],
    ] as const) {
      await edit();
      forgetDigests();
      const before = hashStats.files;
      const { lines, log } = infoLines();
      const restarted = await loadSnapshot(data, { cacheDir: state, log });
      assert.match(lines.find((l) => l.startsWith('data read and indexed'))!, /"patched":\["celebrities"\],"unaffected":\["outfits","news"(,"movies"\]|\],"relinked":\["movies"\])/, what);
      assert.ok(lines.some((l) => l.startsWith('boot cache written')), lines.join('\n'));
      // (movies.json, outfits.json, news.json: their digests from the cache headers, written for their identities.)
      assert.equal(hashStats.files - before, hashed, `${what}: files read whole to be hashed`);
      assertSameAnswers(await loadSnapshot(data), restarted);
      assert.ok(await loadSnapshotCache(state, data), `${what}: every collection cached for the files as they are`);
    }
  });

  it('an edit after a touch whose cache rewrite was cut short (celebrities written under the touched identity, the others not): outfits, news and movies still kept from their caches (the same bytes by the digests)', async () => {
    const { data, state } = await setup();
    const first = await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'celebrities.json');
    await touchFile(file);
    // The restart after the touch rewrote the celebrities' cache alone (then was stopped).
    assert.ok(await saveCollectionCache(state, data, 'celebrities', first.collections.celebrities, await readDataIdentity(data)));
    const text = await readFile(file, 'utf8');
    const at = text.indexOf('"name":"') + '"name":"'.length;
    await writeFile(file, text.slice(0, at) + (text[at] === 'Q' ? 'X' : 'Q') + text.slice(at + 1));
    await sleep(SETTLE_MS);
    const { lines, log } = infoLines();
    const restarted = await loadSnapshot(data, { cacheDir: state, log });
    assert.match(lines.find((l) => l.startsWith('data read and indexed'))!, /"built":\[\].*"patched":\["celebrities"\],"unaffected":\["outfits","news"(,"movies"\]|\],"relinked":\["movies"\])/);
    assertSameAnswers(await loadSnapshot(data), restarted);
  });

  it('a reload after a touch keeps every collection; after an edit of the same size it rebuilds what the file makes', async () => {
    const { data, state } = await setup();
    const first = await loadSnapshot(data, { cacheDir: state });
    const file = join(data, 'outfits.json');
    await touchFile(file);
    const touched = await loadSnapshot(data, { cacheDir: state, previous: first });
    for (const name of COLLECTIONS) assert.equal(touched.collections[name], first.collections[name], `${name} kept`);
    // Same size, other bytes: a title's first letter.
    const text = await readFile(file, 'utf8');
    const at = text.indexOf('"title":"') + '"title":"'.length;
    await writeFile(file, text.slice(0, at) + (text[at] === 'Q' ? 'X' : 'Q') + text.slice(at + 1));
    await sleep(SETTLE_MS);
    const edited = await loadSnapshot(data, { cacheDir: state, previous: touched });
    assert.notEqual(edited.collections.outfits, touched.collections.outfits, 'outfits rebuilt');
    assert.equal(edited.collections.news, touched.collections.news, 'news kept');
    assertSameAnswers(await loadSnapshot(data), edited);
  });

  it('an edit, and a cache that misses only once its sections are read (a damaged index section) -> built as well, whether the build reads it (celebrities) or not (news)', async () => {
    for (const damaged of ['celebrities', 'news'] as const) {
      const { data, state } = await setup();
      await loadSnapshot(data, { cacheDir: state });
      await editFile(join(data, 'outfits.json'));
      const file = collectionFile(state, damaged);
      await flip(file, await sectionAt(file, (s) => s.kind === 'i32' && s.bytes > 64, 33));
      const { lines, log } = infoLines();
      const next = await loadSnapshot(data, { cacheDir: state, log });
      const built = lines.find((l) => l.startsWith('data read and indexed'))!;
      // Outfits patched (patch.ts) when the celebrities it links to are not rebuilt.
      assert.match(built, damaged === 'news' ? /"built":\["news"\].*"patched":\["outfits"\]/ : /"built":\["celebrities","outfits"\]/, built);
      assert.ok(lines.some((l) => l.startsWith('boot cache not used') && l.includes(`"${damaged}":"an index section is damaged"`)), lines.join('\n'));
      assertSameAnswers(await loadSnapshot(data), next);
      assert.ok(await loadSnapshotCache(state, data), 'both written again');
    }
  });

  it('a touch with no digest known for the old identity (a snapshot loaded without a cache) -> rebuilt, as before', async () => {
    const { data } = await setup();
    const first = await loadSnapshot(data, { cacheDir: join(root, `state-nodigest-${n}`) });
    const other = join(root, `data-copy-${n}`);
    await cp(data, other, { recursive: true });
    await sleep(SETTLE_MS);
    // A directory never cached: its identities have no digest in this process.
    const base = await loadSnapshot(other);
    await touchFile(join(other, 'outfits.json'));
    const next = await loadSnapshot(other, { previous: base });
    assert.notEqual(next.collections.outfits, base.collections.outfits);
    assert.equal(next.collections.news, base.collections.news);
    assertSameAnswers(first, next);
  });

  it('a crash while writing leaves the old cache: a half-written temp file beside it is never read', async () => {
    const { data, state } = await setup();
    await loadSnapshot(data, { cacheDir: state });
    const whole = await readFile(cacheFile(state));
    // What a writer killed mid-way leaves: its temp file, never the cache's own name.
    await writeFile(`${cacheFile(state)}.99999.deadbeef.tmp`, whole.subarray(0, whole.length >> 1));
    const read = await readSnapshotCache(state, data);
    assert.ok(read.index, 'the old cache is still whole');
    await rm(cacheFile(state));
    assert.equal((await readSnapshotCache(state, data)).miss, 'none yet', 'no cache at all: the temp file is not taken for one');
  });

  it('files changed within the racy window of the load -> not cached (a same-tick rewrite could not be told apart)', async () => {
    const data = join(root, 'racy');
    await writeDataset(data, { scale: 5 });
    // Not "load within 100 ms of writing", which a busy machine misses: the files' mtimes are put 60 s
    // ahead, so the load starts inside the window however long it takes to get there.
    const ahead = new Date(Date.now() + 60_000 + 123);
    for (const name of ['celebrities', 'outfits', 'news', 'movies', 'reviews']) await utimes(join(data, `${name}.json`), ahead, ahead);
    const state = join(root, 'racy-state');
    await loadSnapshot(data, { cacheDir: state });
    assert.equal(existsSync(cacheFile(state)), false);
  });

  describe('a damaged cache file -> ignored, then rewritten', () => {
    let dirs: { data: string; state: string };
    let fresh: Snapshot;
    before(async () => {
      dirs = await setup();
      fresh = await loadSnapshot(dirs.data);
    });
    for (const [name, damage] of [
      ['truncated to half', async (f: string) => truncate(f, (await stat(f)).size >> 1)],
      ['truncated by one byte', async (f: string) => truncate(f, (await stat(f)).size - 1)],
      ['a byte flipped in the last section', async (f: string) => flip(f, (await stat(f)).size - 1000)],
      ['a byte flipped in an index section', async (f: string) => flip(f, await sectionAt(f, (s) => s.kind === 'i32' && s.bytes > 64, 33))],
      ['a zeroed page inside a JSON arena (torn)', async (f: string) => zero(f, await sectionAt(f, (s) => s.crc === null && s.bytes > 20_000, 10_000), 4096)],
      ['a zeroed page inside the detail-only arena (torn: records there start with a value, no key)', async (f: string) => {
        const { header, base } = await readHeader(f);
        const own = header.sections[header.collection.detail.own.bytes]!;
        assert.ok(own.crc === null && own.bytes > 3 * 4096);
        await zero(f, base + own.offset + (own.bytes >> 1), 4096);
      }],
      ['a byte flipped in the header', (f: string) => flip(f, 20)],
      ['from another format version', (f: string) => rewriteHeader(f, (h) => ({ ...h, key: h.key.replace(/"format":\d+/, '"format":3') }))],
      ['written for another data directory (foreign)', (f: string) => rewriteHeader(f, (h) => ({ ...h, key: h.key.replace(/"dir":"./, '"dir":"X') }))],
      ['bad magic', (f: string) => flip(f, 0)],
      ['empty', (f: string) => writeFile(f, '')],
      ['garbage', (f: string) => writeFile(f, Buffer.alloc(4096, 7))],
    ] as const) {
      it(`${name} -> miss, then a normal load that rewrites it`, async () => {
        const { data, state } = dirs;
        if (!(await loadSnapshotCache(state, data))) await loadSnapshot(data, { cacheDir: state });
        await damage(cacheFile(state));
        const read = await readSnapshotCache(state, data);
        assert.equal(read.index, null);
        assert.match(read.miss!, /\w/, 'a miss says why (the log line)');
        assertSameAnswers(fresh, await loadSnapshot(data, { cacheDir: state }));
        const cached = await loadSnapshotCache(state, data);
        assert.ok(cached, 'rewritten');
        assertSameAnswers(fresh, { ...fresh, collections: cached });
      });
    }
  });

  it('invalid data -> DataError, no cache written, and an existing cache never serves it', async () => {
    const { data, state } = await setup();
    const bad = join(root, 'bad');
    await writeDataset(bad, { scale: 5 });
    await writeFile(join(bad, 'reviews.json'), '[{"_id": 1}]');
    await sleep(SETTLE_MS);
    await assert.rejects(loadSnapshot(bad, { cacheDir: state }), DataError);
    assert.equal(existsSync(cacheFile(state)), false);

    await loadSnapshot(data, { cacheDir: state });
    // Same size, same mtime, now an invalid slug: the change time alone must invalidate.
    const file = join(data, 'movies.json');
    const text = await readFile(file, 'utf8');
    const at = text.indexOf('"slug":"') + '"slug":"'.length;
    const { mtime } = await stat(file);
    await writeFile(file, text.slice(0, at) + 'X' + text.slice(at + 1));
    await utimes(file, mtime, mtime);
    await assert.rejects(loadSnapshot(data, { cacheDir: state }), DataError);
    assert.equal(await loadSnapshotCache(state, data), null);
  });

  it('in-memory arrays and a service with state "memory" -> no cache; a state directory -> cached', async () => {
    const state = join(root, 'arrays-state');
    const arrays = generateRecords({ scale: 5 });
    await loadSnapshot(arrays, { cacheDir: state });
    assert.equal(existsSync(state), false);

    const { data, state: dir } = await setup();
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const service = await startService({ data, state: 'memory', tls: false, port: 0, host: '127.0.0.1' });
      await service.reload();
      await service.close();
      assert.equal(existsSync(join(root, 'memory')), false);
    } finally {
      process.chdir(cwd);
    }
    const service = await startService({ data, state: dir, tls: false, port: 0, host: '127.0.0.1' });
    try {
      await service.cacheWritten();
      assert.ok(await loadSnapshotCache(dir, data), 'start writes the cache');
      await rm(cacheFile(dir));
      await editFile(join(data, 'celebrities.json'));
      await service.reload();
      assert.ok(await loadSnapshotCache(dir, data), 'a reload writes the cache of what it rebuilt');
    } finally {
      await service.close();
    }
  });
});

describe('the boot cache written after the server listens', () => {
  const logLines = () => {
    const lines: string[] = [];
    const log = { enabled: () => true, debug() {}, info: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(m), error: (m: string) => void lines.push(m) };
    return { lines, log };
  };
  const leftovers = async (state: string) => (await readdir(join(state, 'cache')).catch(() => [] as string[])).filter((f) => !f.endsWith('.bin'));

  it('a first start -> listening before the cache is written; close finishes the write', async () => {
    const { data, state } = await setup();
    const { lines, log } = logLines();
    const service = await startService({ data, state, tls: false, port: 0, host: '127.0.0.1', log });
    assert.equal(lines.includes('boot cache written'), false, 'not written before startService resolves');
    assert.equal(existsSync(cacheFile(state)), false);
    await service.close();
    assert.ok(lines.includes('boot cache written'), lines.join('\n'));
    assert.ok(await loadSnapshotCache(state, data), 'every collection cached');
    assert.deepEqual(await leftovers(state), []);
  });

  it('a kill part-way through the write (any set of cache files present) -> a restart builds the missing collections, same answers', async () => {
    const data = join(root, `data-${++n}`);
    await writeDataset(data, { scale: 20 });
    await sleep(SETTLE_MS);
    const full = join(root, `state-${n}`);
    const fresh = await loadSnapshot(data, { cacheDir: full });
    for (let mask = 1; mask < 1 << COLLECTIONS.length; mask++) {
      const gone = COLLECTIONS.filter((_, i) => mask & (1 << i));
      const state = join(root, `state-${n}-${mask}`);
      await cp(full, state, { recursive: true });
      for (const name of gone) await rm(collectionFile(state, name));
      assertSameAnswers(fresh, await loadSnapshot(data, { cacheDir: state }));
    }
  });

  it('close with a deadline of 0 -> the pending write dropped: no temp file left, no torn cache', async () => {
    const { data, state } = await setup();
    const { lines, log } = logLines();
    const service = await startService({ data, state, tls: false, port: 0, host: '127.0.0.1', log });
    await service.close(0);
    // Dropped, unless the write won the race with a timer of 0 ms.
    assert.ok(lines.includes('shutdown deadline reached; the boot cache not yet written is dropped') || lines.includes('boot cache written'), lines.join('\n'));
    assert.deepEqual(await leftovers(state), []);
    // What was written before the deadline is whole; the next start reads it or builds what is missing.
    const id = await readDataIdentity(data);
    for (const def of RESOURCE_LIST) {
      const got = await readCollectionCache(state, data, def, id);
      assert.ok(got.index !== null || got.miss === 'none yet', `${def.name}: ${got.miss}`);
    }
  });

  it('a reload before the first write ran -> the first write lets go of what the reload rebuilt and hands it what it kept', async () => {
    const { data, state } = await setup();
    let first: CacheWrite | null = null;
    const snap = await loadSnapshot(data, { cacheDir: state, writeLater: (w) => (first = w) });
    await editFile(join(data, 'reviews.json'));
    let second: CacheWrite | null = null;
    const next = await loadSnapshot(data, { cacheDir: state, previous: snap, writeLater: (w) => (second = w) });
    assert.notEqual(next.collections.reviews, snap.collections.reviews);
    second!.follow(next);
    first!.follow(next, second!);
    await first!.start();
    assert.equal(existsSync(join(state, 'cache')), false, 'the first write has nothing left to write');
    await second!.start();
    const cached = await loadSnapshotCache(state, data);
    assert.ok(cached, 'every collection cached, keyed to the files as they are now');
    assertSameAnswers(next, { ...next, collections: cached });
    assert.deepEqual(await leftovers(state), []);
  });
});

async function flip(file: string, at: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, at);
    b[0] = b[0]! ^ 0xff;
    await fh.write(b, 0, 1, at);
  } finally {
    await fh.close();
  }
}

/** The file offset of byte `at` of the first section that `pick` accepts. */
async function sectionAt(file: string, pick: (s: Section) => boolean, at: number): Promise<number> {
  const { header, base } = await readHeader(file);
  const s = header.sections.find(pick)!;
  return base + s.offset + Math.min(at, s.bytes - 1);
}

async function readHeader(file: string): Promise<{ header: Header; base: number; bytes: Buffer }> {
  const bytes = await readFile(file);
  const length = bytes.readUInt32LE(MAGIC.length);
  const header = JSON.parse(bytes.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + length)) as Header;
  return { header, base: align8(PREFIX_BYTES + length), bytes };
}

/** Replaces the header by `change(header)`, with a valid header CRC and the sections where they were. */
async function rewriteHeader(file: string, change: (h: Header) => Header): Promise<void> {
  const { header, base, bytes } = await readHeader(file);
  const json = Buffer.from(JSON.stringify(change(header)));
  assert.ok(align8(PREFIX_BYTES + json.length) === base, 'same padded header length');
  const head = Buffer.alloc(base);
  bytes.copy(head, 0, 0, MAGIC.length);
  head.writeUInt32LE(json.length, MAGIC.length);
  head.writeUInt32LE(crc32!(json), MAGIC.length + 4);
  json.copy(head, PREFIX_BYTES);
  await writeFile(file, Buffer.concat([head, bytes.subarray(base)]));
}

async function zero(file: string, at: number, length: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.write(Buffer.alloc(length), 0, length, at);
  } finally {
    await fh.close();
  }
}
