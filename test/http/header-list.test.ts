// src/http/respond.ts headerList: one array per size, written anew by each call (writeHead reads a flat
// list at once and keeps none of it), so a response makes no header list of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { headerList } from '../../src/http/respond.ts';

const BASE = ['Content-Type', 'application/json; charset=utf-8', 'Cache-Control', 'no-store'];

test('headerList -> base, extra, then the pair, in a list of the exact size', () => {
  assert.deepEqual(headerList(BASE, ['X-Request-Id', 'a-1', 'ETag', '"t"'], 'Content-Length', '12'), [...BASE, 'X-Request-Id', 'a-1', 'ETag', '"t"', 'Content-Length', '12']);
  assert.deepEqual(headerList(BASE, ['X-Request-Id', 'a-2']), [...BASE, 'X-Request-Id', 'a-2']);
});

test('headerList -> lists of one size are one array, holding the last call`s headers; other sizes another', () => {
  const first = headerList(BASE, ['X-Request-Id', 'a-1', 'ETag', '"t1"'], 'Content-Length', '7');
  const second = headerList(BASE, ['X-Request-Id', 'a-2', 'RateLimit', 'r'], 'Content-Length', '8');
  assert.equal(second, first);
  assert.deepEqual(first, [...BASE, 'X-Request-Id', 'a-2', 'RateLimit', 'r', 'Content-Length', '8']);
  const shorter = headerList(BASE, ['X-Request-Id', 'a-3'], 'Content-Length', '9');
  assert.notEqual(shorter, first);
  assert.equal(shorter.length, BASE.length + 4);
  assert.deepEqual(first.slice(-2), ['Content-Length', '8']);
});
