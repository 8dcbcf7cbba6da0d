// src/data/fragments.ts, the send side: a late value's digits written straight into a body are its
// JSON text, and a page joined in one pass is byte for byte its items joined with commas, on any day.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numberLength, writeNumber } from '../../src/data/fragments.ts';
import { buildIndex, listBody } from '../../src/data/indexes.ts';
import { compileShapes } from '../../src/data/shape.ts';
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

test('every collection: listBody == head + the list items joined by commas + "]}", on days across age digit counts', async () => {
  const linked = await loadLinked(generateRecords({ scale: 40 }));
  for (const def of RESOURCE_LIST) {
    const records = linked[def.name];
    const ix = buildIndex(def, records);
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
        assert.equal(listBody(ix, ids, today, head, head.length).toString(), want, `${def.name}, ${ids.length} items on ${today}`);
      }
    }
  }
});
