// The file store's dashboard sessions on disk: they survive a reopen, the file is owner-only and
// replaced atomically, a seenMs refresh waits for company, expired sessions are purged.
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileSessions, SESSIONS_FILE } from '../../../src/store/file/sessions.ts';
import type { SessionRecord } from '../../../src/store/types.ts';
import { captureLog, tempState } from '../../helpers/state.ts';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const record = (id: string, over: Partial<SessionRecord> = {}): SessionRecord => ({
  id, account: 'acc_1', createdMs: T0, seenMs: T0, csrf: `csrf-${id}`, expiresMs: T0 + 1_800_000, ...over,
});
const onDisk = async (state: string): Promise<string[]> =>
  (JSON.parse(await readFile(join(state, SESSIONS_FILE), 'utf8')) as { sessions: SessionRecord[] }).sessions.map((s) => s.id);

test('a session put before close is there after a reopen; the file is 0600', async () => {
  const state = await tempState(after);
  const first = new FileSessions({ state, clock: () => T0 });
  await first.put(record('a'));
  await first.put(record('b'));
  await first.delete('b');
  await first.close();
  assert.equal((await stat(join(state, SESSIONS_FILE))).mode & 0o777, 0o600);
  const second = new FileSessions({ state, clock: () => T0 });
  assert.deepEqual(await second.get('a'), record('a'));
  assert.equal(await second.get('b'), null);
  await second.close();
});

test('a refresh of seenMs alone is not written at once, but by close; a new csrf is written at once', async () => {
  const state = await tempState(after);
  const sessions = new FileSessions({ state, clock: () => T0 });
  await sessions.put(record('a'));
  const before = await readFile(join(state, SESSIONS_FILE), 'utf8');
  await sessions.put(record('a', { seenMs: T0 + 60_000, expiresMs: T0 + 1_860_000 }));
  assert.equal(await readFile(join(state, SESSIONS_FILE), 'utf8'), before, 'no write for a refresh');
  assert.equal((await sessions.get('a'))?.seenMs, T0 + 60_000, 'yet this process sees it');
  await sessions.close();
  const reopened = new FileSessions({ state, clock: () => T0 });
  assert.equal((await reopened.get('a'))?.seenMs, T0 + 60_000);
  await reopened.put(record('a', { csrf: 'rotated' }));
  assert.equal((JSON.parse(await readFile(join(state, SESSIONS_FILE), 'utf8')) as { sessions: SessionRecord[] }).sessions[0]!.csrf, 'rotated');
  await reopened.close();
});

test('expired sessions are dropped by the next write and never loaded; many changes at once all land', async () => {
  const state = await tempState(after);
  let now = T0;
  const sessions = new FileSessions({ state, clock: () => now });
  await Promise.all(Array.from({ length: 40 }, (_, i) => sessions.put(record(`s${i}`, { expiresMs: T0 + (i < 20 ? 1000 : 3_600_000) }))));
  assert.equal((await onDisk(state)).length, 40);
  now = T0 + 2000;
  await sessions.put(record('new', { expiresMs: now + 1000 }));
  assert.equal((await onDisk(state)).length, 21, 'the 20 expired ones purged');
  await sessions.close();
  now = T0 + 5000;
  const reopened = new FileSessions({ state, clock: () => now });
  assert.equal(await reopened.get('new'), null);
  assert.ok(await reopened.get('s25'));
  await reopened.close();
});

test('a damaged sessions file costs a login, not the start: a warning, and no sessions', async () => {
  const state = await tempState(after);
  await writeFile(join(state, SESSIONS_FILE), '{"version":1,"sessions":[{"id":', { mode: 0o600 });
  const log = captureLog();
  const sessions = new FileSessions({ state, clock: () => T0, log });
  assert.equal(await sessions.get('a'), null);
  assert.match(log.lines.join('\n'), /sessions file unreadable/);
  await sessions.put(record('a'));
  assert.deepEqual(await onDisk(state), ['a']);
  await sessions.close();
});

test('memory: nothing on disk, the same behaviour', async () => {
  // Run in an empty directory holding a folder named `memory`: a store that took 'memory' for a path
  // (relative to the working directory) would write there, or beside it.
  const cwd = await tempState(after);
  await mkdir(join(cwd, 'memory'));
  const home = process.cwd();
  process.chdir(cwd);
  try {
    let now = T0;
    const sessions = new FileSessions({ state: 'memory', clock: () => now });
    await sessions.put(record('a'));
    await sessions.put(record('b'));
    await sessions.put(record('b', { seenMs: T0 + 1000 })); // a lazy refresh, written at close on disk
    await sessions.delete('b');
    assert.ok(await sessions.get('a'));
    now = T0 + 1_800_000;
    assert.equal(await sessions.get('a'), null, 'expired at expiresMs');
    await sessions.close();
  } finally {
    process.chdir(home);
  }
  assert.deepEqual(await readdir(cwd, { recursive: true }), ['memory'], 'nothing written');
});
