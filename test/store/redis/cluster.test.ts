// The Redis store on a real three-master Redis Cluster, each master with one replica (issue 22): the
// store contract, three serve processes sharing exact quotas over accounts on every master, and a
// master SIGKILLed under load. One cluster for the whole file (six processes, started in parallel).
import { after, before } from 'node:test';
import { openRedisStore } from '../../../src/store/redis/redis-store.ts';
import type { Store } from '../../../src/store/types.ts';
import { startCluster, type RedisCluster } from '../../helpers/redis.ts';
import { FAST_SCRYPT } from '../../helpers/state.ts';
import { storeSuite } from '../store.case.ts';

let cluster: RedisCluster;
before(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 });
});
after(() => cluster?.stop());

const open = (): Promise<Store> => openRedisStore({ url: cluster.url, state: 'memory', role: 'server', scrypt: FAST_SCRYPT });

storeSuite('redis cluster', {
  async open() {
    await cluster.flush();
    return open();
  },
  peer: () => open(),
});
