// The store contract (store.case.ts) against the Redis store, on a real redis-server started for it.
import { after, before } from 'node:test';
import { openRedisStore } from '../../src/store/redis/redis-store.ts';
import type { Store } from '../../src/store/types.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { FAST_SCRYPT } from '../helpers/state.ts';
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
