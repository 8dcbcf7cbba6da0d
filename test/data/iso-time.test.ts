// parseIsoTime is Date.parse, and canonicalTimestamp reads only what the timestamp pattern matches
// (issue 19: the data's times read digit by digit, the date parser asked for anything else).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { PATTERNS } from '../../src/resources/patterns.ts';
import { canonicalTimestamp, parseIsoTime } from '../../src/resources/iso-time.ts';

const TIMESTAMP = new RegExp(PATTERNS.timestamp);
const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** Strings near the two forms: fields in and out of range, digits swapped for other units, lengths off by one. */
const nearIso = fc
  .tuple(
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 }),
    fc.integer({ min: 0, max: 25 }),
    fc.integer({ min: 0, max: 61 }),
    fc.integer({ min: 0, max: 61 }),
    fc.integer({ min: 0, max: 999 }),
    fc.boolean(),
    fc.option(fc.tuple(fc.nat(30), fc.constantFrom('x', ' ', '/', '+', 'Z', 'T', ':', '.', '-', '0', '٣')), { nil: null }),
  )
  .map(([y, mo, d, h, mi, s, ms, dateOnly, change]) => {
    let text = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}` + (dateOnly ? '' : `T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`);
    if (change) text = text.slice(0, change[0]) + change[1] + text.slice(change[0] + 1);
    return text;
  });

test('parseIsoTime -> Date.parse, for strings near both forms and any string', () => {
  fc.assert(
    fc.property(fc.oneof(nearIso, fc.string(), fc.date({ noInvalidDate: true }).map((d) => d.toISOString())), (s) => {
      assert.ok(Object.is(parseIsoTime(s), Date.parse(s)), s);
      const t = canonicalTimestamp(s);
      if (t === t) {
        assert.ok(TIMESTAMP.test(s), `${s}: read, but the pattern does not match`);
        assert.equal(t, Date.parse(s), s);
      }
    }),
    { numRuns: 20_000 },
  );
});

test('canonicalTimestamp: the edges go to Date.parse (NaN here), the rest is read', () => {
  for (const s of ['0099-01-01T00:00:00.000Z', '2019-02-29T00:00:00.000Z', '2019-01-31T00:00:00.000Z', '2019-01-01T24:00:00.000Z', '2019-01-01T00:00:00Z', '+010000-01-01T00:00:00.000Z', '2019-01-01']) {
    assert.ok(Number.isNaN(canonicalTimestamp(s)), s);
  }
  assert.equal(canonicalTimestamp('2019-06-13T12:42:40.662Z'), Date.parse('2019-06-13T12:42:40.662Z'));
  assert.equal(canonicalTimestamp('0100-01-01T00:00:00.000Z'), Date.parse('0100-01-01T00:00:00.000Z'));
  assert.equal(parseIsoTime('2019-01-31'), Date.parse('2019-01-31'));
  assert.equal(parseIsoTime('1999-12-28'), Date.UTC(1999, 11, 28));
});
