// The search index answers exactly what `includes` answers, on the texts where trigram positions
// cannot decide alone: a gram twice in one text, grams past position 254, repeated grams in the query.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AMBIGUOUS, buildSearchIndex, groupCount, groupsConsistent, groupTexts, gramsConsistent, searchBits, searchMatches } from '../../src/data/search-index.ts';

// What src/data/indexes.ts searchTextIncludes answers: the query at `start`, or anywhere for -1.
const includes = (texts: readonly string[], id: number, q: string, start: number) =>
  start === -1 ? texts[id]!.includes(q) : start >= 0 && texts[id]!.startsWith(q, start);
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

const expected = (texts: readonly string[], q: string) => texts.flatMap((t, id) => (t.includes(q) ? [id] : []));

test('searchMatches -> the ids whose text includes the query, ascending', () => {
  const ix = buildSearchIndex(TEXTS);
  for (const q of queries()) {
    const expected = TEXTS.flatMap((t, id) => (t.includes(q) ? [id] : []));
    assert.deepEqual([...searchMatches(ix, q, includes, TEXTS)], expected, JSON.stringify(q));
  }
});

test('grams of ASCII units (a slot straight from the units) and of others (hashed), mixed in one text -> exact searches', () => {
  // 0x7f is the last unit of the direct path, 0x80 the first hashed; a surrogate pair is two hashed units.
  const texts = ['née naïve', 'nee naive', 'a\u007fb\u0080c', '\u007f\u007f\u007f', 'emoji \ud83d\ude00 ok', 'çãçã', 'ab\u0080ab', 'zzz', 'ééé'];
  const ix = buildSearchIndex(texts);
  for (const g of [ix.unigrams, ix.bigrams, ix.trigrams]) assert.deepEqual([...g.keys], [...new Set(g.keys)].sort((a, b) => a - b), 'keys distinct and ascending');
  const qs = new Set<string>();
  for (const t of texts) for (let i = 0; i < t.length; i++) for (let n = 1; n <= 6; n++) qs.add(t.slice(i, i + n));
  for (const q of qs) assert.deepEqual([...searchMatches(ix, q, includes, texts)], expected(texts, q), JSON.stringify(q));
});

test('trigram positions: where the gram is, or AMBIGUOUS when it is twice in the text or past 254', () => {
  const ix = buildSearchIndex(['xabcyabc', 'zzabc', `${'q'.repeat(260)}abc`]);
  const g = ix.trigrams;
  const key = (t: string) => (t.charCodeAt(0) * 65536 + t.charCodeAt(1)) * 65536 + t.charCodeAt(2);
  const slot = [...g.keys].indexOf(key('abc'));
  assert.ok(slot !== -1);
  assert.deepEqual([...g.lows.subarray(g.offsets[slot]!, g.offsets[slot + 1]!)], [0, 1, 2]);
  assert.deepEqual([...g.at.subarray(g.offsets[slot]!, g.offsets[slot + 1]!)], [AMBIGUOUS, 2, AMBIGUOUS]);
  assert.deepEqual([...g.keys], [...g.keys].sort((a, b) => a - b), 'keys ascend');
  assert.equal(ix.unigrams.at.length, 0);
});

test('a text is read only where a trigram says the query starts, or scanned when no trigram is sure', () => {
  // 'dress': "dre" once in each text (sure), "ess" twice in the first two (AMBIGUOUS), "dre" twice in the third.
  const texts = ['vessa slip dress', 'dress of vessa', 'dress dress', 'a dress'];
  const asked: [number, number][] = [];
  const confirm = (t: readonly string[], id: number, q: string, start: number) => {
    asked.push([id, start]);
    return includes(t, id, q, start);
  };
  assert.deepEqual([...searchMatches(buildSearchIndex(texts), 'dress', confirm, texts)], [0, 1, 2, 3]);
  // 3: every trigram sure and where the start says: not read. 2: no sure trigram: scanned.
  assert.deepEqual(asked, [[0, 11], [1, 0], [2, -1]]);
});

test('more matches than the array every query reuses first holds -> each one, and the next query answers alike', () => {
  const texts = Array.from({ length: 5000 }, (_, i) => (i % 3 === 0 ? `hannah ${i}` : `anna ${i}`));
  const ix = buildSearchIndex(texts);
  for (const q of ['anna', 'hannah', 'anna 1', 'nna 4']) {
    const expected = texts.flatMap((t, id) => (t.includes(q) ? [id] : []));
    assert.deepEqual([...searchMatches(ix, q, includes, texts)], expected, q);
  }
});

test('a 1- or 2-unit gram in 1/32 of the texts or more -> a bitmap with its count; rarer ones -> ids', () => {
  const texts = Array.from({ length: 64 }, (_, i) => (i === 5 ? 'ax' : i % 2 === 0 ? 'ab' : 'ba'));
  const ix = buildSearchIndex(texts);
  const bitsOf = (q: string) => {
    const got = searchBits(ix, q);
    return got && { total: got.total, ids: [...Array(64).keys()].filter((id) => ((got.bits[id >>> 5]! >>> (id & 31)) & 1) === 1) };
  };
  for (const q of ['a', 'b', 'ab', 'ba']) assert.deepEqual(bitsOf(q), { total: expected(texts, q).length, ids: expected(texts, q) }, q);
  for (const q of ['x', 'ax', 'abc', 'zz']) assert.equal(searchBits(ix, q), null, q);
  assert.deepEqual([...searchMatches(ix, 'x', includes, texts)], [5]);
  assert.deepEqual([...searchMatches(ix, 'ab', includes, texts)], expected(texts, 'ab'), 'a bitmap gram through searchMatches: its ids');
  const g = ix.unigrams;
  const slot = [...g.keys].indexOf('a'.charCodeAt(0));
  assert.ok(g.bitsAt[slot]! >= 0 && g.offsets[slot] === g.offsets[slot + 1], 'no ids kept beside the bitmap');
  assert.equal(g.lows.length, 1, "only 'x' has ids");
  for (const size of ['unigrams', 'bigrams', 'trigrams'] as const) assert.ok(gramsConsistent(ix[size], texts.length, size === 'trigrams'), size);
});

test('gramsConsistent -> false for grams read back whose arrays do not fit together', () => {
  const texts = Array.from({ length: 64 }, (_, i) => (i === 5 ? 'axe' : `ab${i}`));
  const ix = buildSearchIndex(texts);
  const g = ix.bigrams;
  assert.ok(gramsConsistent(g, 64, false));
  const bad = [
    { ...g, bits: g.bits.subarray(1) }, // a bitmap cut short
    { ...g, bitsAt: g.bitsAt.map((b) => (b === 0 ? 1 : b === 1 ? 0 : b)) }, // bitmaps named out of order
    { ...g, bitsAt: g.bitsAt.map(() => -1) }, // bitmaps no slot names
    { ...g, offsets: g.offsets.map((o, i) => (i === g.offsets.length - 1 ? o - 1 : o)) }, // ids past the last offset
    { ...g, at: new Uint8Array(g.lows.length) }, // positions on a bigram
    { ...g, blocks: g.blocks.map((b, i) => (i === 3 ? b + 1 : b)) }, // a slot's blocks not from its first entry
    { ...g, blocks: g.blocks.subarray(1) }, // blocks for fewer slots
  ];
  for (const [i, b] of bad.entries()) assert.equal(gramsConsistent(b, 64, false), false, `case ${i}`);
  assert.equal(gramsConsistent(g, 65, false), false, 'bitmaps of 2 words read for 65 records (3 words)');
});

test('more than 65,536 records -> ids across blocks of their high bits, each search exact', () => {
  const words = ['anna', 'hannah', 'banana', 'joanna', 'nana', 'ann', 'savannah', 'dress', 'vessa'];
  const texts = Array.from({ length: 140_000 }, (_, i) =>
    i % 9973 === 0
      ? `${'x'.repeat(300)} rare anna`
      : `${words[i % 9]!} ${words[(i >>> 4) % 9]!}${i % 7 === 0 ? ` ${words[(i >>> 9) % 9]!}` : ''}${i < 500 || i > 139_000 ? ' zulu' : ''}`,
  ); // "zulu": ids in the first and third blocks only, none in the second
  const ix = buildSearchIndex(texts);
  for (const size of ['unigrams', 'bigrams', 'trigrams'] as const) assert.ok(gramsConsistent(ix[size], size === 'trigrams' ? groupCount(ix) : texts.length, size === 'trigrams'), size);
  for (const q of ['anna', 'nna h', 'banana nana', 'rare anna', 'a ann', 'dress vessa', 'ssa dr', 'savannah joanna', 'nah', 'x', 'e ', 'ess', 'zulu', 'a zulu', 'anna zulu', 'nna zul', 'zu']) {
    assert.deepEqual([...searchMatches(ix, q, includes, texts)], expected(texts, q), q);
  }
});

test('full names whose postings hold the same records: the one that rejects is asked first, each search exact', () => {
  // A surname's trigrams hold the same records (ordered by size, they were all asked before the first
  // name's, which rejects): the posting that rejects a candidate is moved to be asked first. Ids in
  // two blocks of 65,536; the rarest trigram of a query at any unit leads.
  const first = ['aanya', 'zoe', 'anna', 'hannah', 'joanna', 'savannah', 'ana', 'nana'];
  const last = ['bhattacharya', 'vasseur', 'annan', 'nair', 'chopra-nair', 'anand', 'banana', 'ssa'];
  const texts = Array.from({ length: 70_000 }, (_, i) => `${first[(i * 7) % 8]!} ${last[(i >>> 3) % 8]!}${i % 11 === 0 ? ` ${first[i % 8]!}` : ''}`);
  const ix = buildSearchIndex(texts);
  const qs = new Set<string>();
  for (const f of first) for (const l of last) qs.add(`${f} ${l}`).add(`${f.slice(1)} ${l.slice(0, 4)}`).add(`${l} ${f}`);
  for (const q of qs) assert.deepEqual([...searchMatches(ix, q, includes, texts)], expected(texts, q), q);
});

test('records that share a text: one group, its trigrams once; the records of the groups found, ascending', () => {
  const texts = ['anna nair', 'zoe vasseur', 'anna nair', 'hannah nair', 'zoe vasseur', 'anna nair', 'x', 'x'];
  const { distinct, groups } = groupTexts(texts);
  assert.deepEqual(distinct, ['anna nair', 'zoe vasseur', 'hannah nair', 'x']);
  assert.deepEqual([...groups.starts], [0, 3, 5, 6, 8]);
  assert.deepEqual([...groups.ids], [0, 2, 5, 1, 4, 3, 6, 7]);
  assert.ok(groupsConsistent(groups, texts.length));
  const ix = buildSearchIndex(texts);
  assert.equal(groupCount(ix), 4);
  // One group found, several (their records interleaved), none; a text read: its group's first record.
  const asked: number[] = [];
  const confirm = (t: readonly string[], id: number, q: string, start: number) => {
    asked.push(id);
    return includes(t, id, q, start);
  };
  for (const q of ['anna', 'nair', 'zoe vasseur', 'nna nai', 'hannah', 'vass', 'a nair', 'zzz']) assert.deepEqual([...searchMatches(ix, q, confirm, texts)], expected(texts, q), q);
  assert.deepEqual([...searchMatches(ix, 'anna nair anna', confirm, texts)], []);
  assert.ok(asked.every((id) => [0, 1, 3, 6].includes(id)), `texts read: ${asked}`);
  // No text repeats: no groups, group g is record g.
  const own = groupTexts(['abc', 'abd']);
  assert.equal(own.groups.starts.length, 0);
  assert.equal(groupCount(buildSearchIndex(['abc', 'abd'])), 2);
  // Short texts repeated: fewer trigram entries saved than the groups' arrays cost, so none.
  assert.equal(groupTexts(['ab', 'ab', 'abc', 'abc']).groups.starts.length, 0);
});

test('groupTexts: two texts of one length and one hash (FNV-1a) -> two groups, told apart by their units', () => {
  // 'yaczfaa' and 'glbppaa' share their 32-bit FNV-1a hash: the texts are found equal by units, not by hash.
  const texts = ['yaczfaa', 'glbppaa', 'yaczfaa', 'glbppaa', 'yaczfaa'];
  const { distinct, groups } = groupTexts(texts);
  assert.deepEqual(distinct, ['yaczfaa', 'glbppaa']);
  assert.deepEqual([...groups.starts], [0, 3, 5]);
  assert.deepEqual([...groups.ids], [0, 2, 4, 1, 3]);
  assert.deepEqual([...searchMatches(buildSearchIndex(texts), 'glbp', () => true, null)], [1, 3]);
});

test('groupsConsistent -> false for groups read back that do not fit together', () => {
  const { groups } = groupTexts(['anna nair', 'zoe vasseur', 'anna nair', 'zoe vasseur', 'anna nair', 'hannah nair']);
  assert.ok(groupsConsistent(groups, 6));
  assert.ok(groupsConsistent({ starts: new Int32Array(0), ids: new Int32Array(0) }, 6), 'no groups');
  const i32 = (a: number[]) => Int32Array.from(a);
  const bad = [
    { starts: groups.starts, ids: i32([0, 2, 4, 1, 3, 3]) }, // a record twice, one in none
    { starts: groups.starts, ids: i32([2, 0, 4, 1, 3, 5]) }, // a group's ids not ascending
    { starts: i32([0, 3, 3, 6]), ids: groups.ids }, // an empty group
    { starts: i32([0, 2, 3, 6]), ids: i32([1, 3, 0, 2, 4, 5]) }, // groups not in the order of their first records
    { starts: groups.starts, ids: i32([0, 2, 4, 1, 3, 6]) }, // a record past the last
    { starts: groups.starts.subarray(1), ids: groups.ids }, // starts not from 0
    { starts: new Int32Array(0), ids: groups.ids }, // ids without starts
  ];
  for (const [i, b] of bad.entries()) assert.equal(groupsConsistent(b, 6), false, `case ${i}`);
  assert.equal(groupsConsistent(groups, 7), false, 'for 7 records');
});

test('more than 65,536 groups -> group numbers across blocks of their high bits, each search exact', () => {
  const words = ['anna', 'hannah', 'banana', 'joanna', 'nana', 'ann', 'savannah', 'dress', 'vessa'];
  // 70,000 texts, each twice (records 2k and 2k + 1), and the first word's text every 1,000th record once more.
  const texts = Array.from({ length: 140_000 }, (_, i) => (i % 1000 === 999 ? 'anna n0' : `${words[(i >>> 1) % 9]!} n${i >>> 1}`));
  const ix = buildSearchIndex(texts);
  assert.ok(groupCount(ix) > 65_536 && groupCount(ix) < texts.length);
  assert.ok(groupsConsistent(ix.groups, texts.length));
  assert.ok(gramsConsistent(ix.trigrams, groupCount(ix), true));
  for (const q of ['anna n0', 'anna n', 'n6553', 'n69999', 'a n7', 'savannah n6', 'ss', 'dress n1', 'n1000', 'vessa n69', 'n65536', ' n0']) {
    assert.deepEqual([...searchMatches(ix, q, includes, texts)], expected(texts, q), q);
  }
});
