// Expiring counters in this process's memory: the login throttle of the file store, where one
// process serves a state directory (a restart forgets them, which only ever unlocks).
import type { ThrottleStore } from '../types.ts';

/** Beyond this many live keys the expired ones are swept, so a flood of addresses cannot grow it forever. */
const SWEEP_AT = 10_000;

export class MemoryThrottle implements ThrottleStore {
  private readonly counts = new Map<string, { n: number; until: number }>();

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    const live = this.live(key, now);
    if (live) return ++live.n;
    if (this.counts.size >= SWEEP_AT) for (const [k, c] of this.counts) if (c.until <= now) this.counts.delete(k);
    this.counts.set(key, { n: 1, until: now + windowMs });
    return 1;
  }

  async count(key: string, now: number): Promise<number> {
    return this.live(key, now)?.n ?? 0;
  }

  async clear(key: string): Promise<void> {
    this.counts.delete(key);
  }

  private live(key: string, now: number): { n: number; until: number } | undefined {
    const c = this.counts.get(key);
    if (c && c.until <= now) {
      this.counts.delete(key);
      return undefined;
    }
    return c;
  }
}
