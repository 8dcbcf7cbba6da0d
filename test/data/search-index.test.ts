// The search index answers exactly what `includes` answers, on the texts where trigram positions
// cannot decide alone: a gram twice in one text, grams past position 254, repeated grams in the query.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AMBIGUOUS, buildSearchIndex, searchMatches } from '../../src/data/search-index.ts';

const includes = (texts: readonly string[], id: number, q: string) => texts[id]!.includes(q);
const long = `${'x'.repeat(300)}needle in the hay`;
const TEXTS = [
  'anna', 'hannah', 'joanna nanna', 'banana', 'ananas', 'anan', 'nanana', 'ann and nna', 'annxnna', 'susanna',
  'abcabc', 'abcxabc', 'cabca', long, `needle ${'y'.repeat(260)}`, '', 'a', 'née', 'x',
];

/** Queries -> what `includes` says, for every case above and every slice of every text. */
function queries(): string[] {
  const qs = new Set(['anna', 'nna', 'ann', 'anan', 'anana', 'nanana', 'banana', 'abca', 'bcab', 'abcabc', 'cabc', 'needle', 'needle in', 'hay', 'zqxj', 'annx', 'a', 'an', 'ee']);
  for (const t of TEXTS) for (let i = 0; i < Math.min(t.length, 40); i++) for (const n of [1, 2, 3, 4, 5, 7, 11]) qs.add(t.slice(i, i + n));
  qs.add(long.slice(280));
  qs.add(long.slice(250, 270));
  return [...qs].filter((q) => q.length > 0);
}

test('searchMatches -> the ids whose text includes the query, ascending', () => {
  const ix = buildSearchIndex(TEXTS);
  for (const q of queries()) {
    const expected = TEXTS.flatMap((t, id) => (t.includes(q) ? [id] : []));
    assert.deepEqual([...searchMatches(ix, q, includes, TEXTS)], expected, JSON.stringify(q));
  }
});

test('trigram positions: where the gram is, or AMBIGUOUS when it is twice in the text or past 254', () => {
  const ix = buildSearchIndex(['xabcyabc', 'zzabc', `${'q'.repeat(260)}abc`]);
  const g = ix.trigrams;
  const key = (t: string) => (t.charCodeAt(0) * 65536 + t.charCodeAt(1)) * 65536 + t.charCodeAt(2);
  const slot = [...g.keys].indexOf(key('abc'));
  assert.ok(slot !== -1);
  assert.deepEqual([...g.ids.subarray(g.offsets[slot]!, g.offsets[slot + 1]!)], [0, 1, 2]);
  assert.deepEqual([...g.at.subarray(g.offsets[slot]!, g.offsets[slot + 1]!)], [AMBIGUOUS, 2, AMBIGUOUS]);
  assert.deepEqual([...g.keys], [...g.keys].sort((a, b) => a - b), 'keys ascend');
  assert.equal(ix.unigrams.at.length, 0);
});
