// Picks the store (CONTRACT 9): Redis when a URL is given, else the state directory's files. The one
// place that knows there are two: serve, the CLI commands and startServer() all open stores here.
import type { ScryptParams } from '../access/secrets.ts';
import type { Logger } from '../log.ts';
import type { Plan, Quota } from '../access/plans.ts';
import { openFileStore } from './file/file-store.ts';
import { openRedisStore } from './redis/redis-store.ts';
import type { Durability, Store } from './types.ts';

export interface OpenStoreOptions {
  /** The state directory (accounts and counters for the file store; the local usage log with Redis), or 'memory'. */
  readonly state: string;
  /** The shared store: one Redis, a cluster or a Sentinel set (store/redis/url.ts); null or absent: the state directory. */
  readonly redisUrl?: string | null;
  /** 'server': serves requests and follows changes; 'command': a CLI command beside running servers. */
  readonly role: 'server' | 'command';
  readonly clock?: () => number;
  readonly log?: Logger;
  /** Which 200s wait for their usage record on disk (file store; with Redis the reservation is the record). */
  readonly durability?: Durability;
  /** The quota per plan, for the file store's check of the usage log it replays (a month past its quota is named). */
  readonly quotas?: Readonly<Record<Plan, Quota>>;
  readonly scrypt?: ScryptParams;
}

export function openStore(options: OpenStoreOptions): Promise<Store> {
  const { redisUrl, durability, quotas, ...common } = options;
  if (redisUrl) {
    if (durability !== undefined && durability !== 'auto') {
      common.log?.warn('--usage-durability does not apply with --redis-url: a reservation Redis acknowledged is the record, and its appendfsync decides what a crash keeps', { durability });
    }
    return openRedisStore({ url: redisUrl, ...common });
  }
  return openFileStore({ ...common, ...(durability ? { durability } : {}), ...(quotas ? { quotas } : {}) });
}
