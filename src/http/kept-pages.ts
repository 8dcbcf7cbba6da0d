// List pages and details as they were sent, kept by strong ETag and request target (issue 20): a page
// asked again (a first page, the next page of a popular filter, the same request from many clients) is
// a Map lookup instead of a query and a copy of each record's bytes, which cost 2-5 µs for 20 items,
// as much as the rest of the request; a popular detail, instead of its runs copied (about 1 µs). A
// page is kept the second time it is asked. The tag names the data and the serving day, and the
// target only by a 32-bit hash: the whole target is compared too. An entry is never stale, only old:
// a reload's tags differ, and old entries make room, those not asked for lately first. Per thread,
// like the AnswerCache of compressed answers.
import { SecondChance, type Used } from '../query/second-chance.ts';

/** About 1,200 pages of 7 KB: the hot pages of a busy server, not every page ever asked. */
export const KEPT_PAGES_BYTES = 8 * 1024 * 1024;
/** Slots for tags asked once and not kept (yet): a page is kept the second time it is asked. A power of 2. */
export const ASKED_ONCE_SLOTS = 4096;
/** Counted per entry besides its body and target: the Map entry, the tag, the record. */
const ENTRY_BYTES = 128;

/** A kept page as the request path answers it: made once when kept, so a hit allocates nothing. */
export interface KeptAnswer {
  readonly ok: true;
  readonly body: Buffer;
}

interface Kept extends Used {
  readonly target: string;
  readonly answer: KeptAnswer;
}

/**
 * Kept by tag, the target compared on a hit: the tag is short and made for the request anyway, so a
 * lookup hashes 25 characters, not a key of tag and target made per request (a new string of 90,
 * hashed whole: about 110 ns). Two targets with one tag (a 32-bit hash collision) take turns in the
 * entry, each only ever answered with its own page.
 */
export class KeptPages {
  private readonly entries = new Map<string, Kept>();
  /** Who goes when the budget is full: pages not asked for since the hand last passed them. */
  private readonly hand = new SecondChance(this.entries);
  /**
   * Tags asked once, not kept (yet), each in the slot its hash picks; a tag that lands on a taken slot
   * takes it. A page is copied into memory of its own to be kept (1-2 µs for 7 KB: the body itself is
   * a slice of a shared slab, which a kept slice would hold whole), so a target asked only once (a
   * crawler's deep pages, a one-off filter) costs a slot, not a copy. An array indexed by a hash, not
   * a Map with a ring for its oldest: noting a tag in the Map cost 0.5-0.9 µs (a delete, a get, a
   * delete and a set on a Map of 4,096 changing keys), as much as the rest of the bookkeeping of a
   * first request; a slot costs a hash of the tag's 25 characters and a compare.
   */
  private readonly asked: (string | undefined)[] = new Array<string | undefined>(ASKED_ONCE_SLOTS).fill(undefined);
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly budgetBytes = KEPT_PAGES_BYTES) {}

  /**
   * The page kept for `tag` and `target`, or undefined: a miss, the caller builds it and calls keep().
   * A hit is the entry's own answer object, the same every time (the handlers' outcome shape, made
   * per hit it cost 40 bytes of garbage per request).
   */
  get(tag: string, target: string): KeptAnswer | undefined {
    const kept = this.entries.get(tag);
    if (kept === undefined || kept.target !== target) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    kept.used = true;
    return kept.answer;
  }

  /**
   * The page `body` just built for `tag` and `target`: noted the first time, kept (a copy) the second;
   * pages not asked for since the hand last passed go until the budget holds (second-chance.ts).
   */
  keep(tag: string, target: string, body: Buffer): void {
    const slot = askedSlot(tag);
    if (this.asked[slot] !== tag) {
      this.asked[slot] = tag;
      return;
    }
    this.asked[slot] = undefined;
    const cost = costOf(tag, target, body);
    if (cost > this.budgetBytes) return;
    const old = this.entries.get(tag);
    if (old !== undefined) this.bytes -= costOf(tag, old.target, old.answer.body); // another target, one tag: replaced in place
    const copy = Buffer.allocUnsafeSlow(body.length);
    body.copy(copy);
    this.entries.set(tag, { target, answer: { ok: true, body: copy }, used: false });
    this.bytes += cost;
    while (this.bytes > this.budgetBytes) {
      const [t, k] = this.hand.next()!;
      this.entries.delete(t);
      this.bytes -= costOf(t, k.target, k.answer.body);
    }
  }

  /** Kept entries and their bytes, for /metrics and tests. */
  get size(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

/** The slot of a tag asked once: FNV-1a over its characters. */
export function askedSlot(tag: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tag.length; i++) h = Math.imul(h ^ tag.charCodeAt(i), 0x01000193);
  return (h >>> 0) & (ASKED_ONCE_SLOTS - 1);
}

/** Bytes an entry holds, counted against the budget. */
export const costOf = (tag: string, target: string, body: Buffer): number => body.length + tag.length + target.length + ENTRY_BYTES;
