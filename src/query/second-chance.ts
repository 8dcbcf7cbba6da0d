// Eviction for the per-thread caches of answers (kept pages, compressed answers, search matches):
// second chance (CLOCK) over a Map's insertion order, so that a hit only sets a flag. A hit used to
// move its entry to the end (a delete and a set of the same key), but V8 leaves a deleted entry in
// its bucket's chain until the table is rebuilt: a hot key set again on every hit made each lookup of
// it walk a chain of its own dead entries, 1.1-1.7 µs a hit in a Map of 1,000 (Node 20 and 26)
// against 10 ns for a plain get. The hand is an iterator kept between evictions: it goes on from
// where it stopped (an entry set since is met when the hand gets there, a deleted one is skipped),
// so finding the next victim does not walk again over the holes earlier evictions left.
// The newest entry is never the victim while there is another: CLOCK puts a new entry behind the
// hand, but a Map puts it at the end, where a hand that has reached the end meets it first. Taking it
// there left the hand at the end for the next one: once every other entry had been used since the
// hand last passed, each new entry went as soon as it was set, and the cache never took one again.

/** An entry's flag: set by a hit, cleared when the hand passes it. */
export interface Used {
  used: boolean;
}

export class SecondChance<K, V extends Used> {
  private hand: IterableIterator<[K, V]> | null = null;
  /** The entry after the hand, read to know whether the hand's is the newest: the next one it gives. */
  private ahead: [K, V] | null = null;

  constructor(private readonly map: Map<K, V>) {}

  /**
   * The entry to evict next, undefined when the map is empty: the first one the hand finds that was
   * not used since it last passed (those it passes lose their flag), the newest (the last set) only
   * when it is alone. The caller deletes it.
   */
  next(): [K, V] | undefined {
    if (this.map.size === 0) return undefined;
    for (;;) {
      const entry = this.step();
      if (entry === undefined) {
        this.hand = this.map.entries(); // round again from the oldest
        continue;
      }
      if (entry[1].used) {
        entry[1].used = false;
        continue;
      }
      const after = this.hand!.next();
      if (after.done === true) {
        // The newest: passed over, unless it is the only one.
        if (this.map.size === 1) return entry;
        this.hand = this.map.entries();
        continue;
      }
      this.ahead = after.value;
      return entry;
    }
  }

  /** The hand's next entry still in the map, or undefined at the end of the round. */
  private step(): [K, V] | undefined {
    const ahead = this.ahead;
    if (ahead !== null) {
      this.ahead = null;
      // Deleted since it was read (or set anew: the iterator meets it again at the end), it is skipped.
      if (this.map.get(ahead[0]) === ahead[1]) return ahead;
    }
    if (this.hand === null) return undefined;
    const step = this.hand.next();
    return step.done === true ? undefined : step.value;
  }
}
