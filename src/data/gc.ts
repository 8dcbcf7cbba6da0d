// One full garbage collection, asked for after a load built from the data files. Such a load leaves
// its parsed records, builder chunks and strings as garbage in a heap grown to hold them, and V8
// keeps that heap (and the external buffers it has not yet collected) until memory is tight: the
// RSS at ready was about 1.5x the snapshot's own arrays at 100k (issue 19 asks at most 1.3x). Node
// has no API for it, so the `gc` function is taken from a context made after `--expose-gc` is set;
// where that fails, nothing happens (the memory is only returned later). Then a second one of V8's
// last-resort flavor (Node 26 here; Node 20's V8 runs a plain one), which also shrinks the young
// generation to its smallest: grown to 64 MB on Node 26 by the load, it stayed committed at ready.
import { createHook } from 'node:async_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/** One object of `process.nextTick`'s, alive for the life of the thread (holdTickShape). */
let tickHeld: object | null = null;
const noop = (): void => {};

/**
 * Keeps one `process.nextTick` object alive for good, so the maps of that object literal outlive any
 * collection. A tick object (`{ [async_id_symbol], [trigger_async_id_symbol], callback, args }`) lives
 * only until its tick runs; V8 remembers the map each computed key was added to only weakly, and a
 * collection that reduces memory (the inspector's, V8's own when memory is tight) at a moment when no
 * tick is pending lets those maps go. The next tick object then comes with a new map, V8 (Node 20's and
 * 26's) marks that literal's keyed definitions megamorphic for good, and every nextTick after it, several
 * per response, adds its properties in the runtime: 0.25-0.36 µs a tick instead of 0.03-0.04 for the
 * rest of the process. A held tick object keeps its map, and with it the chain of maps it came through.
 * Taken once, before the data is loaded, through an async hook enabled for that one tick.
 */
/** The tick object held, or null before holdTickShape (for tests). */
export const heldTick = (): object | null => tickHeld;

export function holdTickShape(): void {
  if (tickHeld !== null) return;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'TickObject' && tickHeld === null) tickHeld = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
}

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' } | { type: 'minor' }) => void;
let gc: Gc | null | undefined;

/** Runs a full, compacting collection now; false when this Node does not allow it. */
export function collectGarbage(): boolean {
  if (gc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      const fn: unknown = vm.runInNewContext('gc');
      // Off again: contexts and worker threads made later get no `gc` global.
      v8.setFlagsFromString('--no-expose-gc');
      gc = typeof fn === 'function' ? (fn as Gc) : null;
    } catch {
      gc = null;
    }
  }
  if (gc) {
    gc();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  }
  return gc !== null;
}

type Inspector = typeof import('node:inspector');
const OLD_V8 = Number(process.versions.v8.split('.')[0]) < 12;
let inspector: Inspector | null | undefined;

/**
 * V8's collection for low memory: full collections until nothing more is freed, the heap compacted,
 * and the young generation and the pages V8 keeps for later given back. Node 20's V8 has no
 * last-resort flavor of `gc` (collectGarbage), and its young generation stayed at the 32 MB a load
 * grew it to. Node's only way to it is the inspector protocol's HeapProfiler.collectGarbage, asked
 * through an in-process session (no port is opened; the session is closed again at once). Resolves
 * once it ran; where this Node has no inspector (built without it), collectGarbage runs instead.
 */
export async function releaseMemory(): Promise<void> {
  holdTickShape(); // already held by a service; here for whoever loads data without one (benches, tests)
  // Not on Node 20: before a tick object was held (holdTickShape), every process.nextTick cost 0.3-0.9
  // µs instead of 0.03-0.06 after that collection, for the rest of the process (Node 26 too, 0.36-0.43),
  // and a response makes several ticks. With one held, the collection gave no smaller RSS at ready on
  // Node 20 (1,238 MB against 1,230 at 100k); Node 20 gives back the young generation another way (shrinkYoung).
  if (OLD_V8) {
    if (collectGarbage()) shrinkYoung();
    return;
  }
  if (inspector === undefined) inspector = await import('node:inspector').catch(() => null);
  let session: InstanceType<Inspector['Session']> | null = null;
  try {
    session = inspector && new inspector.Session();
    session?.connect();
  } catch {
    session = null; // another client holds the thread's inspector
  }
  if (session === null) {
    collectGarbage();
    return;
  }
  // The collection runs as a task of the thread, after the current one: the callback says it ran.
  const ran = await new Promise<boolean>((resolve) => {
    try {
      session.post('HeapProfiler.collectGarbage', (err) => resolve(!err));
    } catch {
      resolve(false);
    }
  });
  session.disconnect();
  if (!ran) collectGarbage();
}

/** Young collections in a row that shrinkYoung runs: V8 11.3's rate is over its last 10 collections. */
const QUIET_COLLECTIONS = 12;

/**
 * Node 20: the young generation the load grew (32 MB committed at ready after a first start at 100k)
 * back to its smallest, without the inspector's collection (releaseMemory says why not). V8 11.3
 * shrinks it after any collection when the allocation rate over its last ten collections is under
 * 1,000 bytes a millisecond (Heap::ReduceNewSpaceSize), which the load's rate never is at ready. So:
 * young collections of an empty young generation (well under a millisecond each), each after a
 * millisecond's wait that allocates nothing (Atomics.wait blocks the thread: no JavaScript runs in
 * between), until the load's collections are out of those ten. About 12 ms of wall time, a few of CPU.
 */
function shrinkYoung(): void {
  const quiet = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < QUIET_COLLECTIONS; i++) {
    Atomics.wait(quiet, 0, 0, 1);
    gc!({ type: 'minor' });
  }
}

/**
 * Before a worker thread ends, once what it keeps is let go: its heap's pages given back now. Node
 * 26's V8 keeps an ended thread's pages mapped and resident (a build thread at 100k: 137 MiB at
 * ready after a first start, in 256 KiB mappings; a script's thread that filled 180 MiB: 247 MB RSS
 * after it ended, with or without --no-memory-pool or any collection on the main thread) unless a
 * last-resort collection in that thread released them first (then 73 MB). Node 20's V8 unmaps them
 * when the thread ends: nothing to do there.
 */
export function releaseThreadHeap(): void {
  if (!OLD_V8) collectGarbage();
}
