// The behaviour every Store must have (src/store/types.ts), run against each implementation so they
// cannot drift apart (hono's src/router/common.case.test.ts does this for its routers).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keyDigest } from '../../src/access/key-format.ts';
import { AccountError } from '../../src/access/types.ts';
import { CalendarCache, type Moment } from '../../src/quota/month.ts';
import type { QuotaTicket, Store } from '../../src/store/types.ts';
import { within } from '../helpers/state.ts';

export interface StoreFixture {
  /** A store on a fresh, empty backend; the suite closes it. */
  open(): Promise<Store>;
  /**
   * Another instance on the same backend as `store` (another process in production): a change made
   * through one is seen by the other within 2 seconds. For the file store, a CLI beside the server.
   * Absent where no second instance can exist (the memory store lives in one process): the
   * propagation test is then not defined, rather than run against the same object.
   */
  peer?(store: Store): Promise<Store>;
}

const NOW = Date.parse('2026-11-23T10:00:00.000Z');
/** A wait for propagation that only fails a hung one: CONTRACT 4's 2 s is a timing claim, for a busy machine to miss. */
const PROPAGATION_WAIT_MS = 20_000;
const calendar = new CalendarCache(NOW);
const at = (ms = NOW): Moment => calendar.moment(ms);

async function reserve(store: Store, account: string, total: number | null, ms = NOW): Promise<QuotaTicket | null> {
  return store.quota.reserve(account, total, at(ms), ms);
}

/** Settles and waits for durability where the store asks for it. */
async function settle(store: Store, ticket: QuotaTicket, status: number): Promise<void> {
  await store.quota.settle(ticket, status);
}

export function storeSuite(name: string, fixture: StoreFixture): void {
  const withStore = (title: string, body: (store: Store) => Promise<void>) =>
    it(title, async () => {
      const store = await fixture.open();
      try {
        await body(store);
      } finally {
        await store.close();
      }
    });

  describe(`store contract: ${name}`, () => {
    withStore('accounts: create -> the key resolves; revoke -> it does not; rotate -> only the new one', async (store) => {
      const { key } = await store.accounts.create({ email: 'A@B.io', plan: 'free', password: 'pw' });
      const found = store.lookupKey(keyDigest(key));
      assert.equal(found?.email, 'a@b.io');
      assert.equal(found?.plan, 'free');
      const { key: next } = await store.accounts.rotateKey('a@b.io', 'pw');
      assert.equal(store.lookupKey(keyDigest(key)), undefined);
      assert.equal(store.lookupKey(keyDigest(next))?.id, found?.id);
      assert.equal((await store.accounts.revealKey('a@b.io', 'pw')).key, next);
      await store.accounts.revokeKey('a@b.io');
      assert.equal(store.lookupKey(keyDigest(next)), undefined);
      await assert.rejects(store.accounts.revealKey('a@b.io', 'pw'), (e: AccountError) => e.code === 'NO_KEY');
      await assert.rejects(store.accounts.create({ email: 'a@b.io', plan: 'pro', password: 'x' }), (e: AccountError) => e.code === 'EMAIL_TAKEN');
    });

    withStore('accounts: register without a key, authenticate, find, get; wrong and unknown are both null', async (store) => {
      const made = await store.accounts.register({ email: 'c@d.io', plan: 'free', password: 'a long password' });
      assert.deepEqual(made.key, null);
      assert.deepEqual(await store.accounts.get(made.id), made);
      assert.deepEqual(await store.accounts.find('C@D.IO'), made);
      assert.deepEqual(await store.accounts.authenticate('c@d.io', 'a long password'), made);
      assert.equal(await store.accounts.authenticate('c@d.io', 'wrong'), null);
      assert.equal(await store.accounts.authenticate('nobody@d.io', 'a long password'), null);
      assert.equal(await store.accounts.get('acc_nope'), null);
      const { key } = await store.accounts.createKey('c@d.io', 'a long password');
      assert.equal((await store.accounts.get(made.id))?.key?.prefix, key.slice(0, 10) + '…');
      await store.accounts.setPassword('c@d.io', 'a long password', 'another long password');
      assert.equal((await store.accounts.revealKey('c@d.io', 'another long password')).key, key, 'the key survives a password change');
      assert.equal((await store.accounts.setPlan('c@d.io', 'pro')).plan, 'pro');
      assert.equal(store.lookupKey(keyDigest(key))?.plan, 'pro');
      assert.deepEqual((await store.accounts.list()).map((a) => a.email), ['c@d.io']);
    });

    withStore('quota: 150 reservations at once against 100 -> exactly 100 tickets; non-200 settles give units back', async (store) => {
      const tickets = await Promise.all(Array.from({ length: 150 }, () => reserve(store, 'acc_q', 100)));
      const granted = tickets.filter((t): t is QuotaTicket => t !== null);
      assert.equal(granted.length, 100);
      assert.deepEqual(granted.map((t) => t.remaining).sort((a, b) => a! - b!), Array.from({ length: 100 }, (_, i) => i));
      await Promise.all(granted.slice(0, 10).map((t) => settle(store, t, 404)));
      await Promise.all(granted.slice(10).map((t) => settle(store, t, 200)));
      const more = await Promise.all(Array.from({ length: 20 }, () => reserve(store, 'acc_q', 100)));
      assert.equal(more.filter((t) => t !== null).length, 10, 'the 10 units given back, no more');
      await Promise.all(more.map((t) => t && settle(store, t, 200)));
      const report = await store.quota.report('acc_q', at());
      assert.equal(report.used, 100);
      assert.deepEqual(report.daily, [{ date: '2026-11-23', success: 100, rejected: 10 + 50 + 10 }]);
      assert.deepEqual(report.months[0], { month: '2026-11', used: 100, success: 100, rejected: 70 });
      assert.equal(report.months.length, 6);
      assert.deepEqual(report.months.map((m) => m.month), ['2026-11', '2026-10', '2026-09', '2026-08', '2026-07', '2026-06']);
      assert.equal(report.lastUsedMs, NOW);
    });

    withStore('quota: a 304 gives its unit back and counts neither a success nor a rejection', async (store) => {
      const tickets = await Promise.all(Array.from({ length: 3 }, () => reserve(store, 'acc_r', 3)));
      await settle(store, tickets[0]!, 304);
      await settle(store, tickets[1]!, 200);
      await settle(store, tickets[2]!, 404);
      const report = await store.quota.report('acc_r', at());
      assert.equal(report.used, 1);
      assert.deepEqual(report.daily, [{ date: '2026-11-23', success: 1, rejected: 1 }]);
      assert.ok(await reserve(store, 'acc_r', 3), 'the 304 and the 404 left two units');
    });

    withStore('quota: unlimited never refuses; a quota of 0 always does; a new month starts at 0', async (store) => {
      for (let i = 0; i < 5; i++) {
        const t = await reserve(store, 'acc_u', null);
        assert.ok(t);
        assert.equal(t.remaining, null);
        await settle(store, t, 200);
      }
      assert.equal(await reserve(store, 'acc_z', 0), null);
      const t = (await reserve(store, 'acc_m', 1))!;
      await settle(store, t, 200);
      assert.equal(await reserve(store, 'acc_m', 1), null);
      const december = Date.parse('2026-12-01T00:00:00.000Z');
      const fresh = await reserve(store, 'acc_m', 1, december);
      assert.ok(fresh, 'the quota resets at 00:00 UTC on the 1st');
      await settle(store, fresh, 200);
      const report = await store.quota.report('acc_m', at(december));
      assert.equal(report.used, 1);
      assert.deepEqual(report.months.slice(0, 2).map((m) => [m.month, m.used]), [['2026-12', 1], ['2026-11', 1]]);
      assert.equal(report.lastUsedMs, december);
    });

    withStore('quota: set puts the month at a count; the next reservations follow it', async (store) => {
      await store.quota.set('acc_s', 98, at());
      assert.equal((await store.quota.report('acc_s', at())).used, 98);
      const a = await reserve(store, 'acc_s', 100);
      assert.equal(a?.remaining, 1);
      await settle(store, a!, 200);
      const b = await reserve(store, 'acc_s', 100);
      assert.ok(b);
      await settle(store, b, 200);
      assert.equal(await reserve(store, 'acc_s', 100), null);
      assert.equal((await store.quota.report('acc_s', at())).used, 100);
    });

    withStore('sessions: put, get, delete; deleteForAccount keeps the one asked to', async (store) => {
      // expiresMs is on the store's clock (the wall clock here): what the dashboard passes it.
      const live = Date.now() + 3_600_000;
      const s = (id: string, account: string) => ({ id, account, createdMs: NOW, seenMs: NOW, csrf: `csrf-${id}`, expiresMs: live });
      await store.sessions.put(s('s1', 'acc_1'));
      await store.sessions.put(s('s2', 'acc_1'));
      await store.sessions.put(s('s3', 'acc_1'));
      await store.sessions.put(s('s4', 'acc_2'));
      assert.deepEqual(await store.sessions.get('s1'), s('s1', 'acc_1'));
      await store.sessions.put({ ...s('s1', 'acc_1'), seenMs: NOW + 1000 });
      assert.equal((await store.sessions.get('s1'))?.seenMs, NOW + 1000);
      assert.equal(await store.sessions.deleteForAccount('acc_1', 's2'), 2);
      assert.equal(await store.sessions.get('s1'), null);
      assert.ok(await store.sessions.get('s2'));
      assert.ok(await store.sessions.get('s4'));
      await store.sessions.delete('s2');
      assert.equal(await store.sessions.get('s2'), null);
      assert.equal(await store.sessions.deleteForAccount('acc_2', null), 1);
    });

    withStore('sessions: refresh replaces a live record and never brings back one that has ended', async (store) => {
      const s = { id: 'r1', account: 'acc_r', createdMs: NOW, seenMs: NOW, csrf: 'c', expiresMs: Date.now() + 3_600_000 };
      assert.equal(await store.sessions.refresh(s), false, 'unknown');
      assert.equal(await store.sessions.get('r1'), null);
      await store.sessions.put(s);
      assert.equal(await store.sessions.refresh({ ...s, csrf: 'd' }), true);
      assert.equal((await store.sessions.get('r1'))?.csrf, 'd');
      await store.sessions.deleteForAccount('acc_r', null);
      assert.equal(await store.sessions.refresh({ ...s, seenMs: NOW + 1 }), false, 'ended by a password change elsewhere');
      assert.equal(await store.sessions.get('r1'), null);
    });

    withStore('sessions: a record past its expiresMs is never answered; moving expiresMs on keeps it', async (store) => {
      const base = { account: 'acc_e', createdMs: NOW, seenMs: NOW, csrf: 'c' };
      await store.sessions.put({ ...base, id: 'gone', expiresMs: Date.now() - 1 });
      await store.sessions.put({ ...base, id: 'kept', expiresMs: Date.now() + 3_600_000 });
      assert.equal(await store.sessions.get('gone'), null);
      await store.sessions.put({ ...base, id: 'kept', seenMs: NOW + 60_000, expiresMs: Date.now() + 7_200_000 });
      assert.equal((await store.sessions.get('kept'))?.seenMs, NOW + 60_000);
      assert.equal(await store.sessions.deleteForAccount('acc_e', null), 1, 'the expired one is not counted');
    });

    withStore('throttle: hits count within the window, expire after it, clear resets', async (store) => {
      assert.equal(await store.throttle.count('login:a', NOW), 0);
      assert.equal(await store.throttle.hit('login:a', 60_000, NOW), 1);
      assert.equal(await store.throttle.hit('login:a', 60_000, NOW + 1000), 2);
      assert.equal(await store.throttle.count('login:a', NOW + 59_000), 2);
      assert.equal(await store.throttle.count('login:a', NOW + 61_000), 0, 'expired with its window');
      assert.equal(await store.throttle.hit('login:a', 60_000, NOW + 61_000), 1);
      await store.throttle.clear('login:a');
      assert.equal(await store.throttle.count('login:a', NOW + 61_000), 0);
    });

    withStore('sessions: formKey is made once, 256 random bits, then the same every time', async (store) => {
      const key = await store.sessions.formKey();
      assert.match(key, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(await store.sessions.formKey(), key);
    });

    const { peer: formPeer } = fixture;
    if (formPeer) withStore('sessions: another instance on the store reads the same formKey', async (store) => {
      const key = await store.sessions.formKey();
      const peer = await formPeer(store);
      try {
        assert.equal(await peer.sessions.formKey(), key);
      } finally {
        await peer.close();
      }
    });

    const attempt = (address: string, account = 'acc') => ({ address: `a:${address}`, account: `c:${account}`, pair: `p:${account}|${address}` });
    const LIMITS = { address: 4, account: 2, windowMs: 60_000 };

    withStore('throttle reserve: the address limit, then the account limit for addresses that failed on it; all of it expires', async (store) => {
      const t = store.throttle;
      assert.equal(await t.reserve(attempt('x'), LIMITS, NOW), true);
      assert.equal(await t.reserve(attempt('x'), LIMITS, NOW), true);
      assert.equal(await t.reserve(attempt('x'), LIMITS, NOW), false, 'the account has 2 and x has failed on it');
      assert.equal(await t.count('a:x', NOW), 2, 'a refusal counts nothing');
      assert.equal(await t.reserve(attempt('y'), LIMITS, NOW), true, 'a fresh address may still try the account');
      assert.equal(await t.reserve(attempt('y'), LIMITS, NOW), false);
      assert.equal(await t.reserve(attempt('x', 'other'), LIMITS, NOW), true);
      assert.equal(await t.reserve(attempt('x', 'third'), LIMITS, NOW), true);
      assert.equal(await t.reserve(attempt('x', 'fourth'), LIMITS, NOW), false, 'x has used its 4');
      assert.equal(await t.reserve(attempt('x'), LIMITS, NOW + 60_000), true, 'the window passed');
    });

    withStore('throttle reserve: 100 at once from one address -> exactly the account limit; given back, they count nothing', async (store) => {
      const t = store.throttle;
      const got = await Promise.all(Array.from({ length: 100 }, () => t.reserve(attempt('x'), LIMITS, NOW)));
      assert.equal(got.filter(Boolean).length, 2);
      const spread = await Promise.all(Array.from({ length: 100 }, (_, i) => t.reserve(attempt(`z${i % 10}`, 'spread'), LIMITS, NOW)));
      assert.equal(spread.filter(Boolean).length, 10, 'past the account limit, one each for 10 fresh addresses');
      await t.release(attempt('x'), NOW);
      assert.equal(await t.count('a:x', NOW), 1);
      assert.equal(await t.count('c:acc', NOW), 1);
      assert.equal(await t.count('p:acc|x', NOW), 0, 'the pair is forgiven');
      for (let i = 0; i < 5; i++) {
        assert.equal(await t.reserve(attempt('w', 'owner'), LIMITS, NOW), true, `the owner's login ${i + 1}`);
        await t.release(attempt('w', 'owner'), NOW);
      }
      assert.equal(await t.count('a:w', NOW), 0);
    });

    withStore('accounts: setEmail renames (key, password and id stay); a stored email of the older rule can be renamed', async (store) => {
      const { key } = await store.accounts.create({ email: 'old@x.io', plan: 'pro', password: 'pw' });
      const id = store.lookupKey(keyDigest(key))!.id;
      assert.deepEqual(await store.accounts.setEmail('OLD@x.io', 'New@x.io'), { email: 'new@x.io', plan: 'pro', createdAt: (await store.accounts.get(id))!.createdAt, keyPrefix: (await store.accounts.get(id))!.key!.prefix });
      assert.equal(await store.accounts.find('old@x.io'), null);
      assert.equal((await store.accounts.find('new@x.io'))?.id, id);
      assert.equal((await store.accounts.revealKey('new@x.io', 'pw')).key, key);
      assert.equal(store.lookupKey(keyDigest(key))?.email, 'new@x.io');
      await store.accounts.create({ email: 'other@x.io', plan: 'free', password: 'pw' });
      await assert.rejects(store.accounts.setEmail('new@x.io', 'other@x.io'), (e: AccountError) => e.code === 'EMAIL_TAKEN');
      await assert.rejects(store.accounts.setEmail('new@x.io', 'a<b@x.io'), (e: AccountError) => e.code === 'INVALID_EMAIL');
      await assert.rejects(store.accounts.setEmail('nobody@x.io', 'n@x.io'), (e: AccountError) => e.code === 'UNKNOWN_ACCOUNT');
      assert.deepEqual((await store.accounts.setEmail('new@x.io', 'new@x.io')).email, 'new@x.io', 'to itself: nothing changes');

      const [record] = (await store.exportAccounts()).filter((r) => r.id === id);
      const legacy = '\x1b[2j\x1b]0;pwned\x07x@e.io'; // accepted before issue 24
      await store.importAccounts([{ ...record!, email: legacy }], true);
      assert.equal((await store.accounts.revealKey(legacy, 'pw')).key, key, 'an account stored under the older rule keeps working');
      assert.equal((await store.accounts.setEmail(legacy, 'clean@x.io')).email, 'clean@x.io');
      assert.equal((await store.accounts.authenticate('clean@x.io', 'pw'))?.id, id);
    });

    withStore('transfer: export, then import (refused unless replacing) keeps keys and passwords; restore sets a month', async (store) => {
      const { key } = await store.accounts.create({ email: 'e@x.io', plan: 'starter', password: 'pw' });
      await store.accounts.register({ email: 'f@x.io', plan: 'free', password: 'pw2' });
      const records = await store.exportAccounts();
      assert.deepEqual(records.map((r) => r.email).sort(), ['e@x.io', 'f@x.io']);
      assert.ok(!JSON.stringify(records).includes(key.slice(4)), 'never the key in clear');
      await assert.rejects(store.importAccounts(records, false), (e: AccountError) => e.code === 'STORE_NOT_EMPTY');
      await store.accounts.revokeKey('e@x.io');
      await store.accounts.create({ email: 'g@x.io', plan: 'pro', password: 'pw3' });
      await store.importAccounts(records, true);
      assert.deepEqual((await store.accounts.list()).map((a) => a.email).sort(), ['e@x.io', 'f@x.io'], 'replaced, not merged');
      await within(PROPAGATION_WAIT_MS, () => store.lookupKey(keyDigest(key))?.email === 'e@x.io');
      assert.equal((await store.accounts.revealKey('e@x.io', 'pw')).key, key);
      assert.ok(await store.accounts.authenticate('f@x.io', 'pw2'));

      const id = records.find((r) => r.email === 'e@x.io')!.id;
      const daily = [{ date: '2026-11-02', success: 5, rejected: 1 }, { date: '2026-11-23', success: 2, rejected: 0 }];
      await store.quota.restore(id, { used: 7, daily, lastUsedMs: NOW - 1000 }, at());
      const report = await store.quota.report(id, at());
      assert.equal(report.used, 7);
      assert.deepEqual(report.daily, daily);
      assert.equal(report.lastUsedMs, NOW - 1000);
      const last = await reserve(store, id, 8);
      assert.equal(last?.remaining, 0);
      await settle(store, last!, 200);
      assert.equal(await reserve(store, id, 8), null);
    });

    const { peer: openPeer } = fixture;
    if (openPeer) it('propagation: a change made through another instance reaches this one, no restart', async () => {
      const store = await fixture.open();
      const peer = await openPeer(store);
      try {
        const { key } = await peer.accounts.create({ email: 'p@q.io', plan: 'free', password: 'pw' });
        await within(PROPAGATION_WAIT_MS, () => store.lookupKey(keyDigest(key)) !== undefined);
        await peer.accounts.setPlan('p@q.io', 'pro');
        await within(PROPAGATION_WAIT_MS, () => store.lookupKey(keyDigest(key))?.plan === 'pro');
        await peer.accounts.revokeKey('p@q.io');
        await within(PROPAGATION_WAIT_MS, () => store.lookupKey(keyDigest(key)) === undefined);
      } finally {
        await peer.close();
        await store.close();
      }
    });
  });
}
