// Tests for src/query/parse.ts: every rule of CONTRACT 3 as a table, over all five list endpoints.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ParameterError } from '../../src/errors.ts';
import { compareDecimal, parseListQuery } from '../../src/query/parse.ts';
import type { QueryPlan } from '../../src/query/plan.ts';
import { RESOURCE_LIST, RESOURCES, type CollectionName } from '../../src/resources/index.ts';

const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);
const DEFAULTS: Omit<QueryPlan, 'sort'> = { page: 1, limit: 20, search: null, filters: [], range: null };
const plan = (name: CollectionName, over: Partial<QueryPlan> = {}): QueryPlan => ({
  ...DEFAULTS,
  sort: RESOURCES[name].sorts[0]!.name,
  ...over,
});
const parse = (name: CollectionName, query: string): QueryPlan => parseListQuery(RESOURCES[name], query);

describe('parseListQuery: valid queries', () => {
  const cases: [CollectionName, string, Partial<QueryPlan>][] = [
    ['outfits', 'page=2', { page: 2 }],
    ['news', 'page=007', { page: 7 }],
    ['movies', `page=${MAX_SAFE}`, { page: Number.MAX_SAFE_INTEGER }],
    ['reviews', `page=${'0'.repeat(40)}1`, { page: 1 }],
    ['celebrities', 'limit=1', { limit: 1 }],
    ['celebrities', 'limit=50', { limit: 50 }],
    ['celebrities', 'limit=51', { limit: 50 }],
    ['outfits', 'limit=1000', { limit: 50 }],
    ['news', 'limit=99999999999999999999', { limit: 50 }],
    ['movies', `limit=${'9'.repeat(400)}`, { limit: 50 }],
    ['celebrities', 'page=3&&limit=5&', { page: 3, limit: 5 }],
    ['celebrities', '&&&', {}],
    ['celebrities', 'foo=1&foo=2&foo', {}],
    ['celebrities', 'foo=%E0%A4%A', {}],
    ['celebrities', 'featured=maybe&minRating=x&status=nope', {}],
    ['movies', 'minRating=x&celebrity=a&brand=b', {}],
    ['celebrities', 'p%61ge=3', { page: 3 }],
    ['celebrities', 'search=Beyonc%C3%A9', { search: 'beyonce' }],
    ['celebrities', 'search=%20%20BEYONC%C3%89%20', { search: 'beyonce' }],
    ['celebrities', 'search=taylor+swift', { search: 'taylor swift' }],
    ['outfits', 'search=a%2Bb', { search: 'a+b' }],
    ['news', 'search=', {}],
    ['news', 'search', {}],
    ['movies', 'search=+++', {}],
    ['reviews', 'search=%20%09', {}],
    ['celebrities', `search=${'a'.repeat(200)}`, { search: 'a'.repeat(200) }],
    ['celebrities', `search=++${'A'.repeat(200)}++`, { search: 'a'.repeat(200) }],
    ['celebrities', `search=${'%F0%9F%98%80'.repeat(200)}`, { search: '\u{1F600}'.repeat(200) }],
    ['celebrities', 'nationality=FRENCH', { filters: [{ param: 'nationality', key: 'french' }] }],
    ['celebrities', 'occupation=+Singer+', { filters: [{ param: 'occupation', key: 'singer' }] }],
    [
      'celebrities',
      'nationality=American&occupation=Actor',
      { filters: [{ param: 'occupation', key: 'actor' }, { param: 'nationality', key: 'american' }] },
    ],
    ['outfits', 'category=Caf%C3%A9', { filters: [{ param: 'category', key: 'cafe' }] }],
    ['outfits', 'celebrity=zoe-martin-2', { filters: [{ param: 'celebrity', key: 'zoe-martin-2' }] }],
    [
      'outfits',
      'brand=GUCCI&category=Dress&celebrity=zendaya',
      {
        filters: [
          { param: 'celebrity', key: 'zendaya' },
          { param: 'category', key: 'dress' },
          { param: 'brand', key: 'gucci' },
        ],
      },
    ],
    ['news', 'featured=true', { filters: [{ param: 'featured', key: 'true' }] }],
    ['news', 'featured=false&category=Red+Carpet', {
      filters: [{ param: 'category', key: 'red carpet' }, { param: 'featured', key: 'false' }],
    }],
    ['movies', 'genre=Sci-Fi', { filters: [{ param: 'genre', key: 'sci-fi' }] }],
    ['movies', 'status=upcoming', { filters: [{ param: 'status', key: 'upcoming' }] }],
    ['movies', 'status=released', { filters: [{ param: 'status', key: 'released' }] }],
    ['movies', 'status=in-production', { filters: [{ param: 'status', key: 'in-production' }] }],
    ['reviews', 'featured=false', { filters: [{ param: 'featured', key: 'false' }] }],
    ['reviews', 'minRating=0', { range: { param: 'minRating', min: 0, max: 10 } }],
    ['reviews', 'maxRating=10', { range: { param: 'minRating', min: 0, max: 10 } }],
    ['reviews', 'minRating=7.5&maxRating=9', { range: { param: 'minRating', min: 7.5, max: 9 } }],
    ['reviews', 'maxRating=0.25', { range: { param: 'minRating', min: 0, max: 0.25 } }],
    ['reviews', 'minRating=5&maxRating=5', { range: { param: 'minRating', min: 5, max: 5 } }],
    ['reviews', 'minRating=007.50', { range: { param: 'minRating', min: 7.5, max: 10 } }],
    ['reviews', 'minRating=10.000', { range: { param: 'minRating', min: 10, max: 10 } }],
    ['reviews', 'maxRating=0000', { range: { param: 'minRating', min: 0, max: 0 } }],
    // The text is within the bounds; its float rounds to 10, which the engine then uses.
    ['reviews', 'minRating=9.99999999999999999', { range: { param: 'minRating', min: 10, max: 10 } }],
  ];
  for (const [name, query, over] of cases) {
    test(`${name}: ${query} -> ${JSON.stringify(over)}`, () => assert.deepEqual(parse(name, query), plan(name, over)));
  }

  for (const def of RESOURCE_LIST) {
    test(`${def.name}: '' -> defaults`, () => assert.deepEqual(parse(def.name, ''), plan(def.name)));
    for (const { name: sort } of def.sorts) {
      test(`${def.name}: sort=${sort} -> ${sort}`, () => assert.deepEqual(parse(def.name, `sort=${sort}`), plan(def.name, { sort })));
    }
  }

  test('the same parameters in another order -> an equal plan', () => {
    const a = parse('movies', 'featured=true&page=2&genre=drama&sort=title_asc&status=released&limit=5&search=x');
    const b = parse('movies', 'search=x&limit=5&status=released&sort=title_asc&genre=Drama&page=2&featured=true');
    assert.deepEqual(a, b);
  });
});

describe('compareDecimal: exact order of decimal texts', () => {
  const cases: [string, string, number][] = [
    ['0', '0', 0], ['000', '0', 0], ['0.000', '0', 0], ['10', '10.0', 0], ['007.50', '7.5', 0],
    ['9.99999999999999999', '10', -1], ['10.0000000000000001', '10', 1], ['2', '10', -1], ['10', '9', 1],
    ['1.25', '1.3', -1], ['1.3', '1.25', 1], ['0.1', '0.10000000000000000001', -1],
  ];
  for (const [a, b, expected] of cases) test(`${a} vs ${b} -> ${expected}`, () => assert.equal(compareDecimal(a, b), expected));
});

describe('parseListQuery: rejected queries', () => {
  const INT = 'must be an integer >= 1';
  const REPEAT = 'must not be given more than once';
  const RATING = 'must be a number from 0 to 10';
  const STATUS = 'must be one of: upcoming, released, in-production';
  const BOOL = 'must be true or false';
  const ENC = 'must be valid percent-encoded UTF-8';
  // [endpoint, query, parameter named in the error, text the rule contains]
  const cases: [CollectionName, string, string, string][] = [
    ...['0', '-1', '1.5', 'abc', '', '%201', '1%20', '1e3', '+1', '0x10', '%EF%BC%91'].flatMap(
      (v): [CollectionName, string, string, string][] => [
        ['celebrities', `page=${v}`, 'page', INT],
        ['reviews', `limit=${v}`, 'limit', INT],
      ],
    ),
    ['news', 'page', 'page', INT],
    ['news', 'limit', 'limit', INT],
    ['movies', 'page=99999999999999999999', 'page', `between 1 and ${MAX_SAFE}`],
    ['movies', 'page=9007199254740992', 'page', `between 1 and ${MAX_SAFE}`],
    ['movies', `page=${'9'.repeat(400)}`, 'page', `between 1 and ${MAX_SAFE}`],
    ['celebrities', 'page=1&page=1', 'page', REPEAT],
    ['celebrities', 'limit=5&limit=6', 'limit', REPEAT],
    ['outfits', 'sort=latest&sort=latest', 'sort', REPEAT],
    ['news', 'search=a&search=b', 'search', REPEAT],
    ['news', 'search=&search=', 'search', REPEAT],
    ['news', 'featured=true&featured=true', 'featured', REPEAT],
    ['reviews', 'minRating=1&minRating=2', 'minRating', REPEAT],
    ['reviews', 'maxRating=9&maxRating=8', 'maxRating', REPEAT],
    ['celebrities', 'nationality=a&occupation=b&nationality=a', 'nationality', REPEAT],
    ['celebrities', 'p%61ge=1&page=2', 'page', REPEAT],
    ['celebrities', 'sort=popular', 'sort', 'must be one of: latest, oldest, name_asc, name_desc'],
    ['outfits', 'sort=name_asc', 'sort', 'must be one of: latest, oldest, popular, title_asc'],
    ['news', 'sort=title_asc', 'sort', 'must be one of: latest, oldest, popular'],
    ['movies', 'sort=rating_high', 'sort', 'must be one of: latest, oldest, release_asc, release_desc, title_asc'],
    ['reviews', 'sort=release_asc', 'sort', 'must be one of: latest, oldest, rating_high, rating_low'],
    ['celebrities', 'sort=LATEST', 'sort', 'must be one of'],
    ['celebrities', 'sort=latest+', 'sort', 'must be one of'],
    ['celebrities', 'sort=', 'sort', 'must be one of'],
    ['celebrities', `search=${'a'.repeat(201)}`, 'search', 'at most 200 characters'],
    ['celebrities', `search=${'%F0%9F%98%80'.repeat(201)}`, 'search', 'at most 200 characters'],
    ['celebrities', 'search=%E0%A4%A', 'search', ENC],
    ['outfits', 'page=%', 'page', ENC],
    ['celebrities', 'nationality=%ZZ', 'nationality', ENC],
    ['celebrities', 'search=%ED%A0%80', 'search', ENC],
    ['celebrities', '%E0%A4%A=1', '%E0%A4%A', `name ${ENC}`],
    ['celebrities', 'nationality=', 'nationality', 'must not be empty'],
    ['celebrities', 'nationality=%20+', 'nationality', 'must not be empty'],
    ['celebrities', 'occupation', 'occupation', 'must not be empty'],
    ['celebrities', 'occupation=%CC%81', 'occupation', 'must not be empty'],
    ...['', 'Zendaya', 'zoe martin', 'zoe--martin', '-zoe', 'zoe-', 'zo%C3%AB', 'zoe_martin'].map(
      (v): [CollectionName, string, string, string] => ['outfits', `celebrity=${v}`, 'celebrity', 'must be a slug'],
    ),
    ['news', 'celebrity=Zoe', 'celebrity', 'must be a slug'],
    ['news', 'category=', 'category', 'must not be empty'],
    ['movies', 'genre=', 'genre', 'must not be empty'],
    ...['Released', 'unknown', '', 'upcoming%20'].map((v): [CollectionName, string, string, string] => [
      'movies',
      `status=${v}`,
      'status',
      STATUS,
    ]),
    ...['TRUE', 'True', '1', 'yes', '', 'true%20'].map((v): [CollectionName, string, string, string] => [
      'news',
      `featured=${v}`,
      'featured',
      BOOL,
    ]),
    ['movies', 'featured=0', 'featured', BOOL],
    ['reviews', 'featured', 'featured', BOOL],
    ...['10.5', '-1', 'x', '5.', '.5', '', '1e1', '+5', '5..0', '1.2.3', '99999999999999999999'].map(
      (v): [CollectionName, string, string, string] => ['reviews', `minRating=${v}`, 'minRating', RATING],
    ),
    // Compared as written, not as floats: each of these parses to a number within [0, 10].
    ...['10.0000000000000001', '10.000000000000000000000000001', '010.1', `10.${'0'.repeat(400)}1`].map(
      (v): [CollectionName, string, string, string] => ['reviews', `minRating=${v}`, 'minRating', RATING],
    ),
    ['reviews', 'maxRating=11', 'maxRating', RATING],
    ['reviews', 'maxRating=-0', 'maxRating', RATING],
    ['reviews', 'minRating=8&maxRating=2', 'minRating', 'must not be greater than maxRating'],
    ['reviews', 'maxRating=2&minRating=2.5', 'minRating', 'must not be greater than maxRating'],
    ['reviews', 'minRating=5.00000000000000001&maxRating=5', 'minRating', 'must not be greater than maxRating'],
    // Several bad parameters: the first one in query order is reported.
    ['celebrities', 'page=0&limit=0', 'page', INT],
    ['celebrities', 'limit=0&page=0', 'limit', INT],
    ['celebrities', 'sort=x&page=abc&page=2', 'sort', 'must be one of'],
    ['celebrities', 'page=abc&limit=0&page=2', 'page', INT],
    ['reviews', 'minRating=9&maxRating=1&page=0', 'page', INT],
  ];
  for (const [name, query, param, rule] of cases) {
    test(`${name}: ${query.length > 60 ? `${query.slice(0, 60)}...` : query} -> 400 ${param}`, () => {
      assert.throws(
        () => parse(name, query),
        (err: unknown) => {
          assert.ok(err instanceof ParameterError, `not a ParameterError: ${String(err)}`);
          assert.equal(err.param, param);
          assert.equal(err.code, 'INVALID_PARAMETER');
          assert.ok(err.message.startsWith(`Invalid parameter '${param}': `), err.message);
          assert.ok(err.message.includes(rule), `${err.message} lacks ${rule}`);
          return true;
        },
      );
    });
  }
});

describe('parseListQuery: the query read where it stands in the request target', () => {
  const cases: [CollectionName, string][] = [
    ['celebrities', '/api/v1/celebrities?nationality=French&sort=latest&page=2'],
    ['outfits', '/api/v1/outfits?celebrity=zendaya&limit=5'],
    ['reviews', '/api/v1/reviews?minRating=7.5&sort=rating_high'],
    ['celebrities', '/api/v1/celebrities?'],
  ];
  for (const [name, target] of cases) {
    const at = target.indexOf('?') + 1;
    test(`${name}: ${target} from ${at} -> as its query alone`, () => {
      assert.deepEqual(parseListQuery(RESOURCES[name], target, at), parse(name, target.slice(at)));
    });
  }
  test('an error names the parameter as in the query alone', () => {
    assert.throws(() => parseListQuery(RESOURCES.celebrities, '/api/v1/celebrities?page=0', 20), (err: unknown) => err instanceof ParameterError && err.param === 'page');
  });
});
