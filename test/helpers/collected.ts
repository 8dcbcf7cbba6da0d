// Whether what a test let go is collected. A WeakRef keeps its target until V8 clears its kept
// objects at a microtask checkpoint, and the next turn of the event loop does not always come after
// one: in execute.test.ts a replaced snapshot was held after one `setImmediate` turn in 1 run of 10
// (a heap snapshot showed `weak_refs_keep_during_job` as its only retainer) and gone after the next.
// So each try waits a turn and collects; a target something really holds stays through every try.
import { setImmediate as tick } from 'node:timers/promises';
import { collectGarbage } from '../../src/data/gc.ts';

/** How many of `refs`' targets are still alive after up to `tries` turns, each followed by a full collection. */
export async function stillHeld(refs: readonly WeakRef<object>[], tries = 5): Promise<number> {
  let held = refs.length;
  for (let i = 0; i < tries && held > 0; i++) {
    await tick();
    if (!collectGarbage()) throw new Error('this Node gives no way to collect garbage on demand');
    held = refs.filter((r) => r.deref() !== undefined).length;
  }
  return held;
}
