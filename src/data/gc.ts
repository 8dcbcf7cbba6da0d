// One full garbage collection, asked for after a load built from the data files. Such a load leaves
// its parsed records, builder chunks and strings as garbage in a heap grown to hold them, and V8
// keeps that heap (and the external buffers it has not yet collected) until memory is tight: the
// RSS at ready was about 1.5x the snapshot's own arrays at 100k (issue 19 asks at most 1.3x). Node
// has no API for it, so the `gc` function is taken from a context made after `--expose-gc` is set;
// where that fails, nothing happens (the memory is only returned later). Then a second one of V8's
// last-resort flavor (Node 26 here; Node 20's V8 runs a plain one), which also shrinks the young
// generation to its smallest: grown to 64 MB on Node 26 by the load, it stayed committed at ready.
import v8 from 'node:v8';
import vm from 'node:vm';

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
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
