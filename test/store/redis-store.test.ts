// The store contract (store.case.ts) against the Redis store, on a real redis-server started for it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { openRedisStore } from '../../src/store/redis/redis-store.ts';
import type { Store } from '../../src/store/types.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { captureLog, FAST_SCRYPT } from '../helpers/state.ts';
import { storeSuite } from './store.case.ts';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(() => redis.stop());

const open = (): Promise<Store> => openRedisStore({ url: redis.url, state: 'memory', role: 'server', scrypt: FAST_SCRYPT });

storeSuite('redis', {
  async open() {
    await redis.command('FLUSHALL');
    return open();
  },
  // Another server on the same Redis: changes reach it through pub/sub and the version poll.
  peer: () => open(),
});

test('a durability asked for beside Redis is named in a warning: Redis persistence decides', async () => {
  const log = captureLog();
  const store = await openStore({ state: 'memory', redisUrl: redis.url, role: 'command', log, durability: 'strict', scrypt: FAST_SCRYPT });
  await store.close();
  assert.ok(log.lines.some((l) => l.includes('does not apply with --redis-url') && l.includes('"durability":"strict"')), log.lines.join('\n'));
});
