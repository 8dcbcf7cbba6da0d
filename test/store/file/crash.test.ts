// SIGKILL under load, repeatedly (some during online compaction): complete lines parse, torn tails are dropped, flushed counts survive.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AccountStore } from '../../../src/store/file/account-store.ts';
import { openFileGate } from '../../helpers/gate.ts';
import { captureLog, FAST_SCRYPT, tempState } from '../../helpers/state.ts';

const CHILD = new URL('./fixtures/crash-child.ts', import.meta.url).pathname;
const EMAIL = 'load@b.io';
const ITERATIONS = 5;

/** Runs the child until `killAfterMs` after it is ready, kills it with SIGKILL, returns its report. */
function runAndKill(state: string, key: string, killAfterMs: number, compactFloor: number | null): Promise<{ flushed: number; planned: number; ready: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, CRASH_STATE: state, CRASH_KEY: key, CRASH_EMAIL: EMAIL, ...(compactFloor ? { CRASH_COMPACT_FLOOR: String(compactFloor) } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | null = null;
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000); // never hang the suite
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      if (!timer && out.includes('ready ')) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`child exited with ${code}: ${err}`));
      const last = (word: string) => {
        const values = [...out.matchAll(new RegExp(`^${word} (\\d+)$`, 'gm'))].map((m) => Number(m[1]));
        return values.length ? values[values.length - 1]! : -1;
      };
      resolve({ ready: last('ready'), flushed: last('flushed'), planned: last('planned') });
    });
  });
}

test(`SIGKILL at random times, ${ITERATIONS} times -> complete lines parse, flushed <= recovered <= planned`, async () => {
  const state = await tempState(after);
  const store = await AccountStore.open({ state, scrypt: FAST_SCRYPT });
  const { key } = await store.create({ email: EMAIL, plan: 'enterprise', password: 'pw' });
  let recovered = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const killAfterMs = 150 + Math.floor(Math.random() * 450);
    // Odd runs compact online every few dozen flushes, so kills also land inside a rewrite.
    const run = await runAndKill(state, key, killAfterMs, i % 2 === 1 ? 1024 : null);
    assert.equal(run.ready, recovered, 'the child started from the recovered count');
    assert.ok(run.planned >= 0, 'the child did some work');

    const dir = join(state, 'usage');
    for (const name of (await readdir(dir)).filter((n) => n.endsWith('.jsonl'))) {
      const text = await readFile(join(dir, name), 'utf8');
      const complete = text.slice(0, text.lastIndexOf('\n') + 1);
      for (const line of complete.split('\n').slice(0, -1)) JSON.parse(line); // throws on a bad complete line
    }

    const log = captureLog();
    const gate = await openFileGate({ state, log, clock: () => Date.parse('2026-11-22T10:00:00.000Z') });
    recovered = (await gate.usage.get(EMAIL)).used;
    await gate.close();
    const text = await readFile(join(dir, 'usage-2026-11.jsonl'), 'utf8');
    assert.ok(text.length === 0 || text.endsWith('\n'), 'a torn tail was cut at start');
    assert.ok(recovered >= Math.max(run.flushed, run.ready), `recovered ${recovered} < flushed ${run.flushed}`);
    assert.ok(recovered <= Math.max(run.planned, run.ready), `recovered ${recovered} > planned ${run.planned}`);
  }
  assert.ok(recovered > 0);
});
