// One copy of the data for every thread (CONTRACT 10). A snapshot is a few large typed arrays and
// Buffers (the byte arenas, offsets, orders, postings, search grams) held by small plain objects.
// share() moves every typed array and Buffer into SharedArrayBuffer memory once, on the main thread;
// posting the result to a worker then copies only the small objects around them (structured clone
// passes a SharedArrayBuffer by reference), and revive() gives the Buffers back their class. The
// collection definitions (functions, patterns) are not data: each thread has its own from its own
// import of src/resources/, so they travel as their position in a walk of RESOURCES.
import { RESOURCES } from '../resources/index.ts';

/** A Buffer on the way: structured clone turns one into a plain Uint8Array, so it travels marked. */
const BUFFER = '\u0000buffer';
/** An object of the definitions: its index in statics(). */
const STATIC = '\u0000static';

type Shared = unknown;

let walked: { readonly list: readonly object[]; readonly index: ReadonlyMap<object, number> } | null = null;

/**
 * Every object and function reachable from RESOURCES, in a walk every thread makes in the same
 * order (keys in insertion order, the modules evaluated alike), so an index names the same object
 * in each thread.
 */
function statics(): { readonly list: readonly object[]; readonly index: ReadonlyMap<object, number> } {
  if (walked !== null) return walked;
  const list: object[] = [];
  const index = new Map<object, number>();
  const visit = (v: unknown): void => {
    if ((typeof v !== 'object' && typeof v !== 'function') || v === null || index.has(v)) return;
    index.set(v, list.length);
    list.push(v);
    if (typeof v === 'function' || ArrayBuffer.isView(v) || v instanceof RegExp) return;
    if (v instanceof Map) for (const [k, x] of v) (visit(k), visit(x));
    else if (v instanceof Set) for (const x of v) visit(x);
    else for (const key of Object.keys(v)) visit((v as Record<string, unknown>)[key]);
  };
  visit(RESOURCES);
  return (walked = { list, index });
}

type View = ArrayBufferView & { readonly BYTES_PER_ELEMENT?: number };
type ViewCtor = new (buffer: SharedArrayBuffer, offset: number, length: number) => View;

function viewOn(view: View, buffer: SharedArrayBuffer, offset: number): View {
  // A Buffer travels as a Uint8Array (revive() makes it a Buffer again); `new Buffer()` is deprecated.
  const Ctor = (Buffer.isBuffer(view) ? Uint8Array : view.constructor) as ViewCtor;
  return new Ctor(buffer, offset, view.byteLength / (view.BYTES_PER_ELEMENT ?? 1));
}

const align8 = (n: number) => (n % 8 === 0 ? n : n + 8 - (n % 8)); // not `& ~7`: wraps past 2 GiB

/**
 * Where each typed array and Buffer of `value` goes in shared memory. Views into one ArrayBuffer
 * that they mostly fill (an arena, a boot-cache section) get one copy of that buffer, offsets kept,
 * so views that overlap stay one copy; the small views of large buffers (postings cut from a
 * section, slices of Node's Buffer pool) are packed one after another into a single buffer, so a
 * snapshot of many small arrays becomes a few SharedArrayBuffers, not thousands. Views already in
 * shared memory stay where they are.
 */
function place(value: unknown, index: ReadonlyMap<object, number>): Map<View, View> {
  const bySource = new Map<ArrayBufferLike, Set<View>>();
  const seen = new Set<object>();
  const collect = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || seen.has(v) || index.has(v)) return;
    seen.add(v);
    if (ArrayBuffer.isView(v)) {
      let views = bySource.get(v.buffer);
      if (views === undefined) bySource.set(v.buffer, (views = new Set()));
      views.add(v);
    } else if (v instanceof Map) for (const [k, x] of v) (collect(k), collect(x));
    else if (v instanceof Set) for (const x of v) collect(x);
    else for (const key of Object.keys(v)) collect((v as Record<string, unknown>)[key]);
  };
  collect(value);
  const placed = new Map<View, View>();
  const packed: View[] = [];
  let packedBytes = 0;
  for (const [source, views] of bySource) {
    if (source instanceof SharedArrayBuffer) {
      for (const v of views) placed.set(v, v);
      continue;
    }
    let used = 0;
    for (const v of views) used += v.byteLength;
    if (used * 2 >= source.byteLength) {
      const whole = new SharedArrayBuffer(source.byteLength);
      new Uint8Array(whole).set(new Uint8Array(source));
      for (const v of views) placed.set(v, viewOn(v, whole, v.byteOffset));
    } else {
      for (const v of views) {
        packed.push(v);
        packedBytes = align8(packedBytes) + v.byteLength;
      }
    }
  }
  const pool = new SharedArrayBuffer(packedBytes);
  const bytes = new Uint8Array(pool);
  let at = 0;
  for (const v of packed) {
    at = align8(at); // a Float64Array needs an offset that is a multiple of 8
    bytes.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), at);
    placed.set(v, viewOn(v, pool, at));
    at += v.byteLength;
  }
  return placed;
}

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * The form of `value` that is posted to workers: every typed array and Buffer in shared memory (the
 * same source view twice gives one copy), the definitions' objects as markers. Throws on what cannot
 * cross a thread as data (a class instance, a function outside the definitions), so a change of the
 * data layout that adds one fails in the tests rather than in production.
 */
export function share(value: unknown): Shared {
  const { index } = statics();
  const memo = new Map<object, unknown>();
  const placed = place(value, index);
  const walk = (v: unknown, path: string): unknown => {
    if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return v;
    const known = index.get(v);
    if (known !== undefined) return { [STATIC]: known };
    const done = memo.get(v);
    if (done !== undefined) return done;
    let out: unknown;
    if (Buffer.isBuffer(v)) out = { [BUFFER]: placed.get(v)! };
    else if (ArrayBuffer.isView(v)) out = placed.get(v)!;
    else if (Array.isArray(v)) out = v.map((x, i) => walk(x, `${path}[${i}]`));
    else if (v instanceof Map) out = new Map([...v].map(([k, x]) => [walk(k, `${path} key`), walk(x, `${path}.get()`)]));
    else if (v instanceof Set) out = new Set([...v].map((x) => walk(x, `${path} item`)));
    else if (typeof v === 'object' && isPlain(v)) {
      const o: Record<string, unknown> = {};
      for (const key of Object.keys(v)) o[key] = walk((v as Record<string, unknown>)[key], `${path}.${key}`);
      out = o;
    } else {
      throw new TypeError(`cannot share ${path} between threads: ${typeof v === 'function' ? 'a function' : `a ${v.constructor?.name ?? 'class'} instance`} outside the definitions`);
    }
    memo.set(v, out);
    return out;
  };
  return walk(value, 'snapshot');
}

/** The posted form back as the data layout: Buffers over the shared memory, the definitions this thread's own. */
export function revive<T>(value: Shared): T {
  const { list } = statics();
  const memo = new Map<object, unknown>();
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) return v;
    const done = memo.get(v);
    if (done !== undefined) return done;
    let out: unknown;
    if (Array.isArray(v)) out = v.map(walk);
    else if (v instanceof Map) out = new Map([...v].map(([k, x]) => [walk(k), walk(x)]));
    else if (v instanceof Set) out = new Set([...v].map(walk));
    else if (STATIC in v) out = list[(v as Record<string, number>)[STATIC]!];
    else if (BUFFER in v) {
      const u8 = (v as Record<string, Uint8Array>)[BUFFER]!;
      out = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
    } else {
      const o: Record<string, unknown> = {};
      for (const key of Object.keys(v)) o[key] = walk((v as Record<string, unknown>)[key]);
      out = o;
    }
    memo.set(v, out);
    return out;
  };
  return walk(value) as T;
}

/** Bytes of `value` held in shared memory (each SharedArrayBuffer once), for the log and the README. */
export function sharedBytes(value: Shared): number {
  const seen = new Set<SharedArrayBuffer>();
  const objects = new Set<object>();
  let total = 0;
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || objects.has(v)) return;
    objects.add(v);
    if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof SharedArrayBuffer && !seen.has(v.buffer)) (seen.add(v.buffer), (total += v.buffer.byteLength));
      return;
    }
    if (v instanceof Map) for (const [k, x] of v) (walk(k), walk(x));
    else if (v instanceof Set) for (const x of v) walk(x);
    else for (const key of Object.keys(v)) walk((v as Record<string, unknown>)[key]);
  };
  walk(value);
  return total;
}
