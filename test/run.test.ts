// test/run.ts, what `npm test` runs: a test file past its deadline is reported with its threads'
// stacks and killed with what it started, and the suite fails instead of waiting for CI's limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STARTED_MS } from './helpers/deadlines.ts';
import { EVENTUALLY_MS, within } from './helpers/state.ts';

// The runner under test is a test runner of its own: without this it would report to ours in its
// binary child format.
const { NODE_TEST_CONTEXT: _, ...env } = process.env;

test('a file that never ends -> its stacks, it and its child killed, the run fails', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'celebrity-api-run-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = join(dir, 'child.pid');
  // A short deadline, so the test is quick; on a starved machine (nice 19 at a load of 15) the fixture
  // had not even loaded within 3.6 s, so a run whose fixture never reached its block is run again with
  // four times the deadline. Every assertion is on the run that reached it.
  let r: SpawnSyncReturns<string> | undefined;
  for (const minutes of ['0.06', '0.24', '0.96']) {
    r = spawnSync(process.execPath, ['--import', 'tsx', 'test/run.ts', 'test/helpers/fixtures/stuck.ts'], {
      encoding: 'utf8',
      timeout: STARTED_MS,
      env: { ...env, CELEBRITY_API_TEST_FILE_DEADLINE_MINUTES: minutes, STUCK_CHILD_PID_FILE: pidFile },
    });
    if (existsSync(pidFile)) break;
  }
  assert.ok(r !== undefined && existsSync(pidFile), 'the fixture reached its block within a deadline of 0.96 minutes');
  assert.equal(r.error, undefined, 'the run ended on its own');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /npm test: test\/helpers\/fixtures\/stuck\.ts ran past its deadline of 0\.\d+ minutes; its threads:/);
  assert.match(r.stderr, /futex/i, 'the main thread is shown waiting on its futex');
  assert.match(r.stdout, /^(not ok 1 - |✖ ).*stuck\.ts/m); // TAP on Node 20, spec on 26
  // Killed, not reaped: this machine's init may leave it a zombie.
  const child = Number(readFileSync(pidFile, 'utf8'));
  await within(EVENTUALLY_MS, () => !existsSync(`/proc/${child}`) || /\) Z /.test(readFileSync(`/proc/${child}/stat`, 'latin1')));
});

test('files that end -> the run passes, and only the files named run', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/run.ts', 'test/errors.test.ts'], { encoding: 'utf8', timeout: STARTED_MS, env });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^(# |ℹ )fail 0$/m);
  assert.doesNotMatch(r.stdout, /stuck/);
});
