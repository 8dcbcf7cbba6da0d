// Limits that scale 1M (about 10M records, 8.5 GB of JSON) reaches, each checked on a small fixture
// here; the 1M load itself runs in `npm run bench:boot -- --scales 1M`, never in npm test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { align8 } from '../../src/data/boot-cache-format.ts';
import { FragmentBuilder } from '../../src/data/fragments.ts';
import { indexOfIn, lookupSlug, slugAt, slugTable } from '../../src/data/string-table.ts';

describe('scale limits', () => {
  it('align8 rounds sizes and offsets past 2 GiB and 4 GiB (the outfits list arena is 2.4 GB at 1M)', () => {
    for (const [n, want] of [
      [0, 0], [1, 8], [8, 8], [13, 16],
      [2 ** 31 - 1, 2 ** 31], [2 ** 31 + 1, 2 ** 31 + 8], [2 ** 32 + 3, 2 ** 32 + 8], [5 * 2 ** 30 + 8, 5 * 2 ** 30 + 8],
    ] as const) assert.equal(align8(n), want, `align8(${n})`);
  });
});

describe('an arena past 2 GiB (sparse: only the bytes written take memory)', () => {
  it('the slug table finds, looks up and decodes a slug whose list item starts past 2 GiB (Buffer#indexOf wraps there)', { timeout: 20_000 }, () => {
    const size = 2 ** 31 + 2 ** 20;
    const bytes = Buffer.allocUnsafeSlow(size);
    // Copied in: Node 20's Buffer#write into a buffer past 2 GiB writes nothing (the arenas are only ever copied into).
    const item = (at: number, slug: string) => Buffer.from(`{"_id":"x","slug":"${slug}","name":"n"}`, 'latin1').copy(bytes, at);
    // Item 0 at the start, item 1 ends just past 2 GiB, item 2 lies wholly past it.
    const starts = Float64Array.from([0, 64, 2 ** 31 + 500, size]);
    item(0, 'first');
    item(64, 'second');
    item(2 ** 31 + 500, 'third-one');
    bytes.fill(0x20, 2 ** 31 + 540, size);
    const t = slugTable(bytes, starts, ['first', 'second', 'third-one']);
    assert.equal(starts[2]! + t.at[2]!, 2 ** 31 + 500 + '{"_id":"x","slug":"'.length);
    assert.equal(lookupSlug(t, bytes, starts, 'third-one'), 2);
    assert.equal(lookupSlug(t, bytes, starts, 'second'), 1);
    assert.equal(slugAt(t, bytes, starts, 2), 'third-one');
    assert.equal(indexOfIn(bytes, 0x22, 2 ** 31 + 500, size), 2 ** 31 + 501);
    assert.equal(indexOfIn(bytes, 0x7b, 65, 2 ** 31), -1, 'no match in range, one past 2 GiB');
  });
});

describe('finishing an arena', () => {
  it('copies nothing: the process grows by the arena and one chunk, not by the chunks and a copy of them (twice the arena: +2.4 GB for the outfits list at 1M)', () => {
    // 1 MB chunks (the builder's size hint caps them), 48 MB of records. RSS, not arrayBuffers:
    // V8 does not count a resizable ArrayBuffer's memory there.
    const b = new FragmentBuilder(0, null, 1 << 20);
    const record = `{"text":"${'x'.repeat(1000)}"}`;
    const n = 48_000;
    const before = process.memoryUsage().rss;
    for (let i = 0; i < n; i++) b.add(record);
    const f = b.finish();
    const grown = process.memoryUsage().rss - before;
    assert.equal(f.bytes.length, n * record.length);
    assert.equal(f.bytes.toString('latin1', f.starts[n - 1]!, f.starts[n]!), record);
    assert.ok(grown < f.bytes.length * 1.5, `RSS grew by ${grown} bytes for an arena of ${f.bytes.length}`);
  });
});
