// Tests for src/query/known-keys.ts and its use by parse.ts: a filter value matched in place against
// the keys met before gives the key the general path would give, or nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ParameterError } from '../../src/errors.ts';
import { KnownKeys } from '../../src/query/known-keys.ts';
import { parseListQuery } from '../../src/query/parse.ts';
import { RESOURCES, type CollectionName } from '../../src/resources/index.ts';

const parse = (name: CollectionName, query: string) => parseListQuery(RESOURCES[name], query);
/** Every string of `length` characters from `alphabet`. */
function* strings(alphabet: string, length: number): Generator<string> {
  if (length === 0) return yield '';
  for (const head of strings(alphabet, length - 1)) for (const c of alphabet) yield head + c;
}
const PRINTABLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');

describe('KnownKeys', () => {
  test('a noted key is found where it stands, upper case as lower case for a text filter', () => {
    const keys = new KnownKeys('nationality', true);
    const noted = keys.note('abcd');
    assert.equal(noted?.key, 'abcd');
    assert.deepEqual(noted?.alone, [{ param: 'nationality', key: 'abcd' }]);
    assert.equal(keys.find('x=abcd&', 2, 6), noted);
    assert.equal(keys.find('x=AbCD&', 2, 6), noted);
    assert.equal(keys.note('abcd'), noted, 'noted again: the same entry');
  });

  test('an exact filter (slug, enum, boolean) finds only the key itself', () => {
    const keys = new KnownKeys('celebrity', false, ['zendaya']);
    assert.equal(keys.find('zendaya', 0, 7)?.key, 'zendaya');
    assert.equal(keys.find('Zendaya', 0, 7), undefined);
    assert.equal(keys.find('ZENDAYA', 0, 7), undefined);
  });

  test('no other value of the same length is found (65,536 of them, some in the same slot)', () => {
    for (const folds of [true, false]) {
      const keys = new KnownKeys('p', folds);
      keys.note('abcd');
      for (const s of strings('abcdefghijklmnop', 4)) if (s !== 'abcd') assert.equal(keys.find(s, 0, 4), undefined, s);
    }
  });

  test('no longer or shorter value is found: a key followed by more characters, or cut short', () => {
    const keys = new KnownKeys('p', true);
    keys.note('abcd');
    for (const tail of [...strings(PRINTABLE, 1), ...strings(PRINTABLE, 2)]) assert.equal(keys.find(`abcd${tail}`, 0, 4 + tail.length), undefined, tail);
    for (const s of [...strings('abcd', 3), ...strings('abcd', 2), ...strings('abcd', 1)]) assert.equal(keys.find(s, 0, s.length), undefined, s);
  });

  test('only keys a plain value can equal are noted', () => {
    const text = new KnownKeys('p', true);
    for (const key of ['', ' ', ' ab', 'ab ', 'caf\u00e9', 'Gucci', '\u00f8', 'tab\there', 'x'.repeat(65)]) assert.equal(text.note(key), undefined, JSON.stringify(key));
    assert.equal(text.note('x'.repeat(64))?.key, 'x'.repeat(64));
    assert.equal(text.note('south  korean')?.key, 'south  korean', 'spaces within a key');
    assert.equal(new KnownKeys('p', false).note('Mixed')?.key, 'Mixed');
  });
});

describe('KnownKeys.findEscaped: a value with escapes, decoded as it is read', () => {
  const keys = new KnownKeys('nationality', true);
  const korean = keys.note('south korean');
  const plus = keys.note('a+b');
  const at = (value: string) => keys.findEscaped(`x=${value}&y`, 2, 2 + value.length);

  test('%20 and + are a space, %XX the character, either case of hex digits and letters', () => {
    for (const v of ['South%20Korean', 'South+Korean', 'SOUTH%20korean', '%53outh+Korean', 'south%20korea%6E', 'south%20korea%6e', 'South%20Korea%4E']) assert.equal(at(v), korean, v);
    for (const v of ['a%2Bb', 'A%2bB', '%61%2B%62']) assert.equal(at(v), plus, v);
  });

  test('nothing for a value that decodes to something else, or that the general path decodes otherwise', () => {
    for (const v of [
      'a+b', 'South%20Korea', 'South%20Koreans', 'South%2520Korean', 'South%09Korean', 'South%C2%A0Korean', '%20South%20Korean', 'South%20Korean%20',
      'South%2', 'South%', 'South%ZZKorean', 'South%2GKorean', 'south%20korean%', 'south%20korea%6', '%E2%82%AC', '%00',
    ]) assert.equal(at(v), undefined, v);
  });

  test('an exact filter finds only the key itself', () => {
    const slugs = new KnownKeys('celebrity', false, ['zoe-martin']);
    assert.equal(slugs.findEscaped('zoe%2Dmartin', 0, 12)?.key, 'zoe-martin');
    assert.equal(slugs.findEscaped('zoe%2dmartin', 0, 12)?.key, 'zoe-martin');
    assert.equal(slugs.findEscaped('Zoe%2Dmartin', 0, 12), undefined);
    assert.equal(slugs.findEscaped('zoe%2Dmarti%4E', 0, 14), undefined);
  });
});

describe('parseListQuery: filter values matched in place', () => {
  test('a value asked again in another case gives the same key as the first time', () => {
    const first = parse('celebrities', 'nationality=Brazilian');
    assert.deepEqual(first.filters, [{ param: 'nationality', key: 'brazilian' }]);
    for (const v of ['brazilian', 'BRAZILIAN', 'bRaZiLiAn', 'Braz%69lian', '+Brazilian', 'Brazilian%20']) {
      assert.deepEqual(parse('celebrities', `nationality=${v}&sort=latest`).filters, [{ param: 'nationality', key: 'brazilian' }], v);
    }
    assert.deepEqual(parse('celebrities', 'nationality=Brazilians').filters, [{ param: 'nationality', key: 'brazilians' }]);
    assert.deepEqual(parse('celebrities', 'nationality=Brazilia').filters, [{ param: 'nationality', key: 'brazilia' }]);
  });

  test('two filters whose keys are known: both, in definition order', () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(parse('celebrities', 'nationality=Mexican&occupation=Singer').filters, [
        { param: 'occupation', key: 'singer' },
        { param: 'nationality', key: 'mexican' },
      ]);
      assert.deepEqual(parse('outfits', 'brand=Prada&celebrity=zoe-martin&category=Dress%20Shoes').filters, [
        { param: 'celebrity', key: 'zoe-martin' },
        { param: 'category', key: 'dress shoes' },
        { param: 'brand', key: 'prada' },
      ]);
    }
  });

  test('a known slug in upper case is still a 400', () => {
    assert.deepEqual(parse('outfits', 'celebrity=zoe-martin-7').filters, [{ param: 'celebrity', key: 'zoe-martin-7' }]);
    assert.throws(() => parse('outfits', 'celebrity=Zoe-martin-7'), (err: unknown) => err instanceof ParameterError && err.message.includes('must be a slug'));
  });

  test("'=' in a value, '%' or '+' in a name or a value: read as before", () => {
    assert.deepEqual(parse('celebrities', 'nationality=a=b').filters, [{ param: 'nationality', key: 'a=b' }]);
    assert.equal(parse('celebrities', 'search=a=b').search, 'a=b');
    assert.equal(parse('celebrities', 'page=%32').page, 2);
    assert.equal(parse('celebrities', 'limit=1%30').limit, 10);
    assert.equal(parse('celebrities', 'sort=name%5Fasc').sort, 'name_asc');
    assert.equal(parse('celebrities', 'sor%74=oldest&page=3').sort, 'oldest');
    assert.deepEqual(parse('celebrities', 'nationalit%79=Swedish&x=%&y=+').filters, [{ param: 'nationality', key: 'swedish' }]);
  });
});
