// Buffers a load uses for a while and lets go (read chunks, a build's working arrays), allocated so
// that letting them go returns their memory. On Linux, Node's ArrayBuffers come from glibc's malloc,
// which maps a block of 128 KiB or more on its own and unmaps it when freed; but the free of such a
// block of at most 32 MiB raises the size from which blocks are mapped (the dynamic mmap threshold)
// to that block's, for the rest of the process. Every array below it then comes from malloc's heaps,
// which give back only their top: at 100k the frees of an 8 MiB read chunk, of a 17 MB message and
// of an 18.5 MB array of the build thread's search index left ~100 MB free but resident in holes at
// ready (issue 19; a gdb watchpoint on glibc's mp_.mmap_threshold names each one). A scratch buffer
// of 1 MiB or more is a view of a block of at least 32 MiB: above the limit, so its free unmaps it
// and moves nothing. Only the pages written become resident; the rest is address space (but V8
// counts the whole block as external memory, which can set off a collection: so not for small ones).
/** A block this large never moves glibc's mmap threshold: malloc(32 MiB) is a 32 MiB + 4 KiB mapping. */
export const UNMOVING_BYTES = 32 << 20;
/**
 * Smaller scratch buffers are exactly their size: the free of one raises the threshold to 1 MiB at
 * most, where V8's own 1 MB zone segments (a large postMessage) take it anyway.
 */
export const SCRATCH_FROM = 1 << 20;

/**
 * A Scratch's arrays from this size on are views of its block. Not only from SCRATCH_FROM: at 100k
 * the working arrays of the 200k news (800 KB each, under the threshold) came from the build
 * thread's heap between the arrays the index keeps, and their frees left 16-17 MB there in holes of
 * up to 3.6 MB, resident at ready (gdb walk of glibc's arenas at `listening on`).
 */
export const SCRATCH_VIEWS_FROM = 64 << 10;

/** An ArrayBuffer of `bytes` or more, zeroed: UNMOVING_BYTES for SCRATCH_FROM bytes and more. */
function block(bytes: number): ArrayBuffer {
  return new ArrayBuffer(bytes >= SCRATCH_FROM && bytes < UNMOVING_BYTES ? UNMOVING_BYTES : bytes);
}

/** A Buffer of `bytes` (not zeroed) for a while: its free returns its memory (above). */
export function scratchBuffer(bytes: number): Buffer {
  if (bytes < SCRATCH_FROM || bytes >= UNMOVING_BYTES) return Buffer.allocUnsafeSlow(bytes);
  return Buffer.allocUnsafeSlow(UNMOVING_BYTES).subarray(0, bytes);
}

/** An Int32Array of `length` zeros for a while: its free returns its memory (above). */
export function scratchInt32(length: number): Int32Array {
  return new Int32Array(block(length * 4), 0, length);
}

/**
 * The working arrays of one step (a collection's sort orders): each of SCRATCH_VIEWS_FROM bytes or
 * more is a view of a block of at least UNMOVING_BYTES shared with the step's others, handed out back to
 * back and never reused, so each is zeroed. The blocks go when the Scratch and its arrays do: one
 * block for the step instead of a block per array (V8 counts each block as external memory, and
 * more of it sets off more collections). Nothing handed out may outlive the step.
 */
export class Scratch {
  private block: ArrayBuffer | null = null;
  private at = 0;

  /** A zeroed region of `bytes` (a multiple of 8), a view's offset into its buffer. */
  private take(bytes: number): [ArrayBuffer, number] {
    if (bytes >= UNMOVING_BYTES) return [new ArrayBuffer(bytes), 0];
    if (this.block === null || this.block.byteLength - this.at < bytes) {
      this.block = new ArrayBuffer(UNMOVING_BYTES);
      this.at = 0;
    }
    const at = this.at;
    this.at += bytes;
    return [this.block, at];
  }

  /** An Int32Array of `length` zeros; `shared`: a view of a block even when small. */
  int32(length: number, shared = false): Int32Array {
    if (length * 4 < SCRATCH_VIEWS_FROM && !shared) return new Int32Array(length);
    const [buf, at] = this.take(Math.ceil(length / 2) * 8);
    return new Int32Array(buf, at, length);
  }

  /** A Float64Array of `length` zeros; `shared`: a view of a block even when small. */
  float64(length: number, shared = false): Float64Array {
    if (length * 8 < SCRATCH_VIEWS_FROM && !shared) return new Float64Array(length);
    const [buf, at] = this.take(length * 8);
    return new Float64Array(buf, at, length);
  }

  /** A Uint8Array of `length` zeros; `shared`: a view of a block even when small. */
  uint8(length: number, shared = false): Uint8Array {
    if (length < SCRATCH_VIEWS_FROM && !shared) return new Uint8Array(length);
    const [buf, at] = this.take(Math.ceil(length / 8) * 8);
    return new Uint8Array(buf, at, length);
  }

  /** A Uint16Array of `length` zeros; `shared`: a view of a block even when small. */
  uint16(length: number, shared = false): Uint16Array {
    if (length * 2 < SCRATCH_VIEWS_FROM && !shared) return new Uint16Array(length);
    const [buf, at] = this.take(Math.ceil(length / 4) * 8);
    return new Uint16Array(buf, at, length);
  }

  /** Lets go of the current block: it goes once the arrays handed out from it do. */
  release(): void {
    this.block = null;
    this.at = 0;
  }
}

/** A Uint16Array of `length` zeros for a while: its free returns its memory (above). */
export function scratchUint16(length: number): Uint16Array {
  return new Uint16Array(block(length * 2), 0, length);
}
