// src/store/file/usage-records.ts PendingRecords: deltas of one account and day merge into one line,
// and a set or withdrawal line is never merged across (the log replays in order).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PendingRecords, type UsageRecord } from '../../../src/store/file/usage-records.ts';
import type { DayKey } from '../../../src/quota/month.ts';

const D1 = '2026-03-01' as DayKey;
const D2 = '2026-03-02' as DayKey;

function lines(p: PendingRecords): UsageRecord[] {
  const out: UsageRecord[] = [];
  p.drain((r) => out.push({ ...r }));
  return out;
}

test('add, add, add of one account and day -> one line with the sums and the latest time', () => {
  const p = new PendingRecords();
  p.add('a', D1, 1, 0, 10);
  p.add('a', D1, 1, 0, 30);
  p.add('a', D1, 0, 1, 20);
  assert.deepEqual(lines(p), [{ a: 'a', d: D1, s: 2, r: 1, t: 30 }]);
});

test('accounts and days interleaved -> one line each, in order of first appearance', () => {
  const p = new PendingRecords();
  for (const [id, day] of [['a', D1], ['b', D1], ['a', D1], ['a', D2], ['b', D1], ['a', D2]] as const) p.add(id, day, 1, 0, 1);
  assert.deepEqual(lines(p), [
    { a: 'a', d: D1, s: 2, r: 0, t: 1 },
    { a: 'b', d: D1, s: 2, r: 0, t: 1 },
    { a: 'a', d: D2, s: 2, r: 0, t: 1 },
  ]);
});

test('add, set, add -> the second delta is a new line after the set (never merged into the first)', () => {
  for (const between of ['set', 'withdraw'] as const) {
    const p = new PendingRecords();
    p.add('a', D1, 1, 0, 1);
    if (between === 'set') p.set('a', D1, 5);
    else p.withdraw('a', D1, 1);
    p.add('a', D1, 1, 0, 2);
    const middle = between === 'set' ? { a: 'a', d: D1, u: 5 } : { a: 'a', d: D1, x: 1 };
    assert.deepEqual(lines(p), [{ a: 'a', d: D1, s: 1, r: 0, t: 1 }, middle, { a: 'a', d: D1, s: 1, r: 0, t: 2 }], between);
  }
});

test('drain, then add -> a new line, not the drained one', () => {
  const p = new PendingRecords();
  p.add('a', D1, 1, 0, 1);
  assert.equal(lines(p).length, 1);
  p.add('a', D1, 1, 0, 2);
  assert.deepEqual(lines(p), [{ a: 'a', d: D1, s: 1, r: 0, t: 2 }]);
});
