// The accounts, keys and usage command groups (CONTRACT 6): output, exit codes, and one real end-to-end run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { accounts } from '../../src/cli/accounts.ts';
import { fakeIo, runInProcess, tempState } from '../helpers/state.ts';

const run = (group: string, args: string[], stdin = '') => runInProcess([group, ...args], stdin);

test('--help on every group and subcommand -> exit 0, usage on stdout', async () => {
  for (const [group, args] of [
    ['accounts', ['--help']],
    ['accounts', ['create', '--help']],
    ['keys', ['--help']],
    ['keys', ['-h']],
    ['usage', ['--help']],
  ] as const) {
    const r = await run(group, [...args]);
    assert.equal(r.code, 0);
    assert.match(r.out, /^Usage: celebrity-api /);
    assert.equal(r.err, '');
  }
});

test('usage errors -> exit 2 with a hint; failures -> exit 1 with the message only', async () => {
  const state = await tempState(after);
  const s = ['--state', state];
  assert.equal((await run('accounts', ['create', ...s, '--email', 'a@b.io', '--plan', 'free', '--password-stdin'], 'pw\n')).code, 0);
  const cases: [string, string, string[], string, number, RegExp][] = [
    ['no command', 'accounts', [...s], '', 2, /missing command/],
    ['unknown command', 'keys', ['frobnicate', ...s], '', 2, /unknown command 'frobnicate'/],
    ['unknown flag', 'accounts', ['list', '--verbose', ...s], '', 2, /--verbose/],
    ['missing --email', 'accounts', ['create', ...s, '--plan', 'free', '--password-stdin'], 'pw\n', 2, /missing --email/],
    ['bad plan name', 'accounts', ['create', ...s, '--email', 'x@b.io', '--plan', 'gold', '--password-stdin'], 'pw\n', 2, /unknown plan "gold"/],
    ['bad plan on set-plan', 'accounts', ['set-plan', ...s, '--email', 'a@b.io', '--plan', 'gold'], '', 2, /unknown plan/],
    ['bad email', 'accounts', ['create', ...s, '--email', 'nope', '--plan', 'free', '--password-stdin'], 'pw\n', 2, /invalid email/],
    ['no --password-stdin', 'keys', ['reveal', ...s, '--email', 'a@b.io'], 'pw\n', 2, /--password-stdin/],
    ['empty stdin', 'keys', ['reveal', ...s, '--email', 'a@b.io', '--password-stdin'], '', 2, /no password/],
    ['stray argument', 'usage', ['extra', ...s, '--email', 'a@b.io'], '', 2, /unexpected argument 'extra'/],
    ['duplicate email', 'accounts', ['create', ...s, '--email', 'A@B.io', '--plan', 'free', '--password-stdin'], 'pw\n', 1, /already exists/],
    ['wrong password', 'keys', ['reveal', ...s, '--email', 'a@b.io', '--password-stdin'], 'nope\n', 1, /wrong password/],
    ['create with an active key', 'keys', ['create', ...s, '--email', 'a@b.io', '--password-stdin'], 'pw\n', 1, /keys rotate/],
    ['unknown account', 'usage', [...s, '--email', 'who@b.io'], '', 1, /no account/],
  ];
  for (const [name, group, args, stdin, code, message] of cases) {
    const r = await run(group, args, stdin);
    assert.equal(r.code, code, `${name}: ${r.err}`);
    assert.match(r.err, message, name);
    assert.equal(r.out, '', `${name}: nothing on stdout`);
    if (code === 2) assert.match(r.err, /--help' for usage/, name);
  }
});

test('create -> key printed once; --json -> exactly {email, plan, key}; reveal, rotate, revoke, lists, usage', async () => {
  const state = await tempState(after);
  const s = ['--state', state];
  const text = await run('accounts', ['create', ...s, '--email', 'Text@B.io', '--plan', 'starter', '--password-stdin'], 'secret\n');
  const key = /cel_[0-9A-Za-z]+/.exec(text.out)?.[0] ?? '';
  assert.equal(text.out.split(key).length, 2, 'the key appears exactly once');
  assert.match(text.out, /shown once/);

  const json = await run('accounts', ['create', ...s, '--email', 'j@b.io', '--plan', 'free', '--password-stdin', '--json'], 'pw\r\nignored\n');
  assert.equal(json.out.split('\n').length, 2, 'one JSON line');
  const created = JSON.parse(json.out);
  assert.deepEqual(Object.keys(created), ['email', 'plan', 'key']);
  assert.deepEqual([created.email, created.plan], ['j@b.io', 'free']);

  const revealed = JSON.parse((await run('keys', ['reveal', ...s, '--email', 'J@b.io', '--password-stdin', '--json'], 'pw\n')).out);
  assert.deepEqual(revealed, created);
  const rotated = JSON.parse((await run('keys', ['rotate', ...s, '--email', 'j@b.io', '--password-stdin', '--json'], 'pw\n')).out);
  assert.notEqual(rotated.key, created.key);
  assert.equal((await run('keys', ['revoke', ...s, '--email', 'j@b.io'])).code, 0);
  assert.equal((await run('keys', ['revoke', ...s, '--email', 'j@b.io'])).code, 1, 'nothing left to revoke');
  assert.equal((await run('keys', ['create', ...s, '--email', 'j@b.io', '--password-stdin'], 'pw\n')).code, 0);

  const keyList = await run('keys', ['list', ...s]);
  const accountList = await run('accounts', ['list', ...s, '--json']);
  for (const out of [keyList.out, accountList.out]) {
    for (const k of [key, created.key, rotated.key]) assert.ok(!out.includes(k.slice(10)), 'lists show prefixes only');
  }
  assert.equal(keyList.out.trim().split('\n').length, 4, '1 + 3 keys (one active, two revoked)');
  assert.deepEqual(JSON.parse(accountList.out).map((a: { email: string }) => a.email), ['text@b.io', 'j@b.io']);

  assert.equal((await run('accounts', ['set-password', ...s, '--email', 'j@b.io', '--password-stdin'], 'pw\n')).code, 2, 'needs two lines');
  assert.equal((await run('accounts', ['set-password', ...s, '--email', 'j@b.io', '--password-stdin'], 'bad\nnew\n')).code, 1);
  assert.equal((await run('accounts', ['set-password', ...s, '--email', 'j@b.io', '--password-stdin'], 'pw\nnew\n')).code, 0);
  assert.equal((await run('keys', ['reveal', ...s, '--email', 'j@b.io', '--password-stdin'], 'pw\n')).code, 1, 'old password refused');
  assert.equal((await run('keys', ['reveal', ...s, '--email', 'j@b.io', '--password-stdin'], 'new\n')).code, 0);
  assert.equal((await run('accounts', ['set-plan', ...s, '--email', 'j@b.io', '--plan', 'enterprise'])).code, 0);
  const report = JSON.parse((await run('usage', [...s, '--email', 'j@b.io', '--json'])).out);
  assert.deepEqual(Object.keys(report), ['email', 'plan', 'used', 'total', 'remaining', 'resetsOn', 'daily']);
  assert.deepEqual([report.plan, report.used, report.total, report.remaining], ['enterprise', 0, null, null]);
  assert.match(report.resetsOn, /^\d{4}-\d{2}-01T00:00:00\.000Z$/);
  assert.match((await run('usage', [...s, '--email', 'text@b.io'])).out, /^email +text@b\.io\nplan +starter\nused +0\ntotal +1000\n/);
});

test('state directory -> $CELEBRITY_API_STATE, else ./state relative to the working directory', async () => {
  const cwd = await tempState(after);
  const io = { ...fakeIo('pw\n', cwd) };
  assert.equal(await accounts(['create', '--email', 'a@b.io', '--plan', 'free', '--password-stdin'], io), 0);
  assert.ok(existsSync(`${cwd}/state/accounts.json`));
  const env = { ...fakeIo('pw\n', cwd), env: { CELEBRITY_API_STATE: 'elsewhere' } };
  assert.equal(await accounts(['create', '--email', 'b@b.io', '--plan', 'free', '--password-stdin'], env), 0);
  assert.ok(existsSync(`${cwd}/elsewhere/accounts.json`));
  // Reading creates nothing: a mistyped --state leaves no directory behind.
  assert.equal(await accounts(['list', '--state', 'typo'], fakeIo('', cwd)), 0);
  assert.ok(!existsSync(`${cwd}/typo`));
});

const BIN = fileURLToPath(new URL('../../bin/celebrity-api', import.meta.url));
test('end to end through bin/celebrity-api: create --json, usage --json, exit codes', async () => {
  const state = await tempState(after);
  const cli = (args: string[], input = '') => spawnSync(process.execPath, [BIN, ...args, '--state', state], { input, encoding: 'utf8', timeout: 20_000 });
  const created = cli(['accounts', 'create', '--email', 'e@b.io', '--plan', 'pro', '--password-stdin', '--json'], 'pw\n');
  assert.equal(created.status, 0, created.stderr);
  const { key } = JSON.parse(created.stdout);
  assert.match(key, /^cel_[0-9A-Za-z]{32,}$/);
  const report = cli(['usage', '--email', 'e@b.io', '--json']);
  assert.equal(report.status, 0, report.stderr);
  assert.deepEqual([JSON.parse(report.stdout).total, JSON.parse(report.stdout).used], [10000, 0]);
  assert.equal(cli(['accounts', 'set-plan', '--email', 'e@b.io', '--plan', 'gold']).status, 2);
});
