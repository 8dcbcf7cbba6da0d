// CONTRACT 4: no key in clear text in any file under the state directory or in any log line.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeFully, type LogWrite } from '../../src/store/file/usage-log.ts';
import { openFileGate } from '../helpers/gate.ts';
import { captureLog, FAST_SCRYPT, runInProcess, tempState } from '../helpers/state.ts';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

test('a full life cycle -> no issued key (nor its secret part) in state files, logs or stderr', async () => {
  const state = await tempState(after);
  const log = captureLog();
  let failOnce = true;
  const write: LogWrite = (fh, data, position) => {
    if (failOnce) {
      failOnce = false;
      return Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
    }
    return writeFully(fh, data, position);
  };
  const gate = await openFileGate({ state, log, scrypt: FAST_SCRYPT, plans: { free: 5 }, usageLogWrite: write, flushIntervalMs: 20 });
  const issued: string[] = [];
  const stderr: string[] = [];
  const cli = async (group: string, args: string[], stdin = '') => {
    const r = await runInProcess([group, ...args, '--state', state], stdin);
    stderr.push(r.err);
    return r.out;
  };

  issued.push((await gate.accounts.create({ email: 'a@b.io', plan: 'free', password: 'pw' })).key);
  issued.push(JSON.parse(await cli('accounts', ['create', '--email', 'c@d.io', '--plan', 'pro', '--password-stdin', '--json'], 'pw\n')).key);
  for (let i = 0; i < 8; i++) for (const key of issued) {
    const a = gate.admit(key);
    if (a.ok) gate.settle(a.ticket, i % 3 ? 200 : 404);
  }
  issued.push(JSON.parse(await cli('keys', ['rotate', '--email', 'c@d.io', '--password-stdin', '--json'], 'pw\n')).key);
  await cli('keys', ['reveal', '--email', 'c@d.io', '--password-stdin'], 'wrong\n');
  await cli('keys', ['create', '--email', 'c@d.io', '--password-stdin'], 'pw\n'); // refused: a key is active
  await cli('keys', ['revoke', '--email', 'a@b.io']);
  for (const key of issued) gate.admit(key); // 401s with once-valid keys
  await cli('keys', ['list']);
  await cli('accounts', ['list']);
  await cli('usage', ['--email', 'a@b.io']);
  await gate.flush().catch(() => {});
  await gate.close();

  const haystacks: [string, string][] = [];
  for (const file of await filesUnder(state)) haystacks.push([file, await readFile(file, 'latin1')]);
  log.lines.forEach((line, i) => haystacks.push([`log line ${i}`, line]));
  stderr.forEach((text, i) => haystacks.push([`stderr ${i}`, text]));
  assert.ok(haystacks.some(([name]) => name.endsWith('.jsonl')), 'the usage log was written');
  assert.ok(log.lines.some((l) => l.includes('ENOSPC')), 'the failure path was logged too');
  for (const key of issued) {
    const secret = key.slice(10); // what follows the displayed prefix
    for (const [name, text] of haystacks) assert.ok(!text.includes(secret), `part of a key found in ${name}`);
  }
});
