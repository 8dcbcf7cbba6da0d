// `state export` / `state import` (issue 10): files -> Redis -> files keeps accounts, keys, passwords
// and the month's counters; a non-empty target refuses unless --force; bad input is a clear error.
import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openFileGate } from '../helpers/gate.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { main } from '../../src/cli/main.ts';
import { fakeIo, runInProcess, tempState } from '../helpers/state.ts';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(() => redis.stop());

const run = (args: string[], stdin = '') => runInProcess(args, stdin);

async function ok(args: string[], stdin = ''): Promise<string> {
  const r = await run(args, stdin);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
  return r.out;
}

const usageOf = async (where: string[], email: string) => JSON.parse(await ok(['usage', ...where, '--email', email, '--json']));

test('files -> Redis -> files: accounts, keys, passwords and this month\'s counters arrive intact', async () => {
  const dir = await tempState(after);
  const files = ['--state', join(dir, 'a')];
  const r = ['--redis-url', redis.url];
  const { key } = JSON.parse(await ok(['accounts', 'create', ...files, '--email', 'a@b.io', '--plan', 'free', '--password-stdin', '--json'], 'pw-a\n'));
  await ok(['accounts', 'create', ...files, '--email', 'c@d.io', '--plan', 'pro', '--password-stdin'], 'pw-c\n');
  const gate = await openFileGate({ state: join(dir, 'a') });
  for (const status of [200, 200, 200, 404]) {
    const a = gate.admit(key);
    assert.ok(a.ok);
    gate.settle(a.ticket, status);
  }
  await gate.close();
  const before = await usageOf(files, 'a@b.io');
  assert.equal(before.used, 3);

  const dump = join(dir, 'state.json');
  await ok(['state', 'export', ...files, '--out', dump]);
  assert.equal((await stat(dump)).mode & 0o777, 0o600);
  assert.ok(!(await readFile(dump, 'utf8')).includes(key.slice(4)), 'never a key in clear');
  assert.match(await ok(['state', 'import', ...r, '--in', dump]), /imported 2 accounts and the \d{4}-\d{2} usage of 1/);
  assert.deepEqual(await usageOf(r, 'a@b.io'), before);
  assert.equal(JSON.parse(await ok(['keys', 'reveal', ...r, '--email', 'a@b.io', '--password-stdin', '--json'], 'pw-a\n')).key, key);

  const again = await run(['state', 'import', ...r, '--in', dump]);
  assert.equal(again.code, 1);
  assert.match(again.err, /already holds 2 accounts.*--force/);
  await ok(['state', 'import', ...r, '--in', dump, '--force']);

  // And back, through a pipe, into a fresh state directory.
  const back = ['--state', join(dir, 'b')];
  const text = await ok(['state', 'export', ...r]);
  await ok(['state', 'import', ...back], text);
  assert.deepEqual(await usageOf(back, 'a@b.io'), before);
  assert.deepEqual(JSON.parse(await ok(['accounts', 'list', ...back, '--json'])).map((a: { email: string }) => a.email), ['a@b.io', 'c@d.io']);
});

test('state: bad input and usage errors -> clear messages and the exit codes of CONTRACT 6', async () => {
  const dir = await tempState(after);
  const s = ['--state', dir];
  const write = async (name: string, value: unknown) => {
    const path = join(dir, name);
    await writeFile(path, typeof value === 'string' ? value : JSON.stringify(value));
    return path;
  };
  const valid = { format: 'celebrity-api-state', version: 1, exportedAt: '2026-11-23T00:00:00.000Z', month: '2026-11', accounts: [], usage: [] };
  const cases: [string, string[], number, RegExp][] = [
    ['no command', ['state', ...s], 2, /missing command/],
    ['unknown command', ['state', 'copy', ...s], 2, /unknown command 'copy'/],
    ['--force on export', ['state', 'export', ...s, '--force'], 2, /for import/],
    ['bad Redis URL', ['state', 'export', '--redis-url', 'http://x'], 2, /redis:\/\//],
    ['missing file', ['state', 'import', ...s, '--in', join(dir, 'nope.json')], 1, /ENOENT/],
    ['not JSON', ['state', 'import', ...s, '--in', await write('a.json', '{')], 1, /a\.json: not valid JSON/],
    ['not an export', ['state', 'import', ...s, '--in', await write('b.json', { version: 1 })], 1, /not a state export/],
    ['bad plan', ['state', 'import', ...s, '--in', await write('c.json', { ...valid, accounts: [{ id: 'acc_1', email: 'a@b.io', plan: 'gold' }] })], 1, /accounts\[0\]\.plan: unknown plan/],
    ['usage of nobody', ['state', 'import', ...s, '--in', await write('d.json', { ...valid, usage: [{ account: 'acc_x', used: 1, daily: [], lastUsedMs: null }] })], 1, /usage\[0\]\.account/],
    ['export over a file', ['state', 'export', ...s, '--out', await write('e.json', '')], 1, /exists/],
    ['Redis not there', ['state', 'export', '--redis-url', `redis://127.0.0.1:${redis.port + 1}`], 1, /cannot reach Redis|ECONNREFUSED/],
  ];
  for (const [name, args, code, message] of cases) {
    const r = await run(args);
    assert.equal(r.code, code, `${name}: ${r.err}`);
    assert.match(r.err, message, name);
  }
});

test('$CELEBRITY_API_REDIS_URL alone: accounts create, set-plan, keys rotate and revoke act on Redis, and no state directory appears', async () => {
  const cwd = await tempState(after);
  const env = async (args: string[], stdin = '') => {
    const io = { ...fakeIo(stdin, cwd), env: { CELEBRITY_API_REDIS_URL: redis.url } };
    const code = await main(args, io);
    return { code, out: io.out(), err: io.err() };
  };
  const created = await env(['accounts', 'create', '--email', 'env@b.io', '--plan', 'free', '--password-stdin', '--json'], 'pw-env\n');
  assert.equal(created.code, 0, created.err);
  assert.equal((await env(['accounts', 'set-plan', '--email', 'env@b.io', '--plan', 'pro'])).code, 0);
  const rotated = await env(['keys', 'rotate', '--email', 'env@b.io', '--password-stdin', '--json'], 'pw-env\n');
  assert.equal(rotated.code, 0, rotated.err);
  assert.notEqual(JSON.parse(rotated.out).key, JSON.parse(created.out).key);
  // What another server on the same Redis sees: the plan and the rotated key.
  assert.equal((await usageOf(['--redis-url', redis.url], 'env@b.io')).plan, 'pro');
  assert.equal(JSON.parse(await ok(['keys', 'reveal', '--redis-url', redis.url, '--email', 'env@b.io', '--password-stdin', '--json'], 'pw-env\n')).key, JSON.parse(rotated.out).key);
  assert.equal((await env(['keys', 'revoke', '--email', 'env@b.io'])).code, 0);
  const gone = await run(['keys', 'reveal', '--redis-url', redis.url, '--email', 'env@b.io', '--password-stdin'], 'pw-env\n');
  assert.equal(gone.code, 1, 'no active key to reveal once revoked');
  assert.deepEqual(await readdir(cwd), [], 'nothing written to ./state');
});
