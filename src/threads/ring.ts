// What a worker thread tells the main thread about every request (the quota's reports for the usage
// log, the observations for the metrics), in shared memory rather than in a message per turn of its
// event loop: a message wakes the main thread (a write to its event loop's eventfd, a context switch)
// and is copied twice, which with 2 threads cost more per request than the report itself. A worker
// writes into its ring and rings a bell only when the main thread has read everything since it last
// looked; the main thread reads the ring BELL_MS after the bell, so under load it wakes at most once
// per BELL_MS per ring, not once per turn. What cannot wait (a 200 held for the disk, a key to
// resolve) still travels in a message, which makes the main thread read the ring at once. One a
// worker wrote stays readable if the worker dies (an answer already sent is still counted).

/** Numbers per entry. */
export const REPORT = 4;
/** Entries a worker may have written that the main thread has not read yet (a power of 2). */
const RING = 1 << 14;
/** heads[WRITTEN], heads[READ]: counts of entries; heads[BELL]: 1 from a bell rung until the main thread reads. */
const WRITTEN = 0;
const READ = 1;
const BELL = 2;
/**
 * How long the main thread lets a ring fill after its bell: the most a usage record or an
 * observation waits, on top of the usage log's once-a-second flush.
 */
export const BELL_MS = 10;

/** What write() did: the ring is full (the entry is not written: send it in a message), the main thread must be told, or it will read it anyway. */
export const FULL = -1;
export const QUIET = 0;
export const RANG = 1;

export class Reports {
  private readonly ring: Float64Array;
  private readonly heads: Int32Array;
  constructor(ring: SharedArrayBuffer, heads: SharedArrayBuffer) {
    this.ring = new Float64Array(ring);
    this.heads = new Int32Array(heads);
  }

  static memory(): { ring: SharedArrayBuffer; heads: SharedArrayBuffer } {
    return { ring: new SharedArrayBuffer(RING * REPORT * 8), heads: new SharedArrayBuffer(12) };
  }

  /** Worker: FULL when the main thread is RING entries behind; RANG when this entry rang the bell (post a message this turn); else QUIET. */
  write(a: number, b: number, c: number, d: number): number {
    const heads = this.heads;
    const w = heads[WRITTEN]!;
    if (((w - Atomics.load(heads, READ)) | 0) >= RING) return FULL;
    const at = (w & (RING - 1)) * REPORT;
    const ring = this.ring;
    ring[at] = a;
    ring[at + 1] = b;
    ring[at + 2] = c;
    ring[at + 3] = d;
    Atomics.store(heads, WRITTEN, (w + 1) | 0); // publishes the four numbers above
    // Rung already (most writes under load): a plain read, no locked instruction. One that sees the
    // bell still rung comes before the main thread clears it, so before its read, which takes this entry.
    if (Atomics.load(heads, BELL) !== 0) return QUIET;
    return Atomics.compareExchange(heads, BELL, 0, 1) === 0 ? RANG : QUIET;
  }

  /**
   * Main thread: every entry written since the last read. The bell is cleared first: an entry whose
   * write this read does not see finds it cleared, and rings again.
   */
  read(each: (a: number, b: number, c: number, d: number) => void): void {
    const heads = this.heads;
    Atomics.store(heads, BELL, 0);
    const end = Atomics.load(heads, WRITTEN);
    let r = heads[READ]!;
    for (; r !== end; r = (r + 1) | 0) {
      const at = (r & (RING - 1)) * REPORT;
      each(this.ring[at]!, this.ring[at + 1]!, this.ring[at + 2]!, this.ring[at + 3]!);
    }
    Atomics.store(heads, READ, r);
  }
}

/** The main thread's side of a bell: `read` BELL_MS after it rang (once, however often it rang meanwhile), or now. */
export class Later {
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly read: () => void) {}

  rang(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(this.fire, BELL_MS);
    this.timer.unref(); // the worker, not this timer, keeps the process alive; its exit reads the ring
  }

  now(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.fire();
  }

  private readonly fire = () => {
    this.timer = null;
    this.read();
  };
}
