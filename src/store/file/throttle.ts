// Expiring counters in this process's memory: the login throttle of the file store, where one
// process serves a state directory (a restart forgets them, which only ever unlocks).
import type { AttemptKeys, AttemptLimits, ThrottleStore } from '../types.ts';

/** Beyond this many live keys the expired ones are swept, so a flood of addresses cannot grow it forever. */
const SWEEP_AT = 10_000;

interface Count {
  n: number;
  until: number;
}

export class MemoryThrottle implements ThrottleStore {
  private readonly counts = new Map<string, Count>();

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    return this.add(key, windowMs, now);
  }

  async count(key: string, now: number): Promise<number> {
    return this.live(key, now)?.n ?? 0;
  }

  async clear(key: string): Promise<void> {
    this.counts.delete(key);
  }

  // Atomic because nothing here awaits: JavaScript runs the check and the three adds as one step.
  async reserve(keys: AttemptKeys, limits: AttemptLimits, now: number): Promise<boolean> {
    if ((this.live(keys.address, now)?.n ?? 0) >= limits.address) return false;
    if ((this.live(keys.account, now)?.n ?? 0) >= limits.account && (this.live(keys.pair, now)?.n ?? 0) > 0) return false;
    this.add(keys.address, limits.windowMs, now);
    this.add(keys.account, limits.windowMs, now);
    this.add(keys.pair, limits.windowMs, now);
    return true;
  }

  async release(keys: AttemptKeys, now: number): Promise<void> {
    for (const key of [keys.address, keys.account]) {
      const c = this.live(key, now);
      if (c && c.n > 0) c.n--;
    }
    this.counts.delete(keys.pair);
  }

  private add(key: string, windowMs: number, now: number): number {
    const live = this.live(key, now);
    if (live) return ++live.n;
    if (this.counts.size >= SWEEP_AT) for (const [k, c] of this.counts) if (c.until <= now) this.counts.delete(k);
    this.counts.set(key, { n: 1, until: now + windowMs });
    return 1;
  }

  private live(key: string, now: number): Count | undefined {
    const c = this.counts.get(key);
    if (c && c.until <= now) {
      this.counts.delete(key);
      return undefined;
    }
    return c;
  }
}
