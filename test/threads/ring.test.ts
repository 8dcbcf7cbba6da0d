// src/threads/ring.ts: a worker's reports and observations in shared memory, and the pool's one bell
// that tells the main thread to look at every ring: rung once until the main thread stops looking,
// never lost in a read. The bell's BELL_MS wait is the test's own here (`look()`), not a timer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Bell, FULL, QUIET, RANG, Reports } from '../../src/threads/ring.ts';

/**
 * A bell whose waits end when the test says (look()); how many are pending; `message()` is a message
 * from a thread, through Bell.listen as the pool takes every one (here on an EventEmitter: a
 * MessagePort's 'message' events, delivered at once).
 */
function manualBell() {
  const due: (() => void)[] = [];
  const bell = new Bell((f) => void due.push(f));
  const port = new EventEmitter();
  const handled: unknown[] = [];
  bell.listen(port, (m) => void handled.push(m));
  return { bell, look: () => due.splice(0).forEach((f) => f()), pending: () => due.length, message: (m: unknown = []) => void port.emit('message', m), handled };
}
const ring = (bell: Bell) => {
  const memory = Reports.memory(bell.memory);
  return { worker: new Reports(memory.ring, memory.heads, memory.bell), main: new Reports(memory.ring, memory.heads, memory.bell) };
};
const drain = (main: Reports) => {
  const out: number[][] = [];
  main.read((a, b, c, d) => out.push([a, b, c, d]));
  return out;
};

test('the first entry rings, the next ones are quiet, on every ring of the bell, until the main thread stops looking', () => {
  const { bell, look, pending, message } = manualBell();
  const a = ring(bell);
  const b = ring(bell);
  const seen: number[][] = [];
  bell.add(() => a.main.read((...e) => seen.push(e)));
  bell.add(() => b.main.read((...e) => seen.push(e)));
  assert.equal(a.worker.write(1, 200, 10, 0), RANG);
  assert.equal(a.worker.write(2, 429, 11, 0), QUIET);
  assert.equal(b.worker.write(3, 200, 12, 0), QUIET, 'one bell for every ring');
  for (let i = 0; i < 10; i++) message();
  assert.equal(pending(), 1, 'one look however often it rang');
  look();
  assert.deepEqual(seen, [[1, 200, 10, 0], [2, 429, 11, 0], [3, 200, 12, 0]]);
  assert.equal(pending(), 1, 'it found some: it looks again');
  assert.equal(b.worker.write(4, 200, 13, 7), QUIET, 'the bell stays rung meanwhile');
  look();
  assert.deepEqual(seen.at(-1), [4, 200, 13, 7]);
  look();
  assert.equal(pending(), 0, 'a look that found nothing cleared the bell and stopped');
  assert.equal(b.worker.write(5, 200, 14, 0), RANG);
  assert.equal(a.worker.write(6, 200, 15, 0), QUIET);
});

test('an entry written before the bell is cleared is read by the look after the clear; one written after it rings again', () => {
  const { bell, look, pending, message } = manualBell();
  const { worker, main } = ring(bell);
  const seen: number[] = [];
  const after: Record<number, number> = {};
  let calls = 0;
  bell.add(() => {
    calls++;
    const n = main.read((a) => seen.push(a));
    // The worker, on another core, writes just after this read took the end of the ring.
    if (calls === 2) after[2] = worker.write(2, 200, 0, 0); // the bell not yet cleared
    if (calls === 5) after[4] = worker.write(4, 200, 0, 0); // cleared
    return n;
  });
  assert.equal(worker.write(1, 200, 0, 0), RANG);
  message();
  look(); // call 1 reads 1: looks again
  look(); // call 2 finds nothing (2 comes after it); clear; call 3 reads 2
  assert.deepEqual([after[2], seen], [QUIET, [1, 2]]);
  assert.equal(pending(), 1, 'it found one after the clear: it looks again');
  look(); // call 4 finds nothing; clear; call 5 finds nothing, 4 comes after it
  assert.equal(after[4], RANG, 'an entry after the clear rings the bell (its message makes the main thread look)');
  assert.equal(pending(), 0);
  message();
  look();
  assert.deepEqual(seen, [1, 2, 4]);
});

test('a full ring takes nothing more (FULL: the entry goes in a message) until the main thread reads', () => {
  const { bell } = manualBell();
  const { worker, main } = ring(bell);
  let written = 0;
  while (worker.write(written, 200, 0, 0) !== FULL) written++;
  assert.equal(written, 1 << 14);
  const read = drain(main);
  assert.equal(read.length, written);
  assert.deepEqual(read.at(-1), [written - 1, 200, 0, 0]);
  assert.equal(worker.write(0, 200, 0, 0), QUIET, 'the bell is still rung: the main thread looks again');
});

test('readAll() reads every ring at once; a ring deleted is not read', () => {
  const { bell } = manualBell();
  const a = ring(bell);
  const b = ring(bell);
  const readB = () => b.main.read(() => {});
  bell.add(() => a.main.read(() => {}));
  bell.add(readB);
  a.worker.write(1, 200, 0, 0);
  b.worker.write(2, 200, 0, 0);
  assert.equal(bell.readAll(), 2);
  bell.delete(readB);
  b.worker.write(3, 200, 0, 0);
  assert.equal(bell.readAll(), 0);
});

test('any message a thread posts rings the bell (Bell.listen): a look comes, whatever the message, and the handler gets it', () => {
  const { bell, look, pending, message, handled } = manualBell();
  const { worker, main } = ring(bell);
  const seen: number[] = [];
  bell.add(() => main.read((a) => seen.push(a)));
  // A report rang the bell; the thread's message this turn is not the empty 'observed' but a key to
  // resolve (or a log line, a 200 held for the disk): it must count as the bell all the same.
  assert.equal(worker.write(1, 200, 0, 0), RANG);
  message(['a key to resolve']);
  assert.deepEqual(handled, [['a key to resolve']], 'the handler got the message');
  assert.equal(pending(), 1, 'and a look is due');
  look();
  assert.deepEqual(seen, [1]);
  look(); // found nothing: cleared
  assert.equal(pending(), 0);
  assert.equal(worker.write(2, 200, 0, 0), RANG, 'the bell was cleared: the next report rings it again');
  for (let i = 0; i < 3; i++) message({ log: i });
  assert.equal(pending(), 1, 'one look however many messages');
  look();
  assert.deepEqual(seen, [1, 2]);
});
