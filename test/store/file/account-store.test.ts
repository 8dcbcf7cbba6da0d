// AccountStore: create, keys, reveal, revoke, plans, passwords; file mode and no lost updates across instances.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AccountStore } from '../../../src/store/file/account-store.ts';
import { keyDigest } from '../../../src/access/key-format.ts';
import { AccountError } from '../../../src/access/types.ts';
import { FAST_SCRYPT, tempState } from '../../helpers/state.ts';

const open = (state: string) => AccountStore.open({ state, scrypt: FAST_SCRYPT });
const code = (c: string) => (err: unknown) => err instanceof AccountError && err.code === c;

for (const state of ['disk', 'memory'] as const) {
  test(`${state}: create -> key works for lookup, list shows the prefix only`, async () => {
    const store = await open(state === 'disk' ? await tempState(after) : 'memory');
    const issued = await store.create({ email: ' Ada@Example.COM ', plan: 'pro', password: 'pw' });
    assert.deepEqual([issued.email, issued.plan], ['ada@example.com', 'pro']);
    assert.equal(store.lookup(keyDigest(issued.key))?.email, 'ada@example.com');
    const [summary] = await store.list();
    assert.equal(summary?.keyPrefix, issued.key.slice(0, 10) + '…');
    assert.ok(!JSON.stringify(await store.list()).includes(issued.key));
    assert.ok(!JSON.stringify(await store.keys()).includes(issued.key));
  });

  test(`${state}: email unique case-insensitively, invalid email and plan rejected`, async () => {
    const store = await open(state === 'disk' ? await tempState(after) : 'memory');
    await store.create({ email: 'a@b.io', plan: 'free', password: 'pw' });
    await assert.rejects(store.create({ email: 'A@B.IO', plan: 'free', password: 'pw' }), code('EMAIL_TAKEN'));
    await assert.rejects(store.create({ email: 'not-an-email', plan: 'free', password: 'pw' }), code('INVALID_EMAIL'));
    await assert.rejects(store.create({ email: 'c@b.io', plan: 'gold', password: 'pw' }), code('INVALID_PLAN'));
    await assert.rejects(store.create({ email: 'c@b.io', plan: 'free', password: '' }), code('INVALID_PASSWORD'));
    await assert.rejects(store.setPlan('a@b.io', 'platinum'), code('INVALID_PLAN'));
    await assert.rejects(store.setPlan('x@b.io', 'pro'), code('UNKNOWN_ACCOUNT'));
  });

  test(`${state}: reveal with right password -> the key; wrong -> WRONG_PASSWORD`, async () => {
    const store = await open(state === 'disk' ? await tempState(after) : 'memory');
    const { key } = await store.create({ email: 'a@b.io', plan: 'free', password: 'right' });
    assert.equal((await store.revealKey('A@b.io', 'right')).key, key);
    await assert.rejects(store.revealKey('a@b.io', 'wrong'), code('WRONG_PASSWORD'));
  });

  test(`${state}: create while active -> KEY_ACTIVE; rotate -> old key dead; revoke -> no key; create again`, async () => {
    const store = await open(state === 'disk' ? await tempState(after) : 'memory');
    const first = await store.create({ email: 'a@b.io', plan: 'free', password: 'pw' });
    await assert.rejects(store.createKey('a@b.io', 'pw'), code('KEY_ACTIVE'));
    await assert.rejects(store.rotateKey('a@b.io', 'nope'), code('WRONG_PASSWORD'));
    const second = await store.rotateKey('a@b.io', 'pw');
    assert.notEqual(second.key, first.key);
    assert.equal(store.lookup(keyDigest(first.key)), undefined);
    assert.ok(store.lookup(keyDigest(second.key)));
    const revoked = await store.revokeKey('a@b.io');
    assert.equal(revoked.status, 'revoked');
    assert.equal(store.lookup(keyDigest(second.key)), undefined);
    await assert.rejects(store.revokeKey('a@b.io'), code('NO_KEY'));
    await assert.rejects(store.revealKey('a@b.io', 'pw'), code('NO_KEY'));
    const third = await store.createKey('a@b.io', 'pw');
    assert.ok(store.lookup(keyDigest(third.key)));
    assert.deepEqual((await store.keys()).map((k) => k.status), ['active', 'revoked', 'revoked']);
  });

  test(`${state}: set password -> old one refused, key still revealed with the new one`, async () => {
    const store = await open(state === 'disk' ? await tempState(after) : 'memory');
    const { key } = await store.create({ email: 'a@b.io', plan: 'free', password: 'old' });
    await assert.rejects(store.setPassword('a@b.io', 'bad', 'new'), code('WRONG_PASSWORD'));
    await store.setPassword('a@b.io', 'old', 'new');
    await assert.rejects(store.revealKey('a@b.io', 'old'), code('WRONG_PASSWORD'));
    assert.equal((await store.revealKey('a@b.io', 'new')).key, key);
  });
}

test('store file -> mode 0600, no key in clear, a second instance sees the data', async () => {
  const dir = await tempState(after);
  const store = await open(dir);
  const { key } = await store.create({ email: 'a@b.io', plan: 'starter', password: 'pw' });
  const path = join(dir, 'accounts.json');
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.ok(!(await readFile(path, 'utf8')).includes(key));
  const other = await open(dir);
  assert.equal(other.lookup(keyDigest(key))?.plan, 'starter');
});

test('two instances (as two CLI processes) writing at once -> no update lost', async () => {
  const dir = await tempState(after);
  const a = await open(dir);
  const b = await open(dir);
  await Promise.all(
    Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).create({ email: `u${i}@b.io`, plan: 'free', password: 'pw' })),
  );
  const fresh = await open(dir);
  assert.equal((await fresh.list()).length, 12);
  await Promise.all([a.setPlan('u0@b.io', 'pro'), b.setPlan('u1@b.io', 'enterprise')]);
  const plans = new Map((await fresh.list()).map((s) => [s.email, s.plan]));
  assert.deepEqual([plans.get('u0@b.io'), plans.get('u1@b.io')], ['pro', 'enterprise']);
});

test('corrupt store file -> STORE_CORRUPT naming the file', async () => {
  const dir = await tempState(after);
  await (await import('node:fs/promises')).writeFile(join(dir, 'accounts.json'), '{"version":1,"accounts":[{');
  await assert.rejects(open(dir), (err: unknown) => code('STORE_CORRUPT')(err) && (err as Error).message.includes('accounts.json'));
});

test('refresh (the periodic check behind fs.watch) -> reloads only when the file changed', async () => {
  const dir = await tempState(after);
  const server = await open(dir);
  const cli = await open(dir);
  assert.equal(await server.refresh(), false, 'no file yet, nothing changed');
  const { key } = await cli.create({ email: 'a@b.io', plan: 'free', password: 'pw' });
  assert.equal(server.lookup(keyDigest(key)), undefined);
  assert.equal(await server.refresh(), true);
  assert.equal(server.lookup(keyDigest(key))?.plan, 'free');
  assert.equal(await server.refresh(), false, 'same stamp: no reload');
  await cli.setPlan('a@b.io', 'pro');
  assert.equal(await server.refresh(), true);
  assert.equal(server.lookup(keyDigest(key))?.plan, 'pro');
});

test('three processes creating accounts at once -> every account there, every plan change kept', async () => {
  const dir = await tempState(after);
  const child = new URL('./fixtures/store-child.ts', import.meta.url).pathname;
  const runs = ['p1', 'p2', 'p3'].map(
    (name) =>
      new Promise<void>((resolve, reject) => {
        const p = spawn(process.execPath, ['--import', 'tsx', child, dir, name, '8'], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        p.stderr.on('data', (d) => (err += d));
        p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${name} exited ${code}: ${err}`))));
      }),
  );
  await Promise.all(runs);
  const list = await (await open(dir)).list();
  assert.equal(list.length, 24);
  assert.equal(list.filter((a) => a.plan === 'pro').length, 12);
});
