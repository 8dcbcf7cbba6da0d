// src/threads/pages.ts: the first pages' best compressed forms, made once by the main thread for
// every thread and handed over in shared memory (issue 21).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { loadSnapshot, type Snapshot } from '../../src/data/snapshot.ts';
import { CompressedBodies } from '../../src/http/compressed-bodies.ts';
import { listPage } from '../../src/http/handlers.ts';
import { PagePacker, sharePages, unsharePages, type SharedPages } from '../../src/threads/pages.ts';

const DATA = fileURLToPath(new URL('../../data/', import.meta.url));
const DAY = 20261127;

/** A packer whose sets are kept in order; `next()` resolves with the next one posted. */
function packer(): { packer: PagePacker; posted: SharedPages[]; next(): Promise<SharedPages> } {
  const posted: SharedPages[] = [];
  let waiting: ((s: SharedPages) => void) | null = null;
  const p = new PagePacker(
    (s) => {
      posted.push(s);
      waiting?.(s);
      waiting = null;
    },
    (err) => assert.fail(String(err)),
  );
  return { packer: p, posted, next: () => new Promise((resolve) => (waiting = resolve)) };
}

const firstPages = (s: Snapshot) => Object.values(s.collections).flatMap((c) => ['', ...c.def.sorts.map((x) => `sort=${x.name}`)].map((q) => [c.def.name, q] as const));

test('sharePages -> unsharePages: every page and its forms as made, read in place from one SharedArrayBuffer', () => {
  const made = [
    { collection: 'movies' as const, query: '', day: 0, br: Buffer.from('brotli one'), gzip: Buffer.from('gzip one!') },
    { collection: 'celebrities' as const, query: 'sort=oldest', day: DAY, br: Buffer.from('b2'), gzip: Buffer.from('g2 longer') },
  ];
  const shared = sharePages('v1', made);
  assert.equal(shared.version, 'v1');
  assert.ok(shared.bytes instanceof SharedArrayBuffer);
  const back = unsharePages(shared);
  assert.deepEqual(back.map((p) => [p.collection, p.query, p.day, p.br.toString(), p.gzip.toString()]), made.map((p) => [p.collection, p.query, p.day, p.br.toString(), p.gzip.toString()]));
  assert.ok(back.every((p) => p.br.buffer === shared.bytes && p.gzip.buffer === shared.bytes), 'a copy, not the shared bytes');
});

test('PagePacker.pack: every first page of the snapshot in both codings, the bodies a request gets; of() gives the set for its snapshot only', async () => {
  const snapshot = await loadSnapshot(DATA);
  const { packer: p, next } = packer();
  assert.equal(p.of(snapshot), null);
  const posted = next();
  p.pack(snapshot, DAY);
  const shared = await posted;
  assert.equal(p.of(snapshot), shared);
  assert.equal(p.of({ ...snapshot, version: 'another' }), null);
  const pages = unsharePages(shared);
  const expected = firstPages(snapshot).filter(([c, q]) => {
    const o = listPage(snapshot.collections[c], q, DAY);
    return o.ok && o.body.length >= 1024;
  });
  assert.ok(expected.length > 10);
  assert.deepEqual(pages.map((x) => `${x.collection}?${x.query}`).sort(), expected.map(([c, q]) => `${c}?${q}`).sort());
  for (const x of pages) {
    const body = listPage(snapshot.collections[x.collection], x.query, DAY);
    assert.ok(body.ok);
    assert.deepEqual(zlib.brotliDecompressSync(x.br), body.body, `${x.collection}?${x.query} br`);
    assert.deepEqual(zlib.gunzipSync(x.gzip), body.body, `${x.collection}?${x.query} gzip`);
    assert.equal(x.day, x.collection === 'celebrities' ? DAY : 0, 'a page holding age is made for its day, the others for day 0');
  }
  // What a thread does with them: its set for the snapshot keeps them.
  const bodies = new CompressedBodies(snapshot);
  for (const x of pages) bodies.give(x);
  const one = pages[0]!;
  assert.equal(bodies.page(one.collection, one.query)!.br, one.br);
});

test('PagePacker: a second snapshot before the first set is made -> only the second is posted; a new day -> the late pages again, same day -> nothing', async () => {
  const [a, b] = [await loadSnapshot(DATA), await loadSnapshot(DATA)];
  assert.notEqual(a.version, b.version);
  const { packer: p, posted, next } = packer();
  let set = next();
  p.pack(a, DAY);
  p.pack(b, DAY);
  const first = await set;
  // The first set's warm stopped at its next page, long before the second's last.
  assert.deepEqual(posted.map((s) => s.version), [b.version]);
  assert.equal(first.version, b.version);

  // The same day: nothing made again.
  const warm = CompressedBodies.prototype.warm;
  let warms = 0;
  CompressedBodies.prototype.warm = function (this: CompressedBodies, ...args: Parameters<typeof warm>) {
    warms++;
    return warm.apply(this, args);
  };
  try {
    p.daily(b, DAY);
    assert.equal(warms, 0);
  } finally {
    CompressedBodies.prototype.warm = warm;
  }
  set = next();
  p.daily(b, DAY + 1);
  const second = await set;
  assert.equal(posted.length, 2);
  assert.equal(second.version, b.version);
  const before = new Map(unsharePages(first).map((x) => [`${x.collection}?${x.query}`, x]));
  const after = unsharePages(second);
  assert.equal(after.length, before.size, 'the whole set, the late pages replaced');
  for (const x of after) {
    const old = before.get(`${x.collection}?${x.query}`)!;
    if (x.collection === 'celebrities') assert.equal(x.day, DAY + 1);
    else assert.deepEqual([x.day, x.br], [old.day, old.br]);
  }
  p.stop();
});
