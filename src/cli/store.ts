// The store a command works on (CONTRACT 6 and 9): Redis with --redis-url (or
// $CELEBRITY_API_REDIS_URL), else the state directory's files, opened beside the servers that may be
// running on it, and closed when the command ends.
import { ConfigError, resolveRedisUrl } from '../config.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/types.ts';
import { stateDir, UsageError, type Io } from './io.ts';

/** The flags every store command takes. */
export const STORE_FLAGS = { state: { type: 'string' }, 'redis-url': { type: 'string' } } as const;

export interface StoreFlags {
  readonly state?: string | undefined;
  readonly 'redis-url'?: string | undefined;
}

/** The Redis URL of a command line, or null; a malformed one is a usage error. */
function redisUrlOf(flags: StoreFlags, io: Io): string | null {
  try {
    return resolveRedisUrl(flags['redis-url'], io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

/** Opens the store beside any running servers, runs `body`, closes it. */
export async function withStore<T>(flags: StoreFlags, io: Io, body: (store: Store) => Promise<T>): Promise<T> {
  const redisUrl = redisUrlOf(flags, io);
  const store = await openStore({ state: stateDir(flags.state, io), redisUrl, role: 'command' });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}
