// UTC month windows: start, end (resetsOn), length in seconds, across month, leap-year and year ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CalendarCache, dayKey, isDayKey, monthWindow, secondsUntil } from '../../src/quota/month.ts';

const DAY = 86_400;
const cases: [string, string, string, number][] = [
  // instant -> month key, resetsOn, seconds in the month
  ['2027-01-31T23:59:59.999Z', '2027-01', '2027-02-01T00:00:00.000Z', 31 * DAY],
  ['2027-02-01T00:00:00.000Z', '2027-02', '2027-03-01T00:00:00.000Z', 28 * DAY],
  ['2027-02-28T23:59:59.999Z', '2027-02', '2027-03-01T00:00:00.000Z', 28 * DAY],
  ['2028-02-28T12:00:00.000Z', '2028-02', '2028-03-01T00:00:00.000Z', 29 * DAY],
  ['2028-02-29T23:59:59.999Z', '2028-02', '2028-03-01T00:00:00.000Z', 29 * DAY],
  ['2026-12-31T23:59:59.999Z', '2026-12', '2027-01-01T00:00:00.000Z', 31 * DAY],
  ['2027-01-01T00:00:00.000Z', '2027-01', '2027-02-01T00:00:00.000Z', 31 * DAY],
  ['2026-11-22T10:54:22.000Z', '2026-11', '2026-12-01T00:00:00.000Z', 30 * DAY],
];
for (const [instant, key, resetsOn, seconds] of cases) {
  test(`${instant} -> ${key}, resets ${resetsOn}, ${seconds / DAY} days`, () => {
    const w = monthWindow(Date.parse(instant));
    assert.deepEqual([w.key, w.resetsOn, w.seconds], [key, resetsOn, seconds]);
    assert.equal(new Date(w.start).toISOString().slice(0, 7), key);
  });
}

test('secondsUntil rounds up: 1 ms before the reset -> 1 s; at the reset -> 0', () => {
  const end = Date.parse('2027-02-01T00:00:00.000Z');
  assert.equal(secondsUntil(end, end - 1), 1);
  assert.equal(secondsUntil(end, end - 1000), 1);
  assert.equal(secondsUntil(end, end - 1001), 2);
  assert.equal(secondsUntil(end, end), 0);
});

test('day keys: UTC, and only real calendar days are valid', () => {
  assert.equal(dayKey(Date.parse('2028-02-29T23:59:59.999Z')), '2028-02-29');
  assert.equal(isDayKey('2028-02-29'), true);
  assert.equal(isDayKey('2027-02-29'), false);
  assert.equal(isDayKey('2027-13-01'), false);
  assert.equal(isDayKey('2027-1-01'), false);
});

test('CalendarCache follows a clock that jumps forward and back', () => {
  const cache = new CalendarCache(Date.parse('2027-01-31T23:59:59.999Z'));
  assert.equal(cache.month(Date.parse('2027-01-31T23:59:59.999Z')).key, '2027-01');
  assert.equal(cache.moment(Date.parse('2027-01-31T23:59:59.999Z')).day, '2027-01-31');
  assert.equal(cache.month(Date.parse('2027-02-01T00:00:00.000Z')).key, '2027-02');
  assert.equal(cache.moment(Date.parse('2027-02-01T00:00:00.000Z')).day, '2027-02-01');
  assert.equal(cache.month(Date.parse('2026-12-31T00:00:00.000Z')).key, '2026-12');
  assert.equal(cache.moment(Date.parse('2026-12-31T00:00:00.000Z')).day, '2026-12-31');
});
