// The usage log: counters survive a restart, torn tails are dropped, bad middles stop the start, ENOSPC is survived.
import assert from 'node:assert/strict';
import { cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openFileGate, readUsageFiles, storeMetric, type FileGate as Gate, type FileGateOptions as GateOptions } from '../../helpers/gate.ts';
import type { CompactStage } from '../../../src/store/file/usage-compact.ts';
import { writeFully, type LogWrite } from '../../../src/store/file/usage-log.ts';
import { LogScanner, UsageLogError } from '../../../src/store/file/usage-replay.ts';
import { captureLog, FAST_SCRYPT, tempState, within } from '../../helpers/state.ts';

const EMAILS = ['a@b.io', 'c@d.io'];

/** A gate with two accounts on `state`; returns their keys. */
async function setup(state: string, clock: () => number, options: Partial<GateOptions> = {}) {
  // These tests drive the log's own mechanics (ticks, flushes, compaction): no request waits for a commit.
  const gate = await openFileGate({ state, clock, scrypt: FAST_SCRYPT, plans: { free: 1000 }, durability: 'interval', ...options });
  const keys = [];
  for (const email of EMAILS) keys.push((await gate.accounts.create({ email, plan: 'free', password: 'pw' })).key);
  return { gate, keys };
}

function traffic(gate: Gate, key: string, n: number, every404 = 5): void {
  for (let i = 0; i < n; i++) {
    const a = gate.admit(key);
    if (a.ok) gate.settle(a.ticket, i % every404 === 0 ? 404 : 200);
  }
}

const reports = (gate: Gate) => Promise.all(EMAILS.map((e) => gate.usage.get(e)));

test('graceful close + reopen -> every counter equal (two months, two days, sets)', async () => {
  const state = await tempState(after);
  let now = Date.parse('2026-11-30T23:59:00.000Z');
  const { gate, keys } = await setup(state, () => now);
  traffic(gate, keys[0]!, 37);
  await gate.flush();
  traffic(gate, keys[1]!, 11);
  await gate.usage.set('c@d.io', 500);
  traffic(gate, keys[1]!, 3);
  const novemberBefore = await reports(gate);
  now = Date.parse('2026-12-01T08:00:00.000Z');
  traffic(gate, keys[0]!, 8);
  traffic(gate, keys[1]!, 9);
  const decemberBefore = await reports(gate);
  await gate.close();
  assert.deepEqual((await readdir(join(state, 'usage'))).filter((n) => n.endsWith('.jsonl')).sort(), ['usage-2026-11.jsonl', 'usage-2026-12.jsonl']);

  const reopened = await openFileGate({ state, clock: () => now, plans: { free: 1000 } });
  assert.deepEqual(await reports(reopened), decemberBefore);
  now = Date.parse('2026-11-30T23:59:30.000Z');
  assert.deepEqual(await reports(reopened), novemberBefore);
  assert.equal(novemberBefore[1]!.used, 502, 'set to 500, then 2 more 200s');
  await reopened.close();
});

/** A small real log: several ticks, so several lines. */
async function smallLog(): Promise<{ text: Buffer; state: string }> {
  const state = await tempState(after);
  const now = Date.parse('2026-11-22T10:00:00.000Z');
  const { gate, keys } = await setup(state, () => now);
  for (let tick = 0; tick < 5; tick++) {
    traffic(gate, keys[tick % 2]!, 3 + tick);
    await gate.flush();
  }
  await gate.close();
  return { text: await readFile(join(state, 'usage', 'usage-2026-11.jsonl')), state };
}

test('loader on the log cut at every byte offset -> never throws, drops only the torn tail, count monotone', async () => {
  const { text } = await smallLog();
  const lines = text.toString().split('\n').filter(Boolean);
  assert.ok(lines.length >= 5, `expected several lines, got ${lines.length}`);
  let previous = -1;
  for (let cut = 0; cut <= text.length; cut++) {
    const piece = text.subarray(0, cut);
    let successes = 0;
    const scanner = new LogScanner('usage-2026-11.jsonl', '2026-11', (r) => ('s' in r ? (successes += r.s) : 0));
    // Feed in two chunks split at an arbitrary place, as the streaming reader may.
    scanner.push(piece.subarray(0, cut >> 1));
    scanner.push(piece.subarray(cut >> 1));
    const result = scanner.end();
    const complete = piece.lastIndexOf(10) + 1;
    assert.equal(result.validBytes, complete, `cut at ${cut}`);
    assert.equal(result.tornBytes, cut - complete);
    assert.ok(successes >= previous, `count went down at ${cut}`);
    previous = successes;
  }
});

/** Successes and rejections per account id, summed over the complete lines of a log. */
function sumLines(text: Buffer): Map<string, { success: number; rejected: number }> {
  const sums = new Map<string, { success: number; rejected: number }>();
  for (const line of text.subarray(0, text.lastIndexOf(10) + 1).toString().split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as { a: string; s: number; r: number };
    const sum = sums.get(r.a) ?? { success: 0, rejected: 0 };
    sums.set(r.a, { success: sum.success + r.s, rejected: sum.rejected + r.r });
  }
  return sums;
}

// Cut 1 byte off: the last record is whole but lacks its newline, still torn; 7 bytes: a broken record.
for (const cutOff of [1, 7]) {
  test(`torn last line on disk (${cutOff} bytes cut) -> truncated at start with a warning; counters = complete lines`, async () => {
    const { text, state } = await smallLog();
    const file = join(state, 'usage', 'usage-2026-11.jsonl');
    const cut = text.subarray(0, text.length - cutOff);
    const expected = sumLines(cut);
    assert.notDeepEqual(expected, sumLines(text), 'the torn line held counts');
    await writeFile(file, cut);
    const log = captureLog();
    const gate = await openFileGate({ state, log, clock: () => Date.parse('2026-11-22T10:00:00.000Z') });
    for (const [id, { success, rejected }] of expected) {
      const report = await gate.usage.of((await gate.accounts.get(id))!);
      assert.equal(report.used, success, id);
      assert.deepEqual(report.daily, [{ date: '2026-11-22', success, rejected }], id);
    }
    await gate.close();
    const repaired = await readFile(file);
    assert.equal(repaired.length, cut.lastIndexOf(10) + 1);
    assert.ok(repaired.toString().endsWith('\n'));
    const warning = log.lines.map((l) => JSON.parse(l)).find((l) => l.level === 'warn' && /torn/.test(l.msg));
    assert.ok(warning, log.lines.join('\n'));
    assert.equal(warning.file, file);
  });
}

test('garbage as the last complete line (zeros after a power loss) -> dropped like a torn tail', async () => {
  const { text, state } = await smallLog();
  const file = join(state, 'usage', 'usage-2026-11.jsonl');
  await writeFile(file, Buffer.concat([text, Buffer.alloc(40), Buffer.from('\n')]));
  const gate = await openFileGate({ state });
  await gate.close();
  assert.deepEqual(await readFile(file), text);
});

test('bad line in the middle -> start refused with an error naming the file and line', async () => {
  const { text, state } = await smallLog();
  const file = join(state, 'usage', 'usage-2026-11.jsonl');
  const lines = text.toString().split('\n');
  lines.splice(2, 0, '{"a":"acc_x","d":"2026-11-22","s":-1,"r":0}');
  await writeFile(file, lines.join('\n'));
  await assert.rejects(openFileGate({ state }), (err: unknown) => {
    assert.ok(err instanceof UsageLogError);
    assert.equal(err.line, 3);
    assert.ok(err.message.startsWith(`${file}:3:`), err.message);
    return true;
  });
  // The refused start must not hold the writer lock.
  await writeFile(file, text);
  await (await openFileGate({ state })).close();
});

test('a second gate on the same state directory -> refused (one writer)', async () => {
  const state = await tempState(after);
  const first = await openFileGate({ state });
  await assert.rejects(openFileGate({ state }), /in use/);
  await first.close();
  await (await openFileGate({ state })).close();
});

test('ENOSPC on write (after a partial write) -> keeps admitting, logs, retries; nothing lost, no half line', async () => {
  const state = await tempState(after);
  let failures = 3;
  const write: LogWrite = async (fh, data, position) => {
    if (failures > 0) {
      failures--;
      await fh.write(data, 0, Math.min(5, data.length), position); // a partial write, then the disk is full
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    return writeFully(fh, data, position);
  };
  const log = captureLog();
  const now = Date.parse('2026-11-22T10:00:00.000Z');
  const gate = await openFileGate({ state, log, clock: () => now, flushIntervalMs: 20, usageLogWrite: write, scrypt: FAST_SCRYPT, durability: 'interval' });
  const { key } = await gate.accounts.create({ email: 'a@b.io', plan: 'pro', password: 'pw' });
  traffic(gate, key, 10);
  await assert.rejects(gate.flush(), /ENOSPC/);
  traffic(gate, key, 10); // still admitting while the disk is full
  // Waits for the retry itself (20 ms timer); the deadline only fails a timer that never retries.
  await within(30_000, () => failures === 0);
  assert.ok(log.lines.some((l) => /"level":"error"/.test(l) && /ENOSPC/.test(l)), 'the failure was logged');
  traffic(gate, key, 10);
  const before = (await gate.usage.get('a@b.io'));
  await gate.close();
  const text = await readFile(join(state, 'usage', 'usage-2026-11.jsonl'), 'utf8');
  for (const line of text.split('\n').slice(0, -1)) JSON.parse(line);
  const reopened = await openFileGate({ state, clock: () => now });
  assert.deepEqual(await reopened.usage.get('a@b.io'), before);
  assert.equal(before.used, 24);
  await reopened.close();
});

test('a log of many ticks -> compacted at start to one line per account and day, same counters', async () => {
  const state = await tempState(after);
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  const { gate, keys } = await setup(state, () => now);
  for (let tick = 0; tick < 120; tick++) {
    if (tick === 60) now += 86_400_000; // a second day
    traffic(gate, keys[tick % 2]!, 2);
    if (tick === 90) await gate.usage.set('a@b.io', 7);
    await gate.flush();
  }
  const before = await reports(gate);
  await gate.close();
  const file = join(state, 'usage', 'usage-2026-11.jsonl');
  assert.ok((await readFile(file, 'utf8')).split('\n').length > 120);
  const log = captureLog();
  const reopened = await openFileGate({ state, log, clock: () => now, plans: { free: 1000 } });
  assert.deepEqual(await reports(reopened), before);
  await reopened.close();
  const lines = (await readFile(file, 'utf8')).trim().split('\n');
  assert.equal(lines.length, 5, '2 accounts x 2 days + 1 set line');
  assert.ok(log.lines.some((l) => l.includes('compacted')));
  const again = await openFileGate({ state, clock: () => now, plans: { free: 1000 } });
  assert.deepEqual(await reports(again), before);
  await again.close();
});

const MONTH_FILE = (state: string) => join(state, 'usage', 'usage-2026-11.jsonl');
const FLOOR = 2048;
const MANUAL = 3_600_000; // a flush interval that never fires: the tests flush themselves

test('many ticks with a 2 KB floor -> compacted online, file stays bounded, replay = memory at every step', async () => {
  const state = await tempState(after);
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  const log = captureLog();
  // Requests keep arriving while a flush writes: the live counters run ahead of the file, and the
  // compact form must be the file's, or they would be counted twice.
  let live: { gate: Gate; keys: string[] } | null = null;
  const write: LogWrite = (fh, data, position) => {
    if (live) traffic(live.gate, live.keys[1]!, 2);
    return writeFully(fh, data, position);
  };
  const { gate, keys } = (live = await setup(state, () => now, { log, usageLogCompactFloorBytes: FLOOR, flushIntervalMs: MANUAL, usageLogWrite: write }));
  let largest = 0;
  let appended = 0;
  for (let tick = 0; tick < 400; tick++) {
    if (tick === 200) now += 86_400_000; // a second day
    traffic(gate, keys[tick % 2]!, 3);
    traffic(gate, keys[(tick + 1) % 2]!, 1);
    if (tick === 250) await gate.usage.set('a@b.io', 7);
    const size = await stat(MONTH_FILE(state)).then((s) => s.size, () => 0);
    await gate.flush();
    const after = (await stat(MONTH_FILE(state))).size;
    appended += Math.max(0, after - size);
    largest = Math.max(largest, after);
    if (tick % 50 === 49) {
      live = null;
      await gate.flush();
      const files = await readUsageFiles(state, { clock: () => now, plans: { free: 1000 } });
      assert.deepEqual(await Promise.all(EMAILS.map((e) => files.get(e))), await reports(gate), `tick ${tick}`);
      live = { gate, keys };
    }
  }
  const compactions = log.lines.filter((l) => l.includes('usage log compacted')).length;
  assert.ok(compactions >= 10, `${compactions} compactions`);
  // A tick appends two short lines; compaction runs as soon as a flush passes the floor.
  assert.ok(largest < FLOOR + 400, `the file reached ${largest} bytes`);
  assert.ok(appended > 20 * FLOOR, `only ${appended} bytes were appended in all`);
  live = null;
  const before = await reports(gate);
  await gate.close();
  const reopened = await openFileGate({ state, clock: () => now, plans: { free: 1000 } });
  assert.deepEqual(await reports(reopened), before);
  // Set to 7 at tick 250; then 74 even ticks of 3 requests (the first a 404), odd ticks a lone 404.
  assert.equal(before[0]!.used, 7 + 74 * 2);
  await reopened.close();
});

/** Copies the state directory as a crash would leave it (everything is fsynced at the hook's stages). */
async function crashImage(state: string, stage: string): Promise<string> {
  const copy = `${state}-crash-${stage}`;
  after(() => import('node:fs/promises').then((fs) => fs.rm(copy, { recursive: true, force: true })));
  await cp(state, copy, { recursive: true, filter: (src) => !src.endsWith('.lock') });
  return copy;
}

test('crash between temp write and rename, and between rename and directory fsync -> both replay to the same counters', async () => {
  const state = await tempState(after);
  const now = Date.parse('2026-11-22T10:00:00.000Z');
  const images = new Map<CompactStage, { copy: string; expected: Awaited<ReturnType<typeof reports>>; names: string[] }>();
  let gate: Gate | null = null;
  const hook = async (stage: CompactStage) => {
    if (images.has(stage)) return;
    const names = (await readdir(join(state, 'usage'))).filter((n) => n.includes('jsonl')).sort();
    images.set(stage, { copy: await crashImage(state, stage), expected: await reports(gate!), names });
  };
  const opened = await setup(state, () => now, { usageLogCompactFloorBytes: FLOOR, usageLogCompactHook: hook, flushIntervalMs: MANUAL });
  gate = opened.gate;
  for (let tick = 0; tick < 200 && images.size < 2; tick++) {
    traffic(gate, opened.keys[tick % 2]!, 2 + (tick % 3));
    await gate.flush();
  }
  assert.deepEqual([...images.keys()], ['written', 'renamed']);
  assert.deepEqual(images.get('written')!.names, ['.usage-2026-11.jsonl.compact', 'usage-2026-11.jsonl'], 'the temp file beside the full log');
  assert.deepEqual(images.get('renamed')!.names, ['usage-2026-11.jsonl']);
  for (const [stage, { copy, expected }] of images) {
    const recovered = await openFileGate({ state: copy, clock: () => now, plans: { free: 1000 } });
    assert.deepEqual(await reports(recovered), expected, stage);
    await recovered.close();
    assert.deepEqual((await readdir(join(copy, 'usage'))).filter((n) => n.includes('jsonl')), ['usage-2026-11.jsonl'], 'the stale temp file was removed');
  }
  await gate.close();
});

for (const stage of ['written', 'renamed'] as const) {
  test(`compaction failing at "${stage}" -> a warning, appends go on to the file that has the name, nothing lost`, async () => {
    const state = await tempState(after);
    const now = Date.parse('2026-11-22T10:00:00.000Z');
    const log = captureLog();
    let failures = 0;
    const hook = (at: CompactStage) => {
      if (at === stage && failures++ === 0) throw new Error(`injected failure at ${at}`);
    };
    const { gate, keys } = await setup(state, () => now, { log, usageLogCompactFloorBytes: FLOOR, usageLogCompactHook: hook, flushIntervalMs: MANUAL });
    for (let tick = 0; tick < 300; tick++) {
      traffic(gate, keys[tick % 2]!, 3);
      await gate.flush();
    }
    assert.equal(failures > 1, true, 'compaction was tried again later');
    assert.ok(log.lines.some((l) => /"level":"warn"/.test(l) && l.includes(`injected failure at ${stage}`)), log.lines.join('\n'));
    assert.deepEqual((await readdir(join(state, 'usage'))).filter((n) => n.includes('jsonl')), ['usage-2026-11.jsonl']);
    const before = await reports(gate);
    assert.deepEqual(await (await readUsageFiles(state, { clock: () => now, plans: { free: 1000 } })).get('a@b.io'), before[0]);
    await gate.close();
    const reopened = await openFileGate({ state, clock: () => now, plans: { free: 1000 } });
    assert.deepEqual(await reports(reopened), before);
    await reopened.close();
  });
}

test('usage log metrics -> pending lines, lag, failures; none in memory', async () => {
  const memory = await openFileGate({ state: 'memory' });
  assert.deepEqual(memory.status().metrics, []);
  await memory.close();

  const state = await tempState(after);
  let fail = false;
  const write: LogWrite = async (fh, data, position) => {
    if (fail) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    return writeFully(fh, data, position);
  };
  const now = Date.parse('2026-11-22T10:00:00.000Z');
  const { gate, keys } = await setup(state, () => now, { usageLogWrite: write, flushIntervalMs: MANUAL });
  const status = () => ({ pending: storeMetric(gate, 'pending_records'), failures: storeMetric(gate, 'flush_failures_total'), commits: storeMetric(gate, 'commits_total') });
  assert.deepEqual(status(), { pending: 0, failures: 0, commits: 0 });
  traffic(gate, keys[0]!, 10);
  traffic(gate, keys[1]!, 10);
  assert.deepEqual(status(), { pending: 2, failures: 0, commits: 0 }, 'one line per account and day');
  await gate.flush();
  assert.deepEqual(status(), { pending: 0, failures: 0, commits: 1 });
  assert.equal(storeMetric(gate, 'lag_seconds'), 0);
  assert.equal(storeMetric(gate, 'committed_records_total'), 2);
  fail = true;
  traffic(gate, keys[0]!, 1);
  await assert.rejects(gate.flush(), /EIO/);
  traffic(gate, keys[1]!, 1);
  assert.deepEqual(status(), { pending: 2, failures: 1, commits: 1 }, 'the failed line waits, with the new one');
  fail = false;
  await gate.flush();
  assert.deepEqual(status(), { pending: 0, failures: 1, commits: 2 });
  await gate.close();
});
