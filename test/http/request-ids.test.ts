// src/http/respond.ts RequestIds: `prefix-` and a counter in base 36, its last two digits from a table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestIds } from '../../src/http/respond.ts';

test('request ids are a random prefix and the counter in base 36, across every change of its leading digits', () => {
  const ids = new RequestIds();
  const first = ids.next();
  const prefix = first.slice(0, first.indexOf('-'));
  assert.match(prefix, /^[0-9a-f]{8}$/);
  assert.equal(first, `${prefix}-1`);
  // Past 36^2 (the table's width) and 36^3, so every length of the digits is seen.
  for (let n = 2; n <= 50_000; n++) assert.equal(ids.next(), `${prefix}-${n.toString(36)}`);
  assert.notEqual(new RequestIds().next().slice(0, 8), prefix, 'each server draws its own prefix');
});
