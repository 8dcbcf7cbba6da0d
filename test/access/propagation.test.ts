// Changes made by CLI commands reach a running gate on the same state directory without a restart
// (CONTRACT 4). The 2 s bound is a timing claim: each wait here only fails a hung propagation.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { openFileGate } from '../helpers/gate.ts';
import { runInProcess, tempState, within } from '../helpers/state.ts';

/** Generous: the store checks every 500 ms, a busy machine may take far longer; only a hang fails. */
const WAIT_MS = 20_000;

async function cli(group: string, args: string[], stdin = ''): Promise<string> {
  const r = await runInProcess([group, ...args], stdin);
  assert.equal(r.code, 0, r.err);
  return r.out;
}

test('revoke, rotate, set-plan and create via the CLI -> seen by a running gate, no restart', async () => {
  const state = await tempState(after);
  const gate = await openFileGate({ state, plans: { free: 1, starter: 5 } });
  try {
    // Admits and gives the unit back (a 404 is not counted), so probing does not use the quota up.
    const accepted = (key: string) => {
      const a = gate.admit(key);
      if (a.ok) gate.settle(a.ticket, 404);
      return a.ok;
    };
    const created = JSON.parse(await cli('accounts', ['create', '--state', state, '--email', 'a@b.io', '--plan', 'free', '--password-stdin', '--json'], 'pw\n'));
    await within(WAIT_MS, () => accepted(created.key));

    // free: 1 request a month. Use it, then the next is a 429 until the plan grows.
    const first = gate.admit(created.key);
    assert.ok(first.ok);
    gate.settle(first.ticket, 200);
    assert.equal(gate.admit(created.key).ok, false);
    await cli('accounts', ['set-plan', '--state', state, '--email', 'a@b.io', '--plan', 'starter']);
    await within(WAIT_MS, () => {
      const a = gate.admit(created.key);
      if (a.ok) gate.settle(a.ticket, 200);
      return a.ok;
    });
    assert.equal((await gate.usage.get('a@b.io')).used, 2, 'the month count carries over a plan change');

    const rotated = JSON.parse(await cli('keys', ['rotate', '--state', state, '--email', 'a@b.io', '--password-stdin', '--json'], 'pw\n'));
    await within(WAIT_MS, () => !accepted(created.key) && accepted(rotated.key));

    await cli('keys', ['revoke', '--state', state, '--email', 'a@b.io']);
    await within(WAIT_MS, () => !accepted(rotated.key));
    const revoked = gate.admit(rotated.key);
    assert.equal(revoked.ok ? 200 : revoked.status, 401);
  } finally {
    await gate.close();
  }
});

test('changes through gate.accounts (embedding API) -> effective immediately', async () => {
  const gate = await openFileGate({ state: 'memory', scrypt: { N: 1024, r: 8, p: 1 } });
  const { key } = await gate.accounts.create({ email: 'a@b.io', plan: 'free', password: 'pw' });
  assert.ok(gate.admit(key).ok);
  await gate.accounts.revokeKey('a@b.io');
  assert.equal(gate.admit(key).ok, false);
  await gate.close();
});
