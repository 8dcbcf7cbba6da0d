// What a worker thread tells the main thread about every request (the quota's reports for the usage
// log, the observations for the metrics), in shared memory rather than in a message per turn of its
// event loop: a message wakes the main thread (a write to its event loop's eventfd, a context switch)
// and is copied twice, which with 2 threads cost more per request than the report itself. A worker
// writes into its ring; every ring of the pool shares one bell, which a worker rings (one message)
// only when the main thread has stopped looking. The main thread then looks at every ring BELL_MS
// later, and again every BELL_MS for as long as it finds something: under load it wakes BELL_MS
// apart whatever the number of threads and rings, and no worker posts a message for it. What cannot
// wait (a 200 held for the disk, a key to resolve) still travels in a message, which makes the main
// thread read that ring at once. One a worker wrote stays readable if the worker dies (an answer
// already sent is still counted).

/** Numbers per entry. */
export const REPORT = 4;
/** Entries a worker may have written that the main thread has not read yet (a power of 2). */
const RING = 1 << 14;
/** heads[WRITTEN], heads[READ]: counts of entries. */
const WRITTEN = 0;
const READ = 1;
/** bell[0]: 1 from a bell rung until the main thread stops looking (one for every ring of the pool). */
const BELL = 0;
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
  private readonly bell: Int32Array;
  constructor(ring: SharedArrayBuffer, heads: SharedArrayBuffer, bell: SharedArrayBuffer) {
    this.ring = new Float64Array(ring);
    this.heads = new Int32Array(heads);
    this.bell = new Int32Array(bell);
  }

  /** A new ring on `bell` (Bell.memory). */
  static memory(bell: SharedArrayBuffer): { ring: SharedArrayBuffer; heads: SharedArrayBuffer; bell: SharedArrayBuffer } {
    return { ring: new SharedArrayBuffer(RING * REPORT * 8), heads: new SharedArrayBuffer(8), bell };
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
    // Rung already (every write under load): a plain read, no locked instruction. One that sees the
    // bell still rung comes before the main thread clears it, so before its last look, which takes this entry.
    const bell = this.bell;
    if (Atomics.load(bell, BELL) !== 0) return QUIET;
    return Atomics.compareExchange(bell, BELL, 0, 1) === 0 ? RANG : QUIET;
  }

  /** Main thread: every entry written since the last read; how many. */
  read(each: (a: number, b: number, c: number, d: number) => void): number {
    const heads = this.heads;
    const end = Atomics.load(heads, WRITTEN);
    let r = heads[READ]!;
    for (; r !== end; r = (r + 1) | 0) {
      const at = (r & (RING - 1)) * REPORT;
      each(this.ring[at]!, this.ring[at + 1]!, this.ring[at + 2]!, this.ring[at + 3]!);
    }
    const n = (r - heads[READ]!) | 0;
    Atomics.store(heads, READ, r);
    return n;
  }
}

/**
 * The main thread's side of the pool's bell: every ring's reader, run BELL_MS after the bell rang,
 * then every BELL_MS while they find entries (the bell stays rung meanwhile: the workers write and
 * post nothing); a look that finds none clears the bell and looks once more, for the entries written
 * before the clear by workers that saw it rung. Every message from a thread rings it too (listen():
 * it may carry the bell), and its handler reads that thread's ring at once (the message came after its entries).
 */
export class Bell {
  /** Shared with every ring (Reports.memory), alone on its cache line. */
  readonly memory = new SharedArrayBuffer(64);
  private readonly word = new Int32Array(this.memory);
  private readonly readers = new Set<() => number>();
  private due = false;

  /** `later` runs its function BELL_MS from now (a test gives its own). */
  constructor(private readonly later: (look: () => void) => void = lookLater) {}

  add(read: () => number): void {
    this.readers.add(read);
  }

  delete(read: () => number): void {
    this.readers.delete(read);
  }

  /**
   * Takes every message of a thread (its MessagePort, or the Worker itself) through here: each
   * counts as the bell before `handle` gets it, for any may carry the bell (a report of the same
   * turn of that thread rang it and left it to this message). A message handled without this would
   * leave the bell rung with no look to come, and no report of any thread would be read again until
   * usage was asked for (the train-7 bug of the one-bell step).
   */
  listen<M>(port: { on(event: 'message', listener: (m: M) => void): unknown }, handle: (m: M) => void): void {
    port.on('message', (m: M) => {
      this.rang();
      handle(m);
    });
  }

  private rang(): void {
    if (this.due) return;
    this.due = true;
    this.later(this.fire);
  }

  /** Every ring now; how many entries were read. */
  readAll(): number {
    let n = 0;
    for (const read of this.readers) n += read();
    return n;
  }

  private readonly fire = () => {
    this.due = false;
    if (this.readAll() > 0) return this.rang(); // busy: look again, the bell still rung
    Atomics.store(this.word, BELL, 0);
    if (this.readAll() > 0) this.rang();
  };
}

/** The workers, not this timer, keep the process alive; a worker's exit reads its ring. */
const lookLater = (look: () => void): void => void setTimeout(look, BELL_MS).unref();
