// src/data/detail-layout.ts: a detail assembled from its list item's runs and its detail-only text is
// byte for byte the body the detail shape gives, and a list item joined from runs serialized apart
// is the list shape, on any serving day, with strings that hold commas, braces, quotes and escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detailPlan } from '../../src/data/detail-layout.ts';
import { buildIndex, detailBody, listItem } from '../../src/data/indexes.ts';
import { compileShapes } from '../../src/data/shape.ts';
import { loadLinked } from '../../src/data/load.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

test('every collection: a detail made of list runs and detail-only text == the whole detail shape, on two days', async () => {
  const sources = generateRecords({ scale: 40 }) as Record<string, Record<string, unknown>[]>;
  // Free text fields of the first records hold what a scan of the text would trip on.
  for (const def of RESOURCE_LIST) {
    for (const r of sources[def.name]!.slice(0, 3)) {
      for (const [name, schema] of Object.entries(def.source.properties)) {
        if (schema.type === 'string' && !schema.format && !schema.ref && !schema.enum && typeof r[name] === 'string') r[name] += ' "a, {b}" [c] \\ é 😀';
      }
    }
  }
  const linked = await loadLinked(sources);
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
        // The list item, joined from runs serialized apart, == the whole list shape.
        const [listHead, listTail] = shapes(r).list;
        assert.equal(listItem(ix, id, today).toString(), `${listHead}${listTail === null ? '' : lateText}${listTail ?? ''}`, `${def.name} ${id} list on ${today}`);
      });
    }
  }
});
