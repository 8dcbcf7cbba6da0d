// UnitTextsBuilder keeps a build's texts as units with offsets (issue 19): each text's units read back
// as it was added, across chunks, a text longer than a chunk, and a wide unit met after many narrow
// ones; idRanks over them gives the ranks it gives over the strings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Scratch } from '../../src/data/scratch.ts';
import { idRanks } from '../../src/data/sort-order.ts';
import { textOf, unitTextsOf, UnitTextsBuilder, type UnitTexts } from '../../src/data/unit-texts.ts';

function textAt(t: UnitTexts, i: number): string {
  let s = '';
  for (let p = t.starts[i]!; p < t.starts[i + 1]!; p++) s += String.fromCharCode(t.units[p]!);
  return s;
}

function built(texts: readonly string[], scratch: Scratch | null): UnitTexts {
  const b = new UnitTextsBuilder(new Scratch());
  for (const t of texts) b.add(t);
  assert.equal(b.length, texts.length);
  return b.finish(scratch);
}

test('UnitTextsBuilder: texts over several chunks, one longer than a chunk, then a wide unit -> each text as added', () => {
  const texts: string[] = [];
  for (let i = 0; i < 30000; i++) texts.push(`${(i * 7919).toString(16).padStart(24, 'a')}`);
  texts.push('x'.repeat(70000), '', 'inès');
  const narrow = built(texts, null);
  assert.ok(narrow.units instanceof Uint8Array);
  assert.equal(narrow.units.length, 30000 * 24 + 70000 + 4);
  for (const i of [0, 1, 2730, 2731, 29999, 30000, 30001, 30002]) assert.equal(textAt(narrow, i), texts[i]);
  texts.push('zoë 北京', 'abc');
  for (const scratch of [null, new Scratch()]) {
    const wide = built(texts, scratch);
    assert.ok(wide.units instanceof Uint16Array);
    assert.equal(wide.starts.length, texts.length + 1);
    for (let i = 0; i < texts.length; i++) if (i % 997 === 0 || i >= 29990) assert.equal(textAt(wide, i), texts[i]);
  }
});

test('idRanks over units -> the ranks over the strings', () => {
  const ids: string[] = [];
  for (let i = 0; i < 20000; i++) ids.push(((i * 2654435761) >>> 0).toString(16).padStart(24, '5c2e975d'));
  ids.push('5c2e975d~', '5c2e975d', 'é', '北', '5c2e975d\u0101x');
  const units = built(ids, new Scratch());
  const sorted = [...ids].sort((a, b) => (a < b ? -1 : 1));
  const rank = new Map(sorted.map((s, i) => [s, i]));
  assert.deepEqual([...idRanks(units)], ids.map((s) => rank.get(s)!));
  assert.deepEqual([...idRanks(units)], [...idRanks(ids)]);
});

test('textOf -> each text as added, one byte a unit or two (a lone surrogate kept as it is)', () => {
  const narrow = ['', 'inès', 'a'.repeat(5000)];
  const wide = [...narrow, 'zoë 北京', '\ud83d', 'a\u{1F600}b'];
  for (const list of [narrow, wide]) {
    const t = unitTextsOf(list, new Scratch());
    assert.equal(t.units instanceof Uint8Array, list === narrow);
    list.forEach((s, i) => assert.equal(textOf(t, i), s));
  }
});
