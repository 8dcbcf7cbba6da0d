// src/data/search-text.ts: a search text read from its list item (its value's bytes lower-cased)
// answers every search as the text kept apart did; only plain ASCII without escapes is read so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildIndex, searchTextIncludes, searchTextOf } from '../../src/data/indexes.ts';
import { fold } from '../../src/data/fold.ts';
import { loadLinked } from '../../src/data/load.ts';
import { searchMatches } from '../../src/data/search-index.ts';
import { derivable, derivedIncludes, derivedIncludesAt, searchField } from '../../src/data/search-text.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';

const at = (json: string) => Buffer.from(json, 'utf8');

test('derivable: a JSON string -> true only when its bytes lower-cased are the folded text, with no escape', () => {
  const cases: [string, string, boolean][] = [
    ['"Red Carpet"', 'red carpet', true], ['"red carpet"', 'red carpet', true], ['""', '', true],
    ['"Red Carpet"', 'red carpe', false], ['"Red Carpet"', 'red carpets', false], ['"Beyonc\u00e9"', 'beyonce', false],
    ['"say \\"hi\\""', 'say "hi"', false], ['"a\\\\b"', 'a\\b', false], ['x"ab"', 'ab', false],
  ];
  for (const [json, folded, want] of cases) assert.equal(derivable(at(json), 0, folded), want, `${json} vs ${folded}`);
});

test('derivedIncludes / derivedIncludesAt: as String includes / startsWith on the lower-cased text, never past its quote', () => {
  const bytes = at('"Anna And HANNAH","next":"zz"');
  const text = 'anna and hannah';
  for (const q of ['anna', 'and', 'hannah', 'h', 'a', 'ah', 'x', 'hannah"', 'h"', '",', 'nn', '']) {
    assert.equal(derivedIncludes(bytes, 1, q), text.includes(q), JSON.stringify(q));
    for (let start = -1; start <= text.length + 2; start++) assert.equal(derivedIncludesAt(bytes, 1, q, start), start >= 0 && start + q.length <= text.length && text.startsWith(q, start), `${JSON.stringify(q)} at ${start}`);
  }
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
    assert.ok(derived > records.length / 2 && derived < records.length, `${def.name}: ${derived} of ${records.length} derived`);
    const qs = new Set(['anna', 'nana', 'anan', 'hannah', 'ananas', 'say "hi', '"hi"', 'ck\\sl', 'yonce', 'an', 'zqx']);
    for (const t of texts.slice(0, 40)) for (const [i, n] of [[0, 4], [2, 5], [5, 9], [1, 12]] as const) qs.add(t.slice(i, i + n));
    for (const q of qs) {
      if (q.length === 0) continue;
      const want = texts.flatMap((t, id) => (t.includes(q) ? [id] : []));
      assert.deepEqual([...searchMatches(ix.search, q, searchTextIncludes, ix)], want, `${def.name}: ${JSON.stringify(q)}`);
    }
  }
});
