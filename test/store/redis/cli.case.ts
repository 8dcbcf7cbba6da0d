// The commands an operator runs beside the servers (accounts, keys, usage, state export and import)
// on a cluster or a Sentinel set: the same words as on one Redis, the URL naming the deployment.
import assert from 'node:assert/strict';
import { runInProcess } from '../../helpers/state.ts';

async function ok(args: string[], stdin = ''): Promise<string> {
  const r = await runInProcess(args, stdin);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
  return r.out;
}

/** Runs on an empty deployment at `url`; leaves two accounts in it. */
export async function operatorCommands(url: string): Promise<void> {
  const r = ['--redis-url', url];
  const { key } = JSON.parse(await ok(['accounts', 'create', ...r, '--email', 'op@example.com', '--plan', 'free', '--password-stdin', '--json'], 'a long password\n'));
  await ok(['accounts', 'create', ...r, '--email', 'op2@example.com', '--plan', 'pro', '--password-stdin'], 'another long password\n');
  await ok(['accounts', 'set-plan', ...r, '--email', 'op@example.com', '--plan', 'starter']);
  assert.equal(JSON.parse(await ok(['keys', 'reveal', ...r, '--email', 'op@example.com', '--password-stdin', '--json'], 'a long password\n')).key, key);
  assert.equal(JSON.parse(await ok(['usage', ...r, '--email', 'op@example.com', '--json'])).used, 0);
  const dump = await ok(['state', 'export', ...r]);
  await ok(['state', 'import', ...r, '--force'], dump);
  const list = JSON.parse(await ok(['accounts', 'list', ...r, '--json'])) as { email: string; plan: string }[];
  assert.deepEqual(list.map((a) => [a.email, a.plan]), [['op@example.com', 'starter'], ['op2@example.com', 'pro']]);
  assert.equal(JSON.parse(await ok(['keys', 'reveal', ...r, '--email', 'op@example.com', '--password-stdin', '--json'], 'a long password\n')).key, key, 'the key survives export and import');
}
