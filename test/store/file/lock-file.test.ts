// Lock files: one holder at a time, waiting for a live holder, taking over from a dead one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { acquireLock, LockBusyError } from '../../../src/store/file/lock-file.ts';
import { tempState, within } from '../../helpers/state.ts';

test('held lock -> a second taker waits, then times out with LockBusyError naming the holder', async () => {
  const path = join(await tempState(after), 'x.lock');
  const release = await acquireLock(path, { timeoutMs: 0, staleMs: null });
  await assert.rejects(acquireLock(path, { timeoutMs: 50, staleMs: null }), (err: unknown) => {
    assert.ok(err instanceof LockBusyError);
    assert.match(err.message, new RegExp(`process ${process.pid}`));
    return true;
  });
  await release();
  await (await acquireLock(path, { timeoutMs: 0, staleMs: null }))();
});

test('waiters -> each one gets the lock in turn, never two at once', async () => {
  const path = join(await tempState(after), 'x.lock');
  let inside = 0;
  let max = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      const release = await acquireLock(path, { timeoutMs: 5000, staleMs: null });
      max = Math.max(max, ++inside);
      await new Promise((r) => setTimeout(r, 5));
      inside--;
      await release();
    }),
  );
  assert.equal(max, 1);
});

test('lock of a dead process -> taken over at once', async () => {
  const dir = await tempState(after);
  const path = join(dir, 'x.lock');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  await writeFile(path, JSON.stringify({ pid: dead, host: hostname(), time: Date.now(), nonce: 'dead' }));
  const release = await acquireLock(path, { timeoutMs: 0, staleMs: null });
  await release();
  assert.deepEqual(await readdir(dir), [], 'no lock or breaker file left behind');
});

test('lock untouched for longer than staleMs -> taken over even if its pid is alive (pid reuse)', async () => {
  const path = join(await tempState(after), 'x.lock');
  const parent = process.ppid; // alive, and not us
  await writeFile(path, JSON.stringify({ pid: parent, host: hostname(), time: Date.now(), nonce: 'old' }));
  await assert.rejects(acquireLock(path, { timeoutMs: 0, staleMs: null }), LockBusyError, 'a live pid and no age limit: busy');
  const old = new Date(Date.now() - 60_000);
  await utimes(path, old, old);
  await (await acquireLock(path, { timeoutMs: 0, staleMs: 30_000 }))();
});

test('lock naming this pid but not held here (a restarted container, pid 1 again) -> stale', async () => {
  const path = join(await tempState(after), 'x.lock');
  await writeFile(path, JSON.stringify({ pid: process.pid, host: hostname(), time: Date.now(), nonce: 'previous-life' }));
  const release = await acquireLock(path, { timeoutMs: 0, staleMs: null });
  await assert.rejects(acquireLock(path, { timeoutMs: 0, staleMs: null }), LockBusyError, 'held here: busy');
  await release();
});

test('lock of another host -> busy while its heartbeat is fresh, stale once it stops', async () => {
  const path = join(await tempState(after), 'x.lock');
  await writeFile(path, JSON.stringify({ pid: 1, host: 'elsewhere', time: Date.now(), nonce: 'remote' }));
  await assert.rejects(acquireLock(path, { timeoutMs: 0, staleMs: 60_000 }), LockBusyError);
  const old = new Date(Date.now() - 120_000);
  await utimes(path, old, old);
  await (await acquireLock(path, { timeoutMs: 0, staleMs: 60_000 }))();
});

test('heartbeat -> the holder keeps the file fresh', async () => {
  const path = join(await tempState(after), 'x.lock');
  const release = await acquireLock(path, { timeoutMs: 0, staleMs: 60_000, heartbeatMs: 10 });
  const old = new Date(Date.now() - 120_000);
  await utimes(path, old, old);
  // Waits for the heartbeat itself (a fixed 60 ms was too short on a busy machine); the deadline only fails a hung one.
  await within(20_000, async () => (await stat(path)).mtimeMs > old.getTime() + 60_000);
  await release();
});
