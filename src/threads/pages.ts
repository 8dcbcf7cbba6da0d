// The first pages' best compressed forms (compressed-bodies.ts warm: brotli 11 and gzip 9 of every
// collection's first page, about 0.35 s of CPU at 100k), made once per snapshot by the main thread
// for every thread, in one SharedArrayBuffer the threads answer from in place. Each thread made its
// own before, so a second thread cost that CPU again at each start, each reload and each new day.
import type { Snapshot } from '../data/snapshot.ts';
import { CompressedBodies, type PagePack } from '../http/compressed-bodies.ts';
import type { CollectionName } from '../resources/types.ts';

/** The forms of one snapshot's first pages as posted: their bytes, and per page where they are. */
export interface SharedPages {
  /** The snapshot they are of (Snapshot.version): a thread on another one drops them. */
  readonly version: string;
  readonly bytes: SharedArrayBuffer;
  /** collection, query, day, br's length, gzip's length; each page's bytes follow the one before. */
  readonly pages: readonly (readonly [CollectionName, string, number, number, number])[];
}

/** `made` in one SharedArrayBuffer. */
export function sharePages(version: string, made: Iterable<PagePack>): SharedPages {
  const all = [...made];
  const bytes = new SharedArrayBuffer(all.reduce((n, p) => n + p.br.length + p.gzip.length, 0));
  const into = new Uint8Array(bytes);
  let at = 0;
  for (const p of all) {
    into.set(p.br, at);
    into.set(p.gzip, at + p.br.length);
    at += p.br.length + p.gzip.length;
  }
  return { version, bytes, pages: all.map((p) => [p.collection, p.query, p.day, p.br.length, p.gzip.length] as const) };
}

/** The pages of `shared`, their forms read in place (Buffers over the shared memory, no copy). */
export function unsharePages(shared: SharedPages): PagePack[] {
  let at = 0;
  return shared.pages.map(([collection, query, day, brLength, gzipLength]) => {
    const br = Buffer.from(shared.bytes, at, brLength);
    const gzip = Buffer.from(shared.bytes, at + brLength, gzipLength);
    at += brLength + gzipLength;
    return { collection, query, day, br, gzip };
  });
}

/**
 * The main thread's maker of the first pages' forms: every page of a new snapshot (the start, a
 * reload), and those whose bodies change with the day (a collection marked `late`) on a new day;
 * each time the whole set goes to `post`, for every thread.
 */
export class PagePacker {
  /** The last set made, for a thread started later. */
  private shared: SharedPages | null = null;
  /** The set being made or last made (collection and query -> forms), of `version`. */
  private made = new Map<string, PagePack>();
  private version = '';
  /** The pages being compressed now, or null. */
  private running: CompressedBodies | null = null;
  /** The day the set is for (0: none made yet). */
  private day = 0;

  constructor(private readonly post: (shared: SharedPages) => void, private readonly failed: (err: unknown) => void) {}

  /** The last set made if it is of `snapshot`, else null (a thread then waits for the set to come). */
  of(snapshot: Snapshot): SharedPages | null {
    return this.shared?.version === snapshot.version ? this.shared : null;
  }

  /** Every first page of `snapshot` (a new one: a set still being made for another stops at its next page). */
  pack(snapshot: Snapshot, today: number): void {
    this.made = new Map();
    this.version = snapshot.version;
    this.run(snapshot, today, false);
  }

  /** `today` is a new day: the pages of the `late` collections of `snapshot` again (all of them if its set is not made). */
  daily(snapshot: Snapshot, today: number): void {
    if (this.day === 0 || today === this.day) return;
    if (this.running !== null || this.version !== snapshot.version) return this.pack(snapshot, today);
    this.run(snapshot, today, true);
  }

  private run(snapshot: Snapshot, today: number, lateOnly: boolean): void {
    this.running?.retire();
    this.day = today;
    const bodies = (this.running = new CompressedBodies(snapshot));
    const [into, version] = [this.made, this.version];
    bodies.warm(today, lateOnly, (p) => into.set(`${p.collection}?${p.query}`, p)).then(
      () => {
        if (this.running !== bodies) return; // a newer set is being made
        this.running = null;
        bodies.retire();
        this.post((this.shared = sharePages(version, into.values())));
      },
      (err: unknown) => {
        if (this.running === bodies) this.running = null;
        this.failed(err);
      },
    );
  }

  /** The pool closes: a set being made stops at its next page. */
  stop(): void {
    this.running?.retire();
    this.running = null;
  }
}
