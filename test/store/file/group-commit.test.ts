// Strict durability (CONTRACT 4, issue 13): a 200 is released only once its usage record is on disk,
// many requests share one write + fdatasync, a refusing disk turns waiting 200s into 503s that are
// withdrawn from the count, and 429s never wait.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { QuotaTicket } from '../../../src/store/types.ts';
import { StoreUnavailableError } from '../../../src/store/types.ts';
import { writeFully, type LogWrite } from '../../../src/store/file/usage-log.ts';
import { openFileGate, storeMetric, type FileGate, type FileGateOptions } from '../../helpers/gate.ts';
import { tempState } from '../../helpers/state.ts';

const NOW = Date.parse('2026-11-23T10:00:00.000Z');
const logFile = (state: string) => join(state, 'usage', 'usage-2026-11.jsonl');

/** Successes the file holds right now, for one account. */
async function successesOnDisk(state: string): Promise<number> {
  const text = await readFile(logFile(state), 'utf8').catch(() => '');
  let n = 0;
  for (const line of text.split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as { s?: number; x?: number };
    n += (r.s ?? 0) - (r.x ?? 0);
  }
  return n;
}

async function gateWith(state: string, plan: string, options: Partial<FileGateOptions> = {}): Promise<{ gate: FileGate; key: string }> {
  const gate = await openFileGate({ state, clock: () => NOW, flushIntervalMs: 3_600_000, ...options });
  const { key } = await gate.accounts.create({ email: 'a@b.io', plan, password: 'pw' });
  return { gate, key };
}

function admitted(gate: FileGate, key: string): QuotaTicket {
  const a = gate.admit(key);
  assert.ok(a.ok, 'admitted');
  return a.ticket;
}

test('strict: 200 requests settled at once -> each released only once its record is on disk, in a few commits', async () => {
  const state = await tempState(after);
  let writes = 0;
  const write: LogWrite = async (fh, data, position) => {
    writes++;
    await new Promise((r) => setTimeout(r, 5)); // a disk that takes its time
    return writeFully(fh, data, position);
  };
  const { gate, key } = await gateWith(state, 'free', { usageLogWrite: write, plans: { free: 1000 } });
  const onDiskWhenReleased: number[] = [];
  const waits = Array.from({ length: 200 }, () => {
    const wait = gate.settle(admitted(gate, key), 200);
    assert.ok(wait instanceof Promise, 'a finite plan waits under the default durability');
    return wait.then(async () => onDiskWhenReleased.push(await successesOnDisk(state)));
  });
  assert.equal(storeMetric(gate, 'waiting_requests'), 200);
  await Promise.all(waits);
  assert.ok(onDiskWhenReleased.every((n) => n === 200), 'all 200 were on disk before any was released');
  assert.ok(writes <= 3, `one batch, not a write per request (${writes} writes)`);
  assert.equal(storeMetric(gate, 'committed_requests_total'), 200);
  assert.equal(storeMetric(gate, 'waiting_requests'), 0);
  // Requests arriving while a commit is under way form the next batch.
  const first = gate.settle(admitted(gate, key), 200)!;
  await new Promise((r) => setImmediate(r));
  const second = Array.from({ length: 50 }, () => gate.settle(admitted(gate, key), 200)!);
  await first;
  await Promise.all(second);
  assert.equal(await successesOnDisk(state), 251);
  await gate.close();
});

test('durability modes: auto waits for finite plans only, strict for all, interval for none; 429 and non-200 never wait', async () => {
  for (const [durability, plan, waits] of [
    ['auto', 'free', true],
    ['auto', 'enterprise', false],
    ['strict', 'enterprise', true],
    ['interval', 'free', false],
  ] as const) {
    const state = await tempState(after);
    const { gate, key } = await gateWith(state, plan, { durability, plans: { free: 1 } });
    assert.equal(gate.settle(admitted(gate, key), 404), null, 'a 404 gives its unit back without waiting');
    const wait = gate.settle(admitted(gate, key), 200);
    assert.equal(wait instanceof Promise, waits, `${durability} / ${plan}`);
    await wait;
    if (plan === 'free') assert.equal(gate.admit(key).ok, false, 'a 429 is answered at once, without a Promise');
    await gate.close();
  }
});

test('strict: a disk refusing past the timeout -> 503 (StoreUnavailableError), the unit withdrawn, the log replays to it', async () => {
  const state = await tempState(after);
  let refuse = false;
  const write: LogWrite = async (fh, data, position) => {
    if (refuse) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    return writeFully(fh, data, position);
  };
  const { gate, key } = await gateWith(state, 'free', { usageLogWrite: write, strictTimeoutMs: 300, plans: { free: 10 } });
  await gate.settle(admitted(gate, key), 200);
  refuse = true;
  const started = Date.now();
  const failing = gate.settle(admitted(gate, key), 200)!;
  await assert.rejects(failing, StoreUnavailableError);
  assert.ok(Date.now() - started >= 250, 'it waited for the disk, retrying, before giving up');
  assert.equal(storeMetric(gate, 'withdrawn_total'), 1);
  const during = await gate.usage.get('a@b.io');
  assert.deepEqual([during.used, during.daily[0]!.success, during.daily[0]!.rejected], [1, 1, 1], 'the 503 is a rejection, not a use');
  refuse = false;
  await gate.settle(admitted(gate, key), 200); // the disk is back: this commit carries the withdrawal too
  await gate.close();
  const reopened = await openFileGate({ state, clock: () => NOW, plans: { free: 10 } });
  const replayed = await reopened.usage.get('a@b.io');
  assert.deepEqual([replayed.used, replayed.daily[0]!.success, replayed.daily[0]!.rejected], [2, 2, 1]);
  await reopened.close();
});

test('strict: requests waiting at shutdown on a refusing disk -> rejected, not left hanging', async () => {
  const state = await tempState(after);
  const write: LogWrite = async () => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  const { gate, key } = await gateWith(state, 'free', { usageLogWrite: write });
  const waiting = assert.rejects(gate.settle(admitted(gate, key), 200)!, StoreUnavailableError);
  await assert.rejects(gate.close(), /ENOSPC/);
  await waiting;
});
