// The Store on Redis (or Valkey), for many instances behind a load balancer (CONTRACT 9): accounts,
// keys, sessions, throttles and counters live in Redis; each instance keeps a replica of the keys and
// its own JSONL usage log of what it served in its state directory.
import { DEFAULT_SCRYPT, type ScryptParams } from '../../access/secrets.ts';
import { silentLogger, type Logger } from '../../log.ts';
import { Counters } from '../file/counters.ts';
import { usageLogMetrics } from '../file/file-store.ts';
import { NULL_SINK, UsageLog } from '../file/usage-log.ts';
import { ensureStateDir } from '../state-dir.ts';
import type { Store } from '../types.ts';
import { RedisAccounts } from './accounts.ts';
import { RedisLink } from './link.ts';
import { RedisQuota } from './quota.ts';
import { KeyReplica } from './replica.ts';
import { RedisSessions } from './sessions.ts';
import { RedisThrottle } from './throttle.ts';

export interface RedisStoreOptions {
  /** redis://, redis+cluster://host:port,... or redis+sentinel://host:port,.../name (rediss... for TLS): url.ts. */
  readonly url: string;
  /** This instance's state directory (its own usage log), or 'memory' for none. */
  readonly state: string;
  /** 'server' follows account changes and writes the local usage log; 'command' does neither. */
  readonly role: 'server' | 'command';
  readonly clock?: () => number;
  readonly log?: Logger;
  readonly scrypt?: ScryptParams;
  /** Longest wait for a Redis answer before the request gets 503; default 1000 ms. */
  readonly timeoutMs?: number;
  /** How long opening waits for Redis before it fails; default 3000 ms. */
  readonly connectTimeoutMs?: number;
  /** Period of the version poll behind the 2 s propagation guarantee; default 500 ms. */
  readonly pollMs?: number;
  /** How long a key is kept once Redis lacks its account (a node that lost data or is about to be replaced); default 60 s (replica.ts). */
  readonly missingGraceMs?: number;
  /** Flush period of the local usage log; default 1000 ms. */
  readonly flushIntervalMs?: number;
}

export async function openRedisStore(options: RedisStoreOptions): Promise<Store> {
  const log = options.log ?? silentLogger;
  const clock = options.clock ?? Date.now;
  const connection = { url: options.url, timeoutMs: options.timeoutMs ?? 1000, connectTimeoutMs: options.connectTimeoutMs ?? 3000 };
  const link = await RedisLink.open({ ...connection, log });
  const replica = new KeyReplica(link, log, options.missingGraceMs === undefined ? {} : { missingGraceMs: options.missingGraceMs });
  let usageLog: UsageLog | null = null;
  try {
    if (options.role === 'server') {
      await replica.follow(options.pollMs ?? 500);
      if (options.state !== 'memory') {
        await ensureStateDir(options.state);
        // CONTRACT 9: what this instance served, as the file store logs it; Redis holds the quota.
        usageLog = (await UsageLog.open(options.state, new Counters(), { flushIntervalMs: options.flushIntervalMs ?? 1000, log })).log;
      }
    }
  } catch (err) {
    replica.stop();
    await link.close();
    throw err;
  }
  const accounts = new RedisAccounts(link, replica, { now: () => new Date(clock()).toISOString(), scrypt: options.scrypt ?? DEFAULT_SCRYPT });
  // A server's threads (serve --threads) each connect on their own: src/threads/redis-gate.ts.
  const quota = new RedisQuota(link, usageLog ?? NULL_SINK, options.role === 'server' ? connection : undefined);
  let closing: Promise<void> | null = null;
  return {
    kind: 'redis',
    accounts,
    lookupKey: (digest) => replica.lookup(digest),
    onKeysChanged: (listener) => replica.onChange(listener),
    quota,
    sessions: new RedisSessions(link, clock),
    throttle: new RedisThrottle(link),
    exportAccounts: () => accounts.records(),
    importAccounts: (records, replace) => accounts.importRecords(records, replace),
    status: () => ({
      healthy: link.healthy,
      deployment: { mode: link.mode, node: link.lastAnswered() },
      metrics: [
        ...link.metrics(),
        { name: 'celebrity_api_store_settles_lost_total', type: 'counter', help: 'Units that a non-200 answer should have given back but Redis did not confirm: they stay counted.', value: quota.lostSettles },
        ...replica.metrics(),
        ...(usageLog ? usageLogMetrics(usageLog.status()) : []),
      ],
    }),
    flush: () => usageLog?.flush() ?? Promise.resolve(),
    close() {
      closing ??= (async () => {
        replica.stop();
        try {
          await usageLog?.close();
        } finally {
          await link.close();
        }
      })();
      return closing;
    },
  };
}
