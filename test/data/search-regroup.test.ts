// A search index over groups of equal texts, after an edit of a few texts, made from the index before
// (search-regroup.ts) is, array for array, the one buildSearchIndex makes of the new texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSearchIndex, type SearchIndex, type TextAt, type TextChange } from '../../src/data/search-index.ts';
import { regroupedIndexRenumbered, regroupedIndexWith } from '../../src/data/search-regroup.ts';

/** A deterministic generator (the same texts each run). */
const random = (seed: number) => () => ((seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5), (seed >>> 0) / 4294967296);

/** `texts` with `edits` made ([id, new text]; ids past the end: added), cut to `size`; the index made from the old one, and the build's. */
function step(texts: string[], edits: readonly (readonly [number, string])[], size = texts.length) {
  const now = texts.slice(0, size);
  for (const [id, t] of edits) now[id] = t;
  const changes: TextChange[] = [];
  for (let id = 0; id < Math.max(texts.length, now.length); id++) {
    const was = id < texts.length ? texts[id]! : '';
    const is = id < now.length ? now[id]! : '';
    if (was !== is || id >= texts.length || id >= now.length) changes.push({ id, was, now: is });
  }
  return { now, changes };
}

describe('a grouped search index with a few texts changed (search-regroup.ts)', () => {
  it('is the index a build of the new texts makes: groups left, joined, emptied, moved, new, texts under 3 units', () => {
    const next = random(23);
    const names = ['Maria Garcia Lopez', 'John Smith', 'Ana Silva', 'Mar', 'Li', 'Maria Garcia', 'Jean Dupont', 'Marco Rossi', 'aaaaaa', 'Maria Garcia Lopes'];
    let texts = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? `${names[i % names.length]!} ${i}` : names[Math.floor(next() * names.length)]!));
    let ix = buildSearchIndex(texts);
    assert.ok(ix.groups.starts.length > 0, 'grouped');
    const firstOf = (t: string) => texts.indexOf(t);
    const rounds: (readonly [number, string])[][] = [
      // The first record of a group leaves it for another (the group moves: its first is later now).
      [[firstOf('John Smith'), 'Ana Silva']],
      // A record joins a group whose first record is later (the group moves earlier), one makes a text no group had.
      [[0, 'Jean Dupont'], [17, 'A Brand New Name'], [2900, 'A Brand New Name']],
      // A group's only record leaves it (the group goes); a text of 2 units; a text repeating a trigram.
      [[7, 'Marco Rossi'], [14, 'Li'], [21, 'aaaaaa aaa'], [22, 'Jo']],
      // Many at once, and back.
      Array.from({ length: 40 }, (_, k) => [k * 71, names[(k * 3) % names.length]!] as const),
      Array.from({ length: 40 }, (_, k) => [k * 71 + 1, `${names[k % names.length]!} the ${k % 4}`] as const),
    ];
    for (const round of rounds) {
      const { now, changes } = step(texts, round);
      const got = regroupedIndexWith(ix, changes, now.length, (id) => texts[id]!);
      const want = buildSearchIndex(now);
      assert.ok(want.groups.starts.length > 0);
      assert.deepEqual(got, want);
      ix = got!;
      texts = now;
    }
  });

  it('with texts added at the end and removed from it, and past 65,536 groups', () => {
    // 70,000 texts of 40 units or more, each twice: grouped, and group ids past one block.
    const base = Array.from({ length: 70_000 }, (_, i) => `a long enough repeated title number ${i.toString(36)}`);
    let texts = base.flatMap((t) => [t, t]);
    let ix = buildSearchIndex(texts);
    assert.ok(ix.groups.starts.length - 1 > 65_536);
    const rounds: [(readonly [number, string])[], number][] = [
      // Added at the end: one joins the first group, one a group past 65,536, one new.
      [[[texts.length, base[0]!], [texts.length + 1, base[69_000]!], [texts.length + 2, 'an added title of its own']], texts.length + 3],
      // A record early on takes a text only the last records had (its group moves to the front).
      [[[3, 'an added title of its own'], [5, base[68_000]!]], texts.length + 3],
      // Removed from the end again (the added group keeps record 3), and a group emptied in block 1.
      [[[139_000, 'x'], [139_001, 'x']], texts.length],
    ];
    for (const [edits, size] of rounds) {
      const { now, changes } = step(texts, edits, size);
      const got = regroupedIndexWith(ix, changes, now.length, (id) => texts[id]!);
      assert.deepEqual(got, buildSearchIndex(now));
      ix = got!;
      texts = now;
    }
  });

  it('is null where the new texts would not be grouped (the caller builds from every text), or the old ones were not', () => {
    // Barely grouped: a few long repeats among distinct texts; making them distinct ends the grouping.
    const texts = Array.from({ length: 400 }, (_, i) => (i < 40 ? 'the one repeated long title of this set' : `t${i}`));
    const ix = buildSearchIndex(texts);
    assert.ok(ix.groups.starts.length > 0);
    const { now, changes } = step(texts, Array.from({ length: 39 }, (_, k) => [k, `distinct ${k}`] as const));
    assert.equal(buildSearchIndex(now).groups.starts.length, 0);
    assert.equal(regroupedIndexWith(ix, changes, now.length, (id) => texts[id]!), null);
    const flat = buildSearchIndex(now);
    assert.equal(regroupedIndexWith(flat, [{ id: 0, was: now[0]!, now: 'x' }], now.length, (id) => now[id]!), null);
  });

  it('with records inserted and removed in the middle (every later one numbered anew): groups joined, left, emptied, moved, new', () => {
    const next = random(29);
    const names = ['Maria Garcia Lopez', 'John Smith', 'Ana Silva', 'Mar', 'Li', 'Jean Dupont', 'Marco Rossi', 'aaaaaa'];
    let texts = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? `${names[i % names.length]!} ${i}` : names[Math.floor(next() * names.length)]!));
    let ix = buildSearchIndex(texts);
    assert.ok(ix.groups.starts.length > 0, 'grouped');
    const firstOf = (t: string) => texts.indexOf(t);
    // Each round: [at, removed count, inserted texts] applied in order (numbers of the texts before the round).
    const rounds: () => [number, number, string[]][][] = () => [
      // Before a group's first record, a record of that group (it moves earlier); a text no group had, twice.
      [[3, 0, ['Marco Rossi']], [100, 0, ['A Brand New Name', 'A Brand New Name']]],
      // A group's first record removed (it moves later); a group's only record removed (it goes).
      [[firstOf('Jean Dupont'), 1, []], [firstOf('aaaaaa 7'), 1, []]],
      // A text of 2 units, one repeating a trigram, at the very start and the very end; many removed at once.
      [[0, 0, ['Li', 'aaaaaa aaa']], [1000, 40, []], [texts.length - 1, 0, ['Ana Silva']]],
      // Removed and inserted in one place: the records of the new group gone again.
      [[firstOf('A Brand New Name'), 1, ['Mar']], [firstOf('A Brand New Name') + 60, 0, []]],
    ];
    for (let r = 0; r < 4; r++) {
      const round = rounds()[r]!.filter(([at]) => at >= 0).sort((a, b) => a[0] - b[0]);
      const { now, got } = renumberedStep(ix, texts, round);
      const want = buildSearchIndex(now);
      assert.ok(want.groups.starts.length > 0);
      assert.deepEqual(got, want, `round ${r}`);
      ix = got!;
      texts = now;
    }
  });

  it('with records numbered anew past 65,536 groups, and null where the new texts would not be grouped', () => {
    const base = Array.from({ length: 70_000 }, (_, i) => `a long enough repeated title number ${i.toString(36)}`);
    let texts = base.flatMap((t) => [t, t]);
    let ix = buildSearchIndex(texts);
    assert.ok(ix.groups.starts.length - 1 > 65_536);
    // Inserted near the start: every group past it renumbered, one joins a group of block 1, one is new.
    for (const round of [[[5, 0, [base[69_000]!, 'an inserted title of its own']]], [[2, 3, []], [131_000, 2, [base[1]!]]]] as [number, number, string[]][][]) {
      const { now, got } = renumberedStep(ix, texts, round);
      assert.deepEqual(got, buildSearchIndex(now));
      ix = got!;
      texts = now;
    }
    // Barely grouped: its repeats removed, the texts would not be grouped: null (the caller builds).
    const few = Array.from({ length: 400 }, (_, i) => (i < 40 ? 'the one repeated long title of this set' : `t${i}`));
    const { now, got } = renumberedStep(buildSearchIndex(few), few, [[1, 38, []]]);
    assert.equal(buildSearchIndex(now).groups.starts.length, 0);
    assert.equal(got, null);
  });
});

/** `texts` with `round` applied ([at, removed count, inserted texts], ascending `at`): the texts now, and the index regroupedIndexRenumbered makes from `ix`. */
function renumberedStep(ix: SearchIndex, texts: readonly string[], round: readonly (readonly [number, number, readonly string[]])[]) {
  const newOf = new Int32Array(texts.length);
  const now: string[] = [];
  const removed: TextAt[] = [];
  const added: TextAt[] = [];
  let r = 0;
  for (let i = 0; i <= texts.length; i++) {
    const edit = round[r]?.[0] === i ? round[r++] : undefined;
    for (const t of edit?.[2] ?? []) added.push({ id: now.length, text: t }), now.push(t);
    if (i === texts.length) break;
    if (edit !== undefined && edit[1] > 0) {
      for (let k = 0; k < edit[1]; k++) (newOf[i + k] = -1), removed.push({ id: i + k, text: texts[i + k]! });
      i += edit[1] - 1;
      continue;
    }
    newOf[i] = now.length;
    now.push(texts[i]!);
  }
  return { now, got: regroupedIndexRenumbered(ix, newOf, now.length, removed, added, (id) => texts[id]!) };
}
