// The gate: identical 401s, exact quotas under concurrency, only 200s counted, headers, month rollover.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKey } from '../../src/access/key-format.ts';
import { ERRORS } from '../../src/errors.ts';
import type { Admission } from '../../src/quota/gate.ts';
import { openFileGate, type FileGate as Gate, type FileGateOptions as GateOptions } from '../helpers/gate.ts';
import { FAST_SCRYPT } from '../helpers/state.ts';

async function gateWithKey(options: Partial<GateOptions> = {}, plan = 'free') {
  const gate = await openFileGate({ state: 'memory', scrypt: FAST_SCRYPT, ...options });
  const { key } = await gate.accounts.create({ email: 'a@b.io', plan, password: 'pw' });
  return { gate, key };
}

const ticks = (n: number) => new Promise<void>((resolve) => {
  const next = (left: number) => (left === 0 ? resolve() : setImmediate(() => next(left - 1)));
  next(n);
});

function rejected(a: Admission): { status: number; body: string; headers: Record<string, string> } {
  assert.equal(a.ok, false, 'expected a rejection');
  return a as never;
}

test('401 matrix: missing, empty, malformed, bad checksum, unknown, revoked -> one identical answer', async () => {
  const { gate, key } = await gateWithKey();
  const typo = key.slice(0, 12) + (key[12] === 'a' ? 'b' : 'a') + key.slice(13);
  const unknown = generateKey();
  await gate.accounts.create({ email: 'revoked@b.io', plan: 'pro', password: 'pw' }).then(() => gate.accounts.revokeKey('revoked@b.io'));
  const revoked = (await gate.accounts.create({ email: 'r2@b.io', plan: 'pro', password: 'pw' })).key;
  await gate.accounts.revokeKey('r2@b.io');
  const answers = [undefined, '', 'abc', 'cel_short', typo, unknown, revoked, key + ' '].map((k) => rejected(gate.admit(k)));
  const expected = { status: 401, body: JSON.stringify({ success: false, error: 'INVALID_API_KEY', message: ERRORS.INVALID_API_KEY.message }) };
  for (const a of answers) {
    assert.deepEqual({ status: a.status, body: a.body }, expected);
    assert.deepEqual(a.headers, {});
  }
  assert.ok(gate.admit(key).ok);
});

test('the key just admitted, revoked or rotated -> 401 on its next request; a key between two of another -> each its own account', async () => {
  const { gate, key } = await gateWithKey({}, 'pro');
  const other = (await gate.accounts.create({ email: 'o@b.io', plan: 'free', password: 'pw' })).key;
  const settled = (k: string) => {
    const a = gate.admit(k);
    assert.equal(a.ok, true);
    const t = (a as Admission & { ok: true }).ticket;
    gate.settle(t, 200);
    return t;
  };
  const first = settled(key);
  assert.notEqual(settled(other).account, first.account);
  assert.equal(settled(key).account, first.account);
  assert.equal(settled(key).account, first.account); // the same key twice in a row: the last one remembered
  const { key: rotated } = await gate.accounts.rotateKey('a@b.io', 'pw');
  assert.equal(rejected(gate.admit(key)).status, 401);
  assert.equal(settled(rotated).account, first.account);
  await gate.accounts.revokeKey('a@b.io');
  assert.equal(rejected(gate.admit(rotated)).status, 401);
  assert.equal(settled(other).account === first.account, false);
});

test('quota 100 under 150 concurrent requests -> exactly 100 served, 50 429s, used never above 100', async () => {
  const { gate, key } = await gateWithKey();
  let served = 0;
  let peak = 0;
  const statuses = await Promise.all(
    Array.from({ length: 150 }, async (_, i) => {
      await ticks(i % 7);
      const a = gate.admit(key);
      if (!a.ok) return a.status;
      await ticks(1 + (i % 5)); // settled later, while other admits run: reservations must hold
      gate.settle(a.ticket, 200);
      served++;
      peak = Math.max(peak, (await gate.usage.get('a@b.io')).used);
      return 200;
    }),
  );
  assert.equal(served, 100);
  assert.equal(statuses.filter((s) => s === 429).length, 50);
  assert.equal(peak, 100);
  const report = (await gate.usage.get('a@b.io'));
  assert.deepEqual([report.used, report.remaining], [100, 0]);
  assert.equal(report.daily[0]?.success, 100);
  assert.equal(report.daily[0]?.rejected, 50);
});

test('non-200 settles (404, 400, 500) -> unit given back, counted as rejections', async () => {
  const { gate, key } = await gateWithKey({ plans: { free: 10 } });
  const statuses = [404, 400, 500, 200, 404, 200];
  for (const status of statuses) {
    const a = gate.admit(key);
    assert.ok(a.ok);
    gate.settle(a.ticket, status);
    gate.settle(a.ticket, status); // a double settle changes nothing
  }
  const report = (await gate.usage.get('a@b.io'));
  assert.deepEqual([report.used, report.remaining, report.daily[0]?.success, report.daily[0]?.rejected], [2, 8, 2, 4]);
  let more = 0;
  for (let a = gate.admit(key); a.ok; a = gate.admit(key)) (gate.settle(a.ticket, 200), more++);
  assert.equal(more, 8);
});

test('429 -> body with quota {used = total, total, resetsOn}, message naming plan and quota, headers', async () => {
  const now = Date.parse('2026-11-22T10:54:22.000Z');
  const { gate, key } = await gateWithKey({ clock: () => now }, 'starter');
  await gate.usage.set('a@b.io', 999);
  const last = gate.admit(key);
  assert.ok(last.ok);
  assert.deepEqual(last.headers, { 'RateLimit-Policy': '"monthly";q=1000;w=2592000', RateLimit: '"monthly";r=0;t=738338' });
  gate.settle(last.ticket, 200);
  const a = rejected(gate.admit(key));
  assert.equal(a.status, 429);
  assert.deepEqual(JSON.parse(a.body), {
    success: false,
    error: 'QUOTA_EXCEEDED',
    message: 'Monthly quota of 1000 requests for the starter plan exceeded',
    quota: { used: 1000, total: 1000, resetsOn: '2026-12-01T00:00:00.000Z' },
  });
  assert.deepEqual(a.headers, { 'RateLimit-Policy': '"monthly";q=1000;w=2592000', RateLimit: '"monthly";r=0;t=738338', 'Retry-After': '738338' });
  assert.equal((await gate.usage.get('a@b.io')).used, 1000, '429s are not counted');
});

test('first request of the month -> RateLimit r = total - 1; unlimited plan -> no headers, still counted', async () => {
  const { gate, key } = await gateWithKey();
  const a = gate.admit(key);
  assert.ok(a.ok);
  assert.match(a.headers.RateLimit ?? '', /^"monthly";r=99;t=\d+$/);
  await gate.accounts.setPlan('a@b.io', 'enterprise');
  const b = gate.admit(key);
  assert.ok(b.ok);
  assert.deepEqual(b.headers, {});
  gate.settle(a.ticket, 200);
  gate.settle(b.ticket, 200);
  assert.deepEqual([(await gate.usage.get('a@b.io')).used, (await gate.usage.get('a@b.io')).total, (await gate.usage.get('a@b.io')).remaining], [2, null, null]);
});

const rollovers: [string, string, string, number][] = [
  // last instant of a month -> first instant of the next, resetsOn before and after, days in the new month
  ['2027-01-31T23:59:59.999Z', '2027-02-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z', 28],
  ['2027-02-28T23:59:59.999Z', '2027-03-01T00:00:00.000Z', '2027-04-01T00:00:00.000Z', 31],
  ['2028-02-29T23:59:59.999Z', '2028-03-01T00:00:00.000Z', '2028-04-01T00:00:00.000Z', 31],
  ['2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z', 31],
];
for (const [before, after, nextReset, days] of rollovers) {
  test(`rollover ${before} -> ${after}: fresh quota without restart, resetsOn ${after} then ${nextReset}`, async () => {
    let now = Date.parse(before);
    const { gate, key } = await gateWithKey({ clock: () => now, plans: { free: 3 } });
    const use = (g: Gate) => {
      const a = g.admit(key);
      if (a.ok) g.settle(a.ticket, 200);
      return a;
    };
    for (let i = 0; i < 3; i++) assert.ok(use(gate).ok);
    const full = rejected(use(gate));
    assert.equal(JSON.parse(full.body).quota.resetsOn, after);
    assert.equal(full.headers['Retry-After'], '1');
    assert.equal((await gate.usage.get('a@b.io')).resetsOn, after);
    now = Date.parse(after);
    const fresh = use(gate);
    assert.ok(fresh.ok, 'a new month: quota available again');
    assert.deepEqual(fresh.headers['RateLimit-Policy'], `"monthly";q=3;w=${days * 86400}`);
    const report = (await gate.usage.get('a@b.io'));
    assert.deepEqual([report.used, report.resetsOn, report.daily.length], [1, nextReset, 1]);
    assert.equal(report.daily[0]?.date, after.slice(0, 10));
  });
}

test('a request admitted in one month and settled in the next -> counted in the month it was admitted', async () => {
  let now = Date.parse('2027-01-31T23:59:59.999Z');
  const { gate, key } = await gateWithKey({ clock: () => now, plans: { free: 1 } });
  const a = gate.admit(key);
  assert.ok(a.ok);
  now += 1;
  gate.settle(a.ticket, 200);
  const report = await gate.usage.get('a@b.io');
  assert.equal(report.used, 0, 'February starts empty');
  assert.deepEqual(report.months.find((m) => m.month === '2027-01'), { month: '2027-01', used: 1, success: 1, rejected: 0 }, 'January kept its unit');
  assert.ok(gate.admit(key).ok);
});

test('429s within one second -> one shared frozen answer; a second later -> t counts down, same body', async () => {
  let now = Date.parse('2026-11-22T10:54:22.000Z');
  const { gate, key } = await gateWithKey({ clock: () => now, plans: { free: 1, starter: 1 } });
  const other = (await gate.accounts.create({ email: 'c@d.io', plan: 'starter', password: 'pw' })).key;
  for (const k of [key, other]) {
    const a = gate.admit(k);
    assert.ok(a.ok);
    gate.settle(a.ticket, 200);
  }
  const first = rejected(gate.admit(key));
  now += 999;
  const same = rejected(gate.admit(key));
  assert.equal(same, first, 'the same object within the second');
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.headers));
  now += 1;
  const next = rejected(gate.admit(key));
  assert.notEqual(next, first);
  assert.equal(next.body, first.body);
  assert.deepEqual([first.headers['Retry-After'], next.headers['Retry-After']], ['738338', '738337']);
  assert.equal(next.headers.RateLimit, '"monthly";r=0;t=738337');
  const starter = rejected(gate.admit(other));
  assert.match(starter.body, /starter plan/);
  assert.match(rejected(gate.admit(key)).body, /free plan/, 'plans do not share a body');
  assert.equal((await gate.usage.get('a@b.io')).daily[0]?.rejected, 4, 'every 429 is still counted');
});

test('two keys in turn across midnight -> each request counted on its own account and day (the counters of the last reservation kept)', async () => {
  let now = Date.parse('2026-11-28T23:59:59.000Z');
  const { gate, key } = await gateWithKey({ clock: () => now }, 'pro');
  const other = (await gate.accounts.create({ email: 'o@b.io', plan: 'pro', password: 'pw' })).key;
  const use = (k: string, status = 200) => {
    const a = gate.admit(k);
    assert.ok(a.ok);
    gate.settle(a.ticket, status);
  };
  use(key);
  use(key);
  use(other);
  use(key, 404);
  now = Date.parse('2026-11-29T00:00:00.000Z');
  use(key);
  use(other);
  use(other);
  use(other, 404);
  const days = async (email: string) => (await gate.usage.get(email)).daily.map((d) => [d.date, d.success, d.rejected]);
  assert.deepEqual(await days('a@b.io'), [['2026-11-28', 2, 1], ['2026-11-29', 1, 0]]);
  assert.deepEqual(await days('o@b.io'), [['2026-11-28', 1, 0], ['2026-11-29', 2, 1]]);
  assert.equal((await gate.usage.get('a@b.io')).used, 3);
  assert.equal((await gate.usage.get('o@b.io')).used, 3);
});
