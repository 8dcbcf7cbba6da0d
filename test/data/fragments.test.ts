// src/data/fragments.ts, the send side: a late value's digits written straight into a body are its
// JSON text, and a page joined in one pass is byte for byte its items joined with commas, on any day.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FragmentBuilder, GrowingF64, GrowingI32, joinFragments, joinLargeAbove, numberLength, offsetsOf, recordOffsetsOf, U32_OFFSETS_LIMIT, writeNumber, type Fragments } from '../../src/data/fragments.ts';
import { buildIndex, listBody } from '../../src/data/indexes.ts';
import { compileShapes } from '../../src/data/shape.ts';
import { Scratch, UNMOVING_BYTES } from '../../src/data/scratch.ts';
import { addSendRoom, releaseSendBuffer, SEND_ROOM_BYTES } from '../../src/data/send-buffer.ts';
import { loadLinked } from '../../src/data/load.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

test('writeNumber: value -> its JSON text, and numberLength its length', () => {
  const cases: [number, string][] = [
    [0, '0'], [-0, '0'], [7, '7'], [9, '9'], [10, '10'], [99, '99'], [100, '100'], [101, '101'],
    [123456789, '123456789'], [-1, '-1'], [-10, '-10'], [-999, '-999'], [1.5, '1.5'], [1e12, '1000000000000'], [NaN, 'null'],
  ];
  for (const [v, want] of cases) {
    const out = Buffer.alloc(32, 0x20);
    const end = writeNumber(v, out, 3);
    assert.equal(out.toString('latin1', 3, end), want, `${v} -> ${want}`);
    assert.equal(numberLength(v), want.length, `${v}: length`);
  }
});

test('arena offsets: under 4 GiB -> Uint32Array (4 bytes each), from 4 GiB on -> Float64Array, the same values', () => {
  const small = Float64Array.of(0, 17, 2 ** 32 - 1);
  const narrow = offsetsOf(small, 2 ** 32 - 1);
  assert.ok(narrow instanceof Uint32Array);
  assert.deepEqual([...narrow], [...small]);
  const large = Float64Array.of(0, 2 ** 31, U32_OFFSETS_LIMIT, 5 * 2 ** 30);
  const wide = offsetsOf(large, 5 * 2 ** 30);
  assert.ok(wide instanceof Float64Array, 'an offset past 2^32 - 1 would wrap in a Uint32Array');
  assert.deepEqual([...wide], [...large]);
  assert.ok(offsetsOf(Float64Array.of(0, U32_OFFSETS_LIMIT), U32_OFFSETS_LIMIT) instanceof Float64Array, 'the end offset of a 4 GiB arena is 2^32');
  const grown = new GrowingF64(2);
  for (const v of [0, 3, 9, 40]) grown.push(v);
  assert.deepEqual(grown.finishOffsets(40), Uint32Array.of(0, 3, 9, 40));
  const f = new FragmentBuilder(2, null, 1 << 16);
  f.add('{"a":1}');
  f.add('{"b":22}');
  const done = f.finish();
  assert.ok(done.starts instanceof Uint32Array);
  assert.deepEqual([...done.starts], [0, 7, 15]);
});

test('GrowingF64 and GrowingI32: past one 64 KiB chunk, every value in order, each finish exactly the length', () => {
  for (const n of [0, 1, 16, 17, 8191, 8192, 8193, 16384, 16385, 50_000]) {
    const f = new GrowingF64(0);
    const i = new GrowingI32(n);
    for (let k = 0; k < n; k++) {
      f.push(k + 0.5);
      i.push(k * 3);
      assert.equal(i.last, k * 3);
    }
    assert.equal(f.length, n);
    const into = f.copyTo(new Float64Array(n + 2));
    const fs = f.finish();
    assert.deepEqual([...into.subarray(0, n)], [...fs]);
    assert.ok(fs instanceof Float64Array);
    assert.equal(fs.length, n);
    assert.equal(fs.every((v, k) => v === k + 0.5), true, `F64 ${n}`);
    const is = i.finish();
    assert.equal(is.length, n);
    assert.equal(is.every((v, k) => v === k * 3), true, `I32 ${n}`);
    const again = new GrowingI32(0);
    for (let k = 0; k < n; k++) again.push(k * 3);
    assert.deepEqual([...again.finishU32()], [...is]);
    const third = new GrowingI32(n);
    for (let k = 0; k < n; k++) third.push(k * 3);
    const ro = third.finishRecordOffsets();
    assert.ok(n * 3 - 3 > 0xffff ? ro instanceof Uint32Array : ro instanceof Uint16Array, `${n}: the narrowest`);
    assert.deepEqual([...ro], [...is]);
  }
  const exact = new GrowingI32(20);
  for (let k = 0; k < 20; k++) exact.push(k);
  const a = exact.finish();
  assert.deepEqual([...a], [...Array(20).keys()]);
  assert.equal(exact.finish().length, 0, 'a finish lets go of the values');
  // With a Scratch: the chunks past the first 64 KiB are views of its blocks; what a finish returns is its own.
  const scratch = new Scratch();
  const f = new GrowingF64(0, scratch);
  const i = new GrowingI32(0, scratch);
  for (let k = 0; k < 50_000; k++) f.push(k / 2), i.push(k * 2);
  const fs = f.finish();
  const is = i.finishRecordOffsets();
  assert.equal(fs.buffer.byteLength, 50_000 * 8, 'an array of its own, not a view of a block');
  assert.equal(fs.every((v, k) => v === k / 2), true);
  assert.ok(is instanceof Uint32Array, 'values past 0xffff');
  assert.equal(is.every((v, k) => v === k * 2), true);
  const taken = scratch.int32(2, true);
  assert.ok(taken.buffer.byteLength >= 32 << 20, 'the chunks came from a shared block');
  assert.ok(taken.byteOffset >= 2 * (50_000 - 8192) * 4, 'after the chunks');
  const wide = new GrowingI32(0);
  wide.push(0x10000);
  wide.push(1);
  const w = wide.finishRecordOffsets();
  assert.ok(w instanceof Uint32Array);
  assert.deepEqual([...w], [0x10000, 1]);
});

test('FragmentBuilder: its write chunk sized from a hint of 1 MiB to 32 MiB is a view of a 32 MiB block (its free moves no mmap threshold: scratch.ts)', () => {
  // At 10k a data file is 9-26 MB, and a chunk of the file's size, freed once the arena was done, set
  // glibc's mmap threshold to 25.6 MB: at ready, 107 MB of free malloc memory stayed resident (Node 26).
  for (const [hint, block] of [
    [5 << 20, UNMOVING_BYTES],
    [(32 << 20) - 1, UNMOVING_BYTES],
    [64 << 20, 32 << 20],
    [1000, 64 << 10],
  ] as const) {
    const b = new FragmentBuilder(3, null, hint);
    assert.equal(b.buf.buffer.byteLength, block, `a hint of ${hint} bytes`);
    assert.equal(b.buf.length, Math.min(Math.max(hint, 64 << 10), 32 << 20));
    b.add('{"a":1}');
    b.add('{"b":"' + 'x'.repeat(70_000) + '"}');
    b.add('{}');
    const f = b.finish();
    assert.equal(f.bytes.toString(), '{"a":1}{"b":"' + 'x'.repeat(70_000) + '"}{}');
    assert.deepEqual([...f.starts], [0, 7, 7 + 70_008, 7 + 70_008 + 2]);
  }
});

test('offsets within a record: all below 65,536 -> Uint16Array, else the Uint32Array as it is', () => {
  const small = recordOffsetsOf(Uint32Array.of(0, 9, 0xffff));
  assert.ok(small instanceof Uint16Array);
  assert.deepEqual([...small], [0, 9, 0xffff]);
  const wide = Uint32Array.of(3, 0x10000);
  assert.equal(recordOffsetsOf(wide), wide, 'a record of 64 KB or more keeps 4-byte offsets');
});

/** `f` with its bytes copied into memory that has a room for bodies after them (boot-cache-read.ts). */
function withRoom(f: Fragments): Fragments {
  const memory = new ArrayBuffer(f.bytes.length + SEND_ROOM_BYTES);
  const bytes = Buffer.from(memory, 0, f.bytes.length);
  f.bytes.copy(bytes);
  addSendRoom(memory, bytes.length);
  return { ...f, bytes };
}

for (const large of [false, true]) for (const given of [false, true]) {
test(`every collection${large ? ', joined as a large arena (records touched ahead, cuts interleaved)' : ''}${given ? ', each body given back (the next made in the room in its arena\'s memory)' : ''}: listBody == head + the list items joined by commas + "]}", on days across age digit counts`, async (t) => {
  if (large) {
    joinLargeAbove(0);
    t.after(() => joinLargeAbove(16 << 20));
  }
  const linked = await loadLinked(generateRecords({ scale: 40 }));
  for (const def of RESOURCE_LIST) {
    const records = linked[def.name];
    const ix = buildIndex(def, records);
    // The list arena in memory with a room after it, as the boot cache's reader gives it.
    const roomed = { ...ix, list: withRoom(ix.list) };
    const shapes = compileShapes(def);
    const all = Int32Array.from({ length: ix.size }, (_, i) => ix.size - 1 - i);
    // Ages of 0-9, 10-99 and 100+ (a born date decades away from the serving day).
    for (const today of [19700101, 20260115, 20360601, 21500101]) {
      for (const ids of [all, all.subarray(0, 1), all.subarray(3, 23), new Int32Array(0)]) {
        const item = (id: number): string => {
          const [head, tail] = shapes(records[id]!).list;
          if (tail === null) return head;
          const key = def.late!.key(records[id]!);
          return head + (key === null ? 'null' : String(def.late!.value(key, today))) + tail;
        };
        const want = `{"head":[${Array.from(ids, item).join(',')}]}`;
        const head = Buffer.from('{"head":[');
        const body = listBody(given ? roomed : ix, ids, today, head, head.length);
        assert.equal(body.toString(), want, `${def.name}, ${ids.length} items on ${today}`);
        if (!given) continue;
        // (Not a body larger than the room: in the slab. Lists that embed another collection's records, joinEmbedded, are read from the boot cache in boot-cache.test.)
        if (body.length <= SEND_ROOM_BYTES) assert.ok(body.buffer === roomed.list.bytes.buffer, `${def.name}, ${ids.length} items: built in the arena's room`);
        releaseSendBuffer(body);
      }
    }
  }
});
}

test('a large arena whose late keys do not fit a word is joined from its three arrays: the same bytes', (t) => {
  joinLargeAbove(0);
  t.after(() => joinLargeAbove(16 << 20));
  const records = ['{"n":1,"v":}', '{"n":2,"v":}', '{"n":3,"v":}'];
  const bytes = Buffer.from(records.join(''));
  const starts = Uint32Array.of(0, 12, 24, 36);
  const gaps = Uint32Array.of(11, 23, 35);
  const late = { field: 'v', key: () => null, value: (key: number, today: number) => key + today };
  const tail = Buffer.from(']}');
  const head = Buffer.from('[');
  for (const [keys, values] of [
    [Float64Array.of(7, NaN, 2 ** 32 - 2), ['8', 'null', String(2 ** 32 - 1)]], // fits: the cuts
    [Float64Array.of(7, NaN, 2 ** 32), ['8', 'null', String(2 ** 32 + 1)]], // past a word: the arrays
    [Float64Array.of(7, 0.5, -3), ['8', '1.5', '-2']], // a fraction, a negative: the arrays
  ] as const) {
    const f: Fragments = { bytes, starts, gaps, late, keys };
    const want = `[${[2, 0, 1].map((id) => records[id]!.replace(':}', `:${values[id]}}`)).join(',')}]}`;
    assert.equal(joinFragments(f, Int32Array.of(2, 0, 1), 1, head, head.length, tail).toString(), want);
  }
});
