// The key replica (src/store/redis/replica.ts) against Redis nodes that lack accounts it knows: a
// node restarted empty that still answers as the primary, then given the data back by a resync (what
// Sentinel does to an old primary), a Redis flushed for good, and catch-ups that fail while Redis
// answers. Customers are never locked out by a node that lacks the data; a loss that lasts drops the
// keys after the grace; revocation still applies within 2 s (CONTRACT 4 and 9).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyDigest } from '../../../src/access/key-format.ts';
import { ACCOUNT_KEYS } from '../../../src/store/redis/keys.ts';
import { openRedisStore } from '../../../src/store/redis/redis-store.ts';
import type { Store } from '../../../src/store/types.ts';
import { startRedis, type RedisServer } from '../../helpers/redis.ts';
import { captureLog, EVENTUALLY_MS, FAST_SCRYPT, within, type CapturedLog } from '../../helpers/state.ts';

const PASSWORD = 'a long password';

interface Follower {
  readonly store: Store;
  readonly log: CapturedLog;
  knows(key: string): boolean;
  metric(name: string): number;
}

async function follower(redis: RedisServer, missingGraceMs?: number): Promise<Follower> {
  const log = captureLog();
  const store = await openRedisStore({ url: redis.url, state: 'memory', role: 'server', scrypt: FAST_SCRYPT, log, ...(missingGraceMs === undefined ? {} : { missingGraceMs }) });
  return {
    store,
    log,
    knows: (key) => store.lookupKey(keyDigest(key)) !== undefined,
    metric: (name) => store.status().metrics.find((m) => m.name === name)?.value ?? NaN,
  };
}

const logged = (log: CapturedLog, level: string, text: string) => log.lines.some((l) => l.includes(`"level":"${level}"`) && l.includes(text));

/** Until the replica has caught up with the node at `version` (0: an empty node). */
const caughtUpTo = async (f: Follower, version: number) => within(EVENTUALLY_MS, () => f.metric('celebrity_api_store_replica_version') === version);

test('a node restarted empty, then given a change and the data back by a resync: no key is ever lost on the way, and every key it has again works', async () => {
  const primary = await startRedis();
  const standby = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const f = await follower(primary);
  const operator = await openRedisStore({ url: primary.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  try {
    const keys: string[] = [];
    for (const email of ['a@example.com', 'b@example.com']) keys.push((await operator.accounts.create({ email, plan: 'free', password: PASSWORD })).key);
    await within(EVENTUALLY_MS, () => keys.every(f.knows));
    // The standby has the accounts, and stops following: it holds the data while the primary restarts.
    await within(EVENTUALLY_MS, async () => (await standby.command('GET', ACCOUNT_KEYS.version)).endsWith('\r\n2\r\n'));
    await standby.command('REPLICAOF', 'NO', 'ONE');
    // Without persistence the primary comes back empty, and answers as a primary.
    await primary.kill();
    await primary.restart();
    await caughtUpTo(f, 0);
    assert.ok(keys.every(f.knows), 'the keys are kept while the node that answers lacks their accounts');
    assert.equal(f.metric('celebrity_api_store_replica_missing_keys'), 2);
    assert.ok(logged(f.log, 'warn', 'Redis lacks accounts this instance knows'), f.log.lines.join('\n'));
    // A sign-up on the empty node: version 1 there. The replica then asks only for changes after 1.
    let late = '';
    await within(EVENTUALLY_MS, async () => ((late = (await operator.accounts.create({ email: 'late@example.com', plan: 'free', password: PASSWORD })).key), true));
    await within(EVENTUALLY_MS, () => f.knows(late));
    await caughtUpTo(f, 1);
    assert.ok(keys.every(f.knows));
    // The node resyncs from the standby (what Sentinel does to a restarted old primary): version 2,
    // a@ at version 1 and b@ at 2, in the first history again. A catch-up after version 1 would name
    // b@ only (before: a@ was locked out for good); the other epoch makes the answer full.
    await primary.command('REPLICAOF', '127.0.0.1', String(standby.port));
    await caughtUpTo(f, 2);
    await within(EVENTUALLY_MS, () => f.metric('celebrity_api_store_replica_missing_keys') === 1);
    assert.ok(keys.every(f.knows), 'every key the node has again works');
    // late@ was made on the empty node only, and the resync lost it: kept for the grace, like any.
    assert.ok(f.knows(late));
  } finally {
    await operator.close();
    await f.store.close();
    await standby.stop();
    await primary.stop();
  }
});

test('a Redis that keeps lacking the accounts: their keys stop working once the grace is over; a revocation meanwhile applies at once', async () => {
  const redis = await startRedis();
  const f = await follower(redis, 1500);
  const operator = await openRedisStore({ url: redis.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  try {
    const { key } = await operator.accounts.create({ email: 'gone@example.com', plan: 'free', password: PASSWORD });
    await within(EVENTUALLY_MS, () => f.knows(key));
    assert.match(await redis.command('FLUSHALL'), /OK/);
    // Made and revoked after the flush: the node has this account, and its revocation is not held up.
    const { key: revoked } = await operator.accounts.create({ email: 'revoked@example.com', plan: 'free', password: PASSWORD });
    await within(EVENTUALLY_MS, () => f.knows(revoked));
    await operator.accounts.revokeKey('revoked@example.com');
    await within(EVENTUALLY_MS, () => !f.knows(revoked));
    await within(EVENTUALLY_MS, () => !f.knows(key));
    assert.equal(f.metric('celebrity_api_store_replica_missing_keys'), 0);
    assert.ok(logged(f.log, 'error', 'Redis still lacks accounts after the grace'), f.log.lines.join('\n'));
  } finally {
    await operator.close();
    await f.store.close();
    await redis.stop();
  }
});

test('catch-ups failing while Redis answers: a warning past 2 s and the failures in /metrics; the keys stay', async () => {
  const redis = await startRedis();
  const f = await follower(redis);
  const operator = await openRedisStore({ url: redis.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  try {
    const { key } = await operator.accounts.create({ email: 'kept@example.com', plan: 'free', password: PASSWORD });
    await within(EVENTUALLY_MS, () => f.knows(key));
    // The change log made a string: the sync script fails with WRONGTYPE, every other call answers.
    await redis.command('DEL', ACCOUNT_KEYS.changes);
    await redis.command('SET', ACCOUNT_KEYS.changes, 'not a sorted set');
    await within(EVENTUALLY_MS, () => logged(f.log, 'warn', 'catch-up failing'));
    assert.ok(f.metric('celebrity_api_store_replica_sync_failures_total') > 0);
    assert.ok(f.metric('celebrity_api_store_replica_failing_seconds') > 2);
    assert.ok(f.knows(key));
    await redis.command('DEL', ACCOUNT_KEYS.changes);
    await within(EVENTUALLY_MS, () => f.metric('celebrity_api_store_replica_failing_seconds') === 0);
    assert.ok(logged(f.log, 'info', 'catching up again'), f.log.lines.join('\n'));
    assert.equal(f.log.lines.filter((l) => l.includes('catch-up failing')).length, 1, 'one warning for the whole episode');
  } finally {
    await operator.close();
    await f.store.close();
    await redis.stop();
  }
});
