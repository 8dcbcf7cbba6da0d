// recordCopy (src/resources/types.ts): the copy link() sets its derived fields on is what a spread
// makes, an own `__proto__` field of a record (JSON.parse makes one) included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordCopy, type SourceRecord } from '../../src/resources/types.ts';
import { RESOURCES } from '../../src/resources/index.ts';

const parse = (text: string) => JSON.parse(text) as SourceRecord;

test('a record -> a new object with its own fields in their order, as a spread makes', () => {
  const r = parse('{"_id":"a","slug":"b","10":1,"title":"t","nested":{"x":[1,2]}}');
  const copy = recordCopy(r);
  assert.notEqual(copy, r);
  assert.deepEqual(Object.keys(copy), Object.keys({ ...r }));
  assert.deepEqual(copy, { ...r });
  assert.equal(copy.nested, r.nested);
  copy.title = 'changed';
  assert.equal(r.title, 't');
});

test('a record with an own __proto__ field -> the copy keeps it as a field, its prototype untouched', () => {
  const r = parse('{"_id":"a","slug":"b","__proto__":{"poster":"https://x.example/p.jpg"}}');
  const copy = recordCopy(r);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal(copy.poster, undefined);
  assert.deepEqual(Object.keys(copy), ['_id', 'slug', '__proto__']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { poster: 'https://x.example/p.jpg' });
});

test('a review linked -> its fields, then movieTitle, poster and movieDetails, as before', () => {
  const review = parse('{"_id":"r1","title":"Good","slug":"good","movie":"m","rating":8,"publishDate":"2020-01-01T00:00:00.000Z"}');
  const movie = parse('{"_id":"m1","title":"M","slug":"m","releaseDate":"2019-05-01T00:00:00.000Z","genre":["drama"],"director":"D"}');
  const linked = RESOURCES.reviews.link(review, { get: () => movie, referrers: () => [] });
  assert.deepEqual(Object.keys(linked), [...Object.keys(review), 'movieTitle', 'poster', 'movieDetails']);
  assert.deepEqual(linked.movieDetails, { releaseYear: 2019, director: 'D', genre: ['drama'], runtime: null });
  assert.equal(linked.poster, null);
  assert.equal(Object.hasOwn(review, 'movieTitle'), false);
});
