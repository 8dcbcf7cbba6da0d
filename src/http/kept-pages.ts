// List pages and details as they were sent, kept by strong ETag and request target (issue 20): a page
// asked again (a first page, the next page of a popular filter, the same request from many clients) is
// a Map lookup instead of a query and a copy of each record's bytes, which cost 2-5 µs for 20 items,
// as much as the rest of the request; a popular detail, instead of its runs copied (about 1 µs). A page is kept the second time it is asked. The tag names the
// data and the serving day, and the target only by a 32-bit hash: the whole target is compared too.
// An entry is never stale, only old: a reload's tags differ, and old entries make room as the least
// recently used. Per thread, like the AnswerCache of compressed answers.

/** About 1,200 pages of 7 KB: the hot pages of a busy server, not every page ever asked. */
export const KEPT_PAGES_BYTES = 8 * 1024 * 1024;
/** Tags asked once and not kept (yet) that are remembered: a page is kept the second time it is asked. */
export const ASKED_ONCE_KEYS = 4096;
/** Counted per entry besides its body and target: the Map entry, the tag, the record. */
const ENTRY_BYTES = 128;

interface Kept {
  readonly target: string;
  readonly body: Buffer;
}

/**
 * Kept by tag, the target compared on a hit: the tag is short and made for the request anyway, so a
 * lookup hashes 25 characters, not a key of tag and target made per request (a new string of 90,
 * hashed whole: about 110 ns). Two targets with one tag (a 32-bit hash collision) take turns in the
 * entry, each only ever answered with its own page.
 */
export class KeptPages {
  private readonly entries = new Map<string, Kept>();
  /**
   * Tags asked once, not kept (yet). A page is copied into memory of its own to be kept (1-2 µs for 7
   * KB: the body itself is a slice of a shared slab, which a kept slice would hold whole), so a target
   * asked only once (a crawler's deep pages, a one-off filter) costs a Map entry, not a copy.
   */
  private readonly asked = new Map<string, number>();
  /**
   * The same tags by their slot in a ring, the oldest overwritten: no iteration over `asked` to find
   * its oldest (V8 leaves deleted Map entries as holes that an iterator steps over one by one, so
   * taking the first key after many deletions cost 1-2 µs).
   */
  private readonly ring: (string | undefined)[] = new Array<string | undefined>(ASKED_ONCE_KEYS);
  private next = 0;
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly budgetBytes = KEPT_PAGES_BYTES) {}

  /** The page kept for `tag` and `target`, or undefined: a miss, the caller builds it and calls keep(). */
  get(tag: string, target: string): Buffer | undefined {
    const kept = this.entries.get(tag);
    if (kept === undefined || kept.target !== target) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(tag); // most recently used last: Map order is the eviction order
    this.entries.set(tag, kept);
    return kept.body;
  }

  /**
   * The page `body` just built for `tag` and `target`: noted the first time, kept (a copy) the second;
   * the least recently used go until the budget holds.
   */
  keep(tag: string, target: string, body: Buffer): void {
    if (!this.asked.delete(tag)) {
      const slot = this.next;
      const old = this.ring[slot];
      if (old !== undefined && this.asked.get(old) === slot) this.asked.delete(old);
      this.ring[slot] = tag;
      this.asked.set(tag, slot);
      this.next = (slot + 1) % ASKED_ONCE_KEYS;
      return;
    }
    const cost = costOf(tag, target, body);
    if (cost > this.budgetBytes) return;
    const old = this.entries.get(tag);
    if (old !== undefined) {
      this.entries.delete(tag);
      this.bytes -= costOf(tag, old.target, old.body);
    }
    const copy = Buffer.allocUnsafeSlow(body.length);
    body.copy(copy);
    this.entries.set(tag, { target, body: copy });
    this.bytes += cost;
    for (const [t, k] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(t);
      this.bytes -= costOf(t, k.target, k.body);
    }
  }

  /** Kept entries and their bytes, for /metrics and tests. */
  get size(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

/** Bytes an entry holds, counted against the budget. */
export const costOf = (tag: string, target: string, body: Buffer): number => body.length + tag.length + target.length + ENTRY_BYTES;
