// Eviction for the per-thread caches of answers (kept pages, compressed answers, search matches):
// second chance (CLOCK) over a Map's insertion order, so that a hit only sets a flag. A hit used to
// move its entry to the end (a delete and a set of the same key), but V8 leaves a deleted entry in
// its bucket's chain until the table is rebuilt: a hot key set again on every hit made each lookup of
// it walk a chain of its own dead entries, 1.1-1.7 µs a hit in a Map of 1,000 (Node 20 and 26)
// against 10 ns for a plain get. The hand is an iterator kept between evictions: it goes on from
// where it stopped (an entry set since is met when the hand gets there, a deleted one is skipped),
// so finding the next victim does not walk again over the holes earlier evictions left.

/** An entry's flag: set by a hit, cleared when the hand passes it. */
export interface Used {
  used: boolean;
}

export class SecondChance<K, V extends Used> {
  private hand: IterableIterator<[K, V]> | null = null;

  constructor(private readonly map: Map<K, V>) {}

  /**
   * The entry to evict next, undefined when the map is empty: the first one the hand finds that was
   * not used since it last passed (those it passes lose their flag). The caller deletes it.
   */
  next(): [K, V] | undefined {
    if (this.map.size === 0) return undefined;
    for (;;) {
      let step = this.hand?.next();
      if (step === undefined || step.done === true) {
        this.hand = this.map.entries(); // round again from the oldest
        step = this.hand.next();
      }
      const entry = step.value as [K, V];
      if (!entry[1].used) return entry;
      entry[1].used = false;
    }
  }
}
