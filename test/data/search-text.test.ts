// src/data/search-text.ts: a search text decoded from its list item where no search reads it but a
// long query's answers every search as the text kept apart did.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildIndex, searchTextIncludes, searchTextOf } from '../../src/data/indexes.ts';
import { fold } from '../../src/data/fold.ts';
import { loadLinked } from '../../src/data/load.ts';
import { searchMatches } from '../../src/data/search-index.ts';
import { decidedByGrams, derivedText, searchField } from '../../src/data/search-text.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';

test('decidedByGrams: a text whose trigrams each stand once, before position 255 -> true', () => {
  const cases: [string, boolean][] = [
    ['red carpet', true], ['', true], ['ab', true], ['anna and hannah', false], ['banana', false], ['abcab', true], ['abcabc', false],
    ['x'.repeat(2), true], ['xxx', true], ['xxxx', false], [Array.from({ length: 90 }, (_, i) => String.fromCharCode(0x100 + i)).join('').repeat(1), true],
  ];
  for (const [text, want] of cases) assert.equal(decidedByGrams(text), want, JSON.stringify(text));
  // A trigram at position 255 or later is AMBIGUOUS in the postings: such a text is read to confirm.
  const distinct = Array.from({ length: 300 }, (_, i) => String.fromCharCode(0x100 + i)).join('');
  assert.equal(decidedByGrams(distinct.slice(0, 257)), true);
  assert.equal(decidedByGrams(distinct.slice(0, 258)), false);
});

test('derivedText: the field read from the item\'s bytes answers what a parse of the item answers (escapes, a nested member of the same name, no string)', () => {
  const def = RESOURCES.outfits;
  const from = { field: searchField(def), derived: new Uint32Array(1) };
  const items: [unknown, string][] = [
    [{ slug: 'a', title: 'Red Carpet Look' }, 'red carpet look'],
    [{ slug: 'a', title: 'Beyoncé in Ünïcode' }, fold('Beyoncé in Ünïcode')],
    [{ slug: 'a', title: 'Say "Hi" \\ back' }, fold('Say "Hi" \\ back')],
    // The same member name inside a nested object, before the top-level one: not taken.
    [{ celebrity: { title: 'Inner', name: '{[' }, note: 'a "title": "x" }', title: 'Outer' }, 'outer'],
    [{ slug: 'a', title: null }, ''],
    [{ slug: 'a', title: 7 }, ''],
    [{ slug: 'a' }, ''],
  ];
  for (const [item, want] of items) assert.equal(derivedText(def, from, Buffer.from(JSON.stringify(item))), want, JSON.stringify(item));
});

test('searchField: the list field a definition searches (title or name), -1 for any other text', () => {
  assert.equal(searchField(RESOURCES.celebrities), 1);
  assert.equal(searchField(RESOURCES.outfits), 1);
  assert.equal(searchField({ ...RESOURCES.outfits, searchText: (r) => `${r.title as string} ${r.brand as string}` }), -1);
  assert.equal(searchField({ ...RESOURCES.outfits, searchText: (r) => (r.title as string).slice(1) }), -1);
});

test('every collection: a search answers exactly what includes() over the folded texts answers, texts read from the list items or kept', async () => {
  const sources = generateRecords({ scale: 30 }) as Record<string, Record<string, unknown>[]>;
  // Texts the trigram positions cannot decide alone (a gram twice), upper case, escapes, accents.
  const odd = ['Anna and HANNAH Banana', 'Say "Hi" to Nana', 'Back\\slash and Nana', 'Beyoncé and Anna', 'ANANAS ANANAS'];
  for (const def of RESOURCE_LIST) {
    const field = def.listFields[searchField(def)] as string;
    // A source field (a review's movieTitle is its movie's title: the movies get them).
    if (field in def.source.properties) sources[def.name]!.slice(0, odd.length).forEach((r, i) => (r[field] = odd[i]));
  }
  const linked = await loadLinked(sources);
  for (const def of RESOURCE_LIST) {
    const records = linked[def.name];
    const ix = buildIndex(def, records);
    const texts = records.map((r) => fold(def.searchText(r)));
    assert.ok(ix.searchFrom, `${def.name}: texts read from the list items`);
    let derived = 0;
    texts.forEach((t, id) => {
      assert.equal(searchTextOf(ix, id), t, `${def.name} ${id}`);
      if ((ix.searchFrom!.derived[id >>> 5]! >>> (id & 31)) & 1) derived++;
    });
    assert.ok(derived > records.length / 3 && derived < records.length, `${def.name}: ${derived} of ${records.length} derived`);
    const qs = new Set(['anna', 'nana', 'anan', 'hannah', 'ananas', 'say "hi', '"hi"', 'ck\\sl', 'yonce', 'an', 'zqx']);
    for (const t of texts.slice(0, 40)) for (const [i, n] of [[0, 4], [2, 5], [5, 9], [1, 12]] as const) qs.add(t.slice(i, i + n));
    // The confirmation a long query would make of a derived text (its postings rule any such text out
    // first: no text that short holds 128 of a query's trigrams): as includes() and startsWith().
    texts.forEach((t, id) => {
      if (!((ix.searchFrom!.derived[id >>> 5]! >>> (id & 31)) & 1) || id % 7 !== 0) return;
      for (const q of [t.slice(1, 6), t.slice(-4), `${t.slice(0, 3)}zq`, t.slice(2, 3)]) {
        assert.equal(searchTextIncludes(ix, id, q, -1), t.includes(q), `${def.name} ${id} ${JSON.stringify(q)}`);
        for (const start of [-2, 0, 1, 2, t.length - q.length, t.length]) assert.equal(searchTextIncludes(ix, id, q, start), start >= 0 && start + q.length <= t.length && t.startsWith(q, start), `${def.name} ${id} ${JSON.stringify(q)} at ${start}`);
      }
    });
    for (const q of qs) {
      if (q.length === 0) continue;
      const want = texts.flatMap((t, id) => (t.includes(q) ? [id] : []));
      assert.deepEqual([...searchMatches(ix.search, q, searchTextIncludes, ix)], want, `${def.name}: ${JSON.stringify(q)}`);
    }
  }
});
