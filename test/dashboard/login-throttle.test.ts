// The throttle's units and windows, without HTTP: IPv6 counted per /64, IPv4 as it is, and a count
// that expires with its window so nobody stays locked out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressUnit, LoginThrottle, WINDOW_MS } from '../../src/dashboard/login-throttle.ts';
import { MemoryThrottle } from '../../src/store/file/throttle.ts';

test('addressUnit: input -> the unit it is counted in', () => {
  const cases: [string, string][] = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1:2', 'fe80:0:0:0::/64'],
  ];
  for (const [input, unit] of cases) assert.equal(addressUnit(input), unit, input);
});

test('per account: 5 failures, then the failing address waits and a fresh one may try; all of it expires', async () => {
  let now = 0;
  const throttle = new LoginThrottle(new MemoryThrottle(), () => now);
  for (let i = 0; i < 5; i++) assert.equal(await throttle.reserve('Owner@Example.com', '198.51.100.1'), true);
  assert.equal(await throttle.reserve('owner@example.com', '198.51.100.1'), false);
  assert.equal(await throttle.reserve('OWNER@example.com', '198.51.100.2'), true, 'emails compare case-insensitively; a fresh address passes');
  assert.equal(await throttle.reserve('other@example.com', '198.51.100.1'), true, 'other accounts from that address are not concerned');
  now += WINDOW_MS;
  assert.equal(await throttle.reserve('owner@example.com', '198.51.100.1'), true);
});

test('a check given back (the right password) counts nothing: the owner never uses up the limits', async () => {
  const throttle = new LoginThrottle(new MemoryThrottle(), () => 0);
  for (let i = 0; i < 30; i++) {
    assert.equal(await throttle.reserve('owner@example.com', '198.51.100.1'), true, `login ${i + 1}`);
    await throttle.succeeded('owner@example.com', '198.51.100.1');
  }
});

test('reserved in parallel: 100 checks at once from one address on one account -> 5 pass', async () => {
  const throttle = new LoginThrottle(new MemoryThrottle(), () => 0);
  const passed = (await Promise.all(Array.from({ length: 100 }, () => throttle.reserve('owner@example.com', '198.51.100.1')))).filter(Boolean);
  assert.equal(passed.length, 5);
});
