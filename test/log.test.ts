// The batched log writer: info lines wait for the tick, warnings and errors flush at once, in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { batchedWriter, createLogger } from '../src/log.ts';

test('info lines go out together after the interval; a warning flushes what waits, then itself', async () => {
  const chunks: string[] = [];
  const out = batchedWriter((c) => chunks.push(c), 30);
  const log = createLogger({ write: out.write });
  log.info('a');
  log.info('b');
  assert.equal(chunks.length, 0, 'nothing written per line');
  await sleep(60);
  assert.equal(chunks.length, 1);
  assert.deepEqual(chunks[0]!.trim().split('\n').map((l) => JSON.parse(l).msg), ['a', 'b']);
  log.info('c');
  log.warn('d');
  assert.equal(chunks.length, 2, 'the warning did not wait for the tick');
  assert.deepEqual(chunks[1]!.trim().split('\n').map((l) => JSON.parse(l).msg), ['c', 'd']);
});

test('a full buffer flushes at once; flush() empties it; the level filter still applies', () => {
  const chunks: string[] = [];
  const out = batchedWriter((c) => chunks.push(c), 60_000, 100);
  const log = createLogger({ level: 'info', write: out.write });
  log.debug('hidden');
  log.info('x'.repeat(120));
  assert.equal(chunks.length, 1, 'over maxBytes');
  log.info('y');
  out.flush();
  out.flush();
  assert.equal(chunks.length, 2);
  assert.ok(!chunks.join('').includes('hidden'));
});
