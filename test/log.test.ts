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

test('a JSON line is {time, level, msg, ...fields} as JSON.stringify writes it, whatever the fields', () => {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  const cases: (Record<string, unknown> | undefined)[] = [
    undefined,
    {},
    { a: undefined },
    { requestId: 'ab-1', method: 'GET', path: '/x?q="\\\n', status: 200, ms: 0.125, client: '::1' },
    { nested: { deep: [1, 'two', null] }, u: undefined, n: null },
    { msg: 'a field named msg', extra: 1 },
    { level: 'shadow' },
    { time: 'then' },
  ];
  for (const fields of cases) {
    lines.length = 0;
    log.info('hello "there"', fields);
    const time = (JSON.parse(lines[0]!) as { time: string }).time;
    if (fields?.time === undefined) assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(lines[0], JSON.stringify({ time, level: 'info', msg: 'hello "there"', ...fields }), JSON.stringify(fields));
  }
});
