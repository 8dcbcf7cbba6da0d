// src/threads/ring.ts: a worker's reports and observations in shared memory, and the bell that tells
// the main thread to read them: rung once until the main thread reads, never lost in a read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BELL_MS, FULL, Later, QUIET, RANG, Reports } from '../../src/threads/ring.ts';

const fresh = () => {
  const memory = Reports.memory();
  return { memory, worker: new Reports(memory.ring, memory.heads), main: new Reports(memory.ring, memory.heads) };
};
const drain = (main: Reports) => {
  const out: number[][] = [];
  main.read((a, b, c, d) => out.push([a, b, c, d]));
  return out;
};

test('the first entry rings, the next ones are quiet until the main thread reads; then the next one rings again', () => {
  const { worker, main } = fresh();
  assert.equal(worker.write(1, 200, 10, 0), RANG);
  assert.equal(worker.write(2, 429, 11, 0), QUIET);
  assert.deepEqual(drain(main), [[1, 200, 10, 0], [2, 429, 11, 0]]);
  assert.deepEqual(drain(main), []);
  assert.equal(worker.write(3, 200, 12, 7), RANG);
  assert.deepEqual(drain(main), [[3, 200, 12, 7]]);
});

test('a full ring takes nothing more (FULL: the entry goes in a message) until the main thread reads', () => {
  const { worker, main } = fresh();
  let written = 0;
  while (worker.write(written, 200, 0, 0) !== FULL) written++;
  assert.equal(written, 1 << 14);
  const read = drain(main);
  assert.equal(read.length, written);
  assert.deepEqual(read.at(-1), [written - 1, 200, 0, 0]);
  assert.equal(worker.write(0, 200, 0, 0), RANG);
});

test('an entry written while the main thread reads (after it took the end) rings again: it is read next time, never left unread without a bell', () => {
  const { worker, main } = fresh();
  assert.equal(worker.write(1, 200, 0, 0), RANG);
  const during: number[] = [];
  const seen: number[] = [];
  main.read((a) => {
    seen.push(a);
    // The worker, on another core, writes now: after this read took the end of the ring.
    if (a === 1) during.push(worker.write(2, 200, 0, 0));
  });
  assert.deepEqual(seen, [1]);
  assert.deepEqual(during, [RANG], 'the entry the read did not take rang the bell');
  assert.deepEqual(drain(main), [[2, 200, 0, 0]]);
});

test('Later: reads once BELL_MS after the first of many bells; now() reads at once and drops the wait', async () => {
  let reads = 0;
  const later = new Later(() => reads++);
  for (let i = 0; i < 100; i++) later.rang();
  assert.equal(reads, 0);
  await new Promise((r) => setTimeout(r, BELL_MS * 3));
  assert.equal(reads, 1);
  later.rang();
  later.now();
  assert.equal(reads, 2);
  await new Promise((r) => setTimeout(r, BELL_MS * 3));
  assert.equal(reads, 2, 'the wait dropped');
});
