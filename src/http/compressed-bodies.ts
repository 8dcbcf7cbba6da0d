// Compressed forms of the 200 bodies that repeat, one set per snapshot so a reload starts clean: each
// collection's first page (default limit, every sort) compressed at load time with the best settings
// on the thread pool, and details compressed on their first request and kept up to a byte budget.
// Any other body is compressed per request (app.ts). A body holding `age` (a collection marked `late`)
// changes with the UTC day, so its entries remember the day they were made for; the others are made
// for day 0 and kept for the life of the snapshot.
import type { Snapshot } from '../data/snapshot.ts';
import { COLLECTIONS, type CollectionName } from '../resources/types.ts';
import { compressBest, compressNow, MIN_COMPRESS_BYTES, type Encoding } from './compress.ts';
import { listPage } from './handlers.ts';
import { SecondChance, type Used } from '../query/second-chance.ts';
import { ASKED_ONCE_SLOTS, askedSlot } from './kept-pages.ts';

/** One body's compressed forms, made for the serving day `today` (yyyymmdd). */
export interface Packed {
  today: number;
  br: Buffer | null;
  gzip: Buffer | null;
}

/**
 * Compressed details kept per snapshot. A million records would not fit and are not asked for evenly:
 * the first asked are kept, the oldest make room (about 30,000 details of a few KB in both codings).
 */
const DETAIL_BUDGET_BYTES = 32 * 1024 * 1024;

const empty = (): Packed => ({ today: 0, br: null, gzip: null });

/** Returns `p`'s form in `encoding` for `today`, compressing `body` now when it is missing. */
export function packedOrNow(p: Packed, today: number, encoding: Encoding, body: Buffer): Buffer {
  if (p.today !== today) {
    p.today = today;
    p.br = p.gzip = null;
  }
  return (p[encoding] ??= compressNow(body, encoding));
}

/** A first page's best forms, made for `day` (CompressedBodies.warm): kept by its set, or handed to another thread's. */
export interface PagePack {
  readonly collection: CollectionName;
  /** '' or 'sort=<name>' */
  readonly query: string;
  readonly day: number;
  readonly br: Buffer;
  readonly gzip: Buffer;
}

export class CompressedBodies {
  /** Collection -> query string of a first page ('' or 'sort=<name>') -> its forms. */
  private readonly pages = new Map<CollectionName, Map<string, Packed>>();
  private readonly details = new Map<CollectionName, Map<number, Packed>>();
  private detailBytes = 0;

  /** The snapshot these bodies are of; null once retired (a reload replaced them). */
  private live: Snapshot | null;

  constructor(snapshot: Snapshot) {
    this.live = snapshot;
    for (const c of COLLECTIONS) {
      const queries = ['', ...snapshot.collections[c].def.sorts.map((s) => `sort=${s.name}`)];
      this.pages.set(c, new Map(queries.map((q) => [q, empty()])));
      this.details.set(c, new Map());
    }
  }

  get snapshot(): Snapshot | null {
    return this.live;
  }

  /**
   * A reload replaced these bodies: a warm still compressing stops at its next page and no longer
   * holds the old snapshot meanwhile. It held it for the whole warm (on the thread pool, behind the
   * reload's own reads), past the collection after the reload: the replaced collection stayed.
   */
  retire(): void {
    this.live = null;
  }

  /** The day `collection`'s bodies are made for: `today` where a field depends on it, else 0 (never stale). */
  day(collection: CollectionName, today: number): number {
    return this.live?.collections[collection].def.late ? today : 0;
  }

  /** The first page of `query`, uncompressed, or null when there is none worth compressing (or retired). */
  private pageBody(collection: CollectionName, query: string, today: number): Buffer | null {
    if (this.live === null) return null;
    const outcome = listPage(this.live.collections[collection], query, today);
    return outcome.ok && outcome.body.length >= MIN_COMPRESS_BYTES ? outcome.body : null;
  }

  /** The forms of a first page, or null when `query` is not one (then the body is compressed per request). */
  page(collection: CollectionName, query: string): Packed | null {
    return this.pages.get(collection)!.get(query) ?? null;
  }

  /** A detail's form in `encoding`, from the cache or compressed now and kept while the budget allows. */
  detail(collection: CollectionName, id: number, today: number, encoding: Encoding, body: Buffer): Buffer {
    const byId = this.details.get(collection)!;
    let p = byId.get(id);
    if (p === undefined) byId.set(id, (p = empty()));
    const before = (p.br?.length ?? 0) + (p.gzip?.length ?? 0);
    const out = packedOrNow(p, today, encoding, body);
    this.detailBytes += (p.br?.length ?? 0) + (p.gzip?.length ?? 0) - before;
    if (this.detailBytes > DETAIL_BUDGET_BYTES) this.evict(byId, id);
    return out;
  }

  /** Drops the oldest entries (Map order) until the details fit again, never `keep`. */
  private evict(byId: Map<number, Packed>, keep: number): void {
    for (const map of [byId, ...this.details.values()]) {
      for (const [id, p] of map) {
        if (this.detailBytes <= DETAIL_BUDGET_BYTES) return;
        if (map === byId && id === keep) continue;
        this.detailBytes -= (p.br?.length ?? 0) + (p.gzip?.length ?? 0);
        map.delete(id);
      }
    }
  }

  /**
   * Compresses every first page in both codings with the best settings, one at a time on the thread
   * pool; `lateOnly`: those of the collections whose bodies change with the day (a new day). Each
   * page's forms go to `made`: by default this set keeps them (give); the threads' main thread
   * collects them for every thread instead (src/threads/pages.ts).
   */
  async warm(today: number, lateOnly = false, made: (p: PagePack) => void = (p) => this.give(p)): Promise<void> {
    for (const [collection, queries] of this.pages) {
      // Nothing of the snapshot is held across an await: only the page's own bytes.
      if (this.live === null) return;
      if (lateOnly && !this.live.collections[collection].def.late) continue;
      const day = this.day(collection, today);
      for (const query of queries.keys()) {
        const body = this.pageBody(collection, query, today);
        if (body === null) continue;
        const br = await compressBest(body, 'br');
        const gzip = await compressBest(body, 'gzip');
        made({ collection, query, day, br, gzip });
      }
    }
  }

  /** Keeps a first page's best forms, made here (warm) or by another thread for the same snapshot. */
  give(made: PagePack): void {
    const p = this.pages.get(made.collection)?.get(made.query);
    // A request may have filled it meanwhile with the quick setting: the best replaces it (the same
    // content under the same tag; no Range request is served, so no client mixes the two), but a
    // later day's stays.
    if (p !== undefined && p.today <= made.day) Object.assign(p, { today: made.day, br: made.br, gzip: made.gzip });
  }
}

/**
 * The compressed forms of other answers (filtered, searched or deep pages; details of an older
 * snapshot never come here), kept by strong ETag, request target and coding, so an answer asked
 * again is not compressed again (issue 20). The tag names the data and the day; the target is
 * compared too, since the tag holds only a 32-bit hash of it (two targets with the same hash were
 * answered the same bytes): two targets with one tag take turns in the entry. An entry is never
 * stale, only old. Entries not asked for lately make room, within a byte budget
 * (src/query/second-chance.ts).
 *
 * An answer is kept the second time its tag is asked (as kept pages are: kept-pages.ts), its forms
 * in both codings in one entry. An answer asked once (a crawler's pages, a one-off filter: every
 * request of the bench's first-request rows) is compressed into the send slab and given back once
 * sent: keeping each one cost, besides its copy, an ArrayBuffer of its own and a Map entry that
 * live until evicted (the old generation's garbage, the collections that external memory sets
 * off) and a lookup in a Map of 10,000 changing keys by a key string of tag and target made per
 * request. Over real sockets at 100k, that was about a tenth of a compressed first request's CPU.
 */
export class AnswerCache {
  /** By tag: the target it was made for and its forms. */
  private readonly entries = new Map<string, Answer>();
  /** Who goes when the budget is full: answers not asked for since the hand last passed them. */
  private readonly hand = new SecondChance(this.entries);
  /** Tags asked once and not kept (yet), each in the slot its hash picks (kept-pages.ts). */
  private readonly asked: (string | undefined)[] = new Array<string | undefined>(ASKED_ONCE_SLOTS).fill(undefined);
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly budgetBytes = ANSWER_BUDGET_BYTES) {}

  /**
   * `body` compressed in `encoding`: kept from an earlier request with the same tag and target, or
   * made now (kept from its tag's second ask on: a buffer of its own; before, a slice of the send slab).
   */
  get(tag: string, target: string, encoding: Encoding, body: Buffer): Buffer {
    let kept = this.entries.get(tag);
    if (kept !== undefined && kept.target === target) {
      const out = kept[encoding];
      if (out !== null) {
        this.hits++;
        kept.used = true;
        return out;
      }
    }
    this.misses++;
    if (kept === undefined || kept.target !== target) {
      const slot = askedSlot(tag);
      if (this.asked[slot] !== tag) {
        this.asked[slot] = tag;
        return compressNow(body, encoding, false);
      }
      this.asked[slot] = undefined;
    }
    const out = compressNow(body, encoding);
    if (kept !== undefined && kept.target !== target) {
      // Another target with this tag: replaced in place.
      this.bytes -= answerCost(tag, kept);
      kept = undefined;
    }
    if (kept === undefined) {
      kept = { target, br: null, gzip: null, used: false };
      if (answerCost(tag, kept) + out.length > this.budgetBytes) return out;
      this.entries.set(tag, kept);
      this.bytes += answerCost(tag, kept);
    }
    kept[encoding] = out;
    this.bytes += out.length;
    while (this.bytes > this.budgetBytes) {
      const [t, a] = this.hand.next()!;
      this.entries.delete(t);
      this.bytes -= answerCost(t, a);
    }
    return out;
  }

  /** Kept entries (an answer's forms in both codings are one) and their bytes, for /metrics. */
  get size(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

interface Answer extends Used {
  readonly target: string;
  br: Buffer | null;
  gzip: Buffer | null;
}

/** Counted per entry besides its forms, tag and target: the Map entry and the record. */
const ANSWER_ENTRY_BYTES = 96;

/** Bytes an entry holds, counted against the budget. */
const answerCost = (tag: string, a: Answer): number => (a.br?.length ?? 0) + (a.gzip?.length ?? 0) + tag.length + a.target.length + ANSWER_ENTRY_BYTES;

/** About 10,000 compressed pages of 1.5 KB. */
const ANSWER_BUDGET_BYTES = 16 * 1024 * 1024;
