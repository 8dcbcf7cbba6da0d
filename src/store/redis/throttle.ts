// Login throttles on Redis, shared by every instance (CONTRACT 8 and 9): a failure counted through
// one instance counts on all, and a password check is reserved by one script, so parallel requests
// spread over instances cannot all pass the check before any of them is counted.
import type { AttemptKeys, AttemptLimits, ThrottleStore } from '../types.ts';
import { throttleKey } from './keys.ts';
import type { RedisLink } from './link.ts';

const keysOf = (k: AttemptKeys) => [throttleKey(k.address), throttleKey(k.account), throttleKey(k.pair)];

export class RedisThrottle implements ThrottleStore {
  constructor(private readonly link: RedisLink) {}

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    return (await this.link.script('throttle', 'throttleHit', [throttleKey(key)], [String(windowMs), String(now)])) as number;
  }

  async count(key: string, now: number): Promise<number> {
    const [n, until] = (await this.link.command('throttle', ['HMGET', throttleKey(key), 'n', 'until'])) as (string | null)[];
    return n !== null && until !== null && Number(until) > now ? Number(n) : 0;
  }

  async clear(key: string): Promise<void> {
    await this.link.command('throttle', ['DEL', throttleKey(key)]);
  }

  async reserve(keys: AttemptKeys, limits: AttemptLimits, now: number): Promise<boolean> {
    const args = [String(limits.address), String(limits.account), String(limits.windowMs), String(now)];
    return (await this.link.script('throttle', 'throttleReserve', keysOf(keys), args)) === 1;
  }

  async release(keys: AttemptKeys, now: number): Promise<void> {
    await this.link.script('throttle', 'throttleRelease', keysOf(keys), [String(now)]);
  }
}
