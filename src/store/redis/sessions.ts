// Dashboard sessions and login throttles on Redis, shared by every instance (CONTRACT 8 and 9): a
// session opened through one instance is valid on all, and a login throttle counts on all.
import type { SessionRecord, SessionStore, ThrottleStore } from '../types.ts';
import { accountSessionsKey, sessionKey, throttleKey } from './keys.ts';
import type { RedisLink } from './link.ts';

/**
 * Longer than any session may live (CONTRACT 8: 12 h absolute, 30 min idle), so Redis never ends a
 * live one; the dashboard checks both limits itself. The TTL only lets Redis forget abandoned ones.
 */
const SESSION_TTL_MS = 24 * 3600 * 1000;

export class RedisSessions implements SessionStore {
  constructor(private readonly link: RedisLink) {}

  async put(session: SessionRecord): Promise<void> {
    const ttl = String(SESSION_TTL_MS);
    const index = accountSessionsKey(session.account);
    // Separate keys (a session is looked up by id alone, the index by account): pipelined, not one script.
    await Promise.all([
      this.link.command('sessions', ['SET', sessionKey(session.id), JSON.stringify(session), 'PX', ttl]),
      this.link.command('sessions', ['SADD', index, session.id]),
      this.link.command('sessions', ['PEXPIRE', index, ttl]),
    ]);
  }

  async get(id: string): Promise<SessionRecord | null> {
    const json = (await this.link.command('sessions', ['GET', sessionKey(id)])) as string | null;
    return json === null ? null : (JSON.parse(json) as SessionRecord);
  }

  async delete(id: string): Promise<void> {
    // The id may stay in its account's index: deleteForAccount counts only sessions that still exist.
    await this.link.command('sessions', ['DEL', sessionKey(id)]);
  }

  async deleteForAccount(account: string, keep: string | null): Promise<number> {
    const index = accountSessionsKey(account);
    const ids = ((await this.link.command('sessions', ['SMEMBERS', index])) as string[]).filter((id) => id !== keep);
    if (ids.length === 0) return 0;
    const deleted = (await Promise.all(ids.map((id) => this.link.command('sessions', ['DEL', sessionKey(id)])))) as number[];
    await this.link.command('sessions', ['SREM', index, ...ids]);
    return deleted.reduce((a, b) => a + b, 0);
  }
}

export class RedisThrottle implements ThrottleStore {
  constructor(private readonly link: RedisLink) {}

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    return (await this.link.script('throttle', 'throttleHit', [throttleKey(key)], [String(windowMs), String(now), String(now + windowMs)])) as number;
  }

  async count(key: string, now: number): Promise<number> {
    const [n, until] = (await this.link.command('throttle', ['HMGET', throttleKey(key), 'n', 'until'])) as (string | null)[];
    return n !== null && until !== null && Number(until) > now ? Number(n) : 0;
  }

  async clear(key: string): Promise<void> {
    await this.link.command('throttle', ['DEL', throttleKey(key)]);
  }
}
