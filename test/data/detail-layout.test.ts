// src/data/detail-layout.ts: a detail assembled from its list item's runs and its detail-only text is
// byte for byte the body the detail shape gives, on any serving day; field starts are found past
// strings that hold commas, braces, quotes and escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detailPlan, fieldStarts } from '../../src/data/detail-layout.ts';
import { buildIndex, detailBody } from '../../src/data/indexes.ts';
import { compileShapes } from '../../src/data/shape.ts';
import { loadLinked } from '../../src/data/load.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

test('fieldStarts: "text" -> the start of each wanted top-level field', () => {
  const obj = { a: 'x,y', b: { c: [1, { d: '}' }], e: '"' }, f: 'q\\",', g: [], h: null };
  const text = JSON.stringify(obj);
  const starts = fieldStarts(text, [0, 1, 2, 3, 4, 5], 5);
  assert.deepEqual(
    starts.map((p) => text.slice(p, p + 4)),
    ['"a":', ',"b"', ',"f"', ',"g"', ',"h"', '}'],
  );
  assert.deepEqual(fieldStarts('{"only":1}', [1], 1), [9], 'the end of a one-field object');
});

test('every collection: a detail made of list runs and detail-only text == the whole detail shape, on two days', async () => {
  const linked = await loadLinked(generateRecords({ scale: 40 }));
  for (const def of RESOURCE_LIST) {
    assert.ok(detailPlan(def), `${def.name}: a plan (its late field, if shown, lies in a list run)`);
    const records = linked[def.name];
    const ix = buildIndex(def, records);
    const shapes = compileShapes(def);
    for (const today of [20260115, 20360601]) {
      records.forEach((r, id) => {
        const [head, tail] = shapes(r).detail;
        const late = tail === null ? '' : String(def.late!.value(def.late!.key(r) ?? NaN, today) ?? 'null');
        const lateText = tail === null ? '' : def.late!.key(r) === null ? 'null' : late;
        const want = `{"success":true,"version":"v1","resource":"${def.name}","data":${head}${lateText}${tail ?? ''}}`;
        assert.equal(detailBody(ix, id, today).toString(), want, `${def.name} ${id} on ${today}`);
      });
    }
  }
});
