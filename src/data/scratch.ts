// Buffers a load uses for a while and lets go (read chunks, a build's working arrays), allocated so
// that letting them go returns their memory. On Linux, Node's ArrayBuffers come from glibc's malloc,
// which maps a block of 128 KiB or more on its own and unmaps it when freed; but the free of such a
// block of at most 32 MiB raises the size from which blocks are mapped (the dynamic mmap threshold)
// to that block's, for the rest of the process. Every array below it then comes from malloc's heaps,
// which give back only their top: at 100k the frees of an 8 MiB read chunk, of a 17 MB message and
// of an 18.5 MB array of the build thread's search index left ~100 MB free but resident in holes at
// ready (issue 19; a gdb watchpoint on glibc's mp_.mmap_threshold names each one). A scratch buffer
// of 128 KiB or more is a view of a block of at least 32 MiB: above the limit, so its free unmaps it
// and moves nothing. Only the pages written become resident; the rest is address space.
/** A block this large never moves glibc's mmap threshold: malloc(32 MiB) is a 32 MiB + 4 KiB mapping. */
export const UNMOVING_BYTES = 32 << 20;
/** From this size glibc maps a block on its own (its initial threshold); below it, a heap's small chunk. */
const MAPPED_BYTES = 128 << 10;

/** An ArrayBuffer of `bytes` or more, zeroed; reserved as UNMOVING_BYTES when `bytes` would be mapped. */
function block(bytes: number): ArrayBuffer {
  return new ArrayBuffer(bytes >= MAPPED_BYTES && bytes < UNMOVING_BYTES ? UNMOVING_BYTES : bytes);
}

/** A Buffer of `bytes` (not zeroed) for a while: its free returns its memory (above). */
export function scratchBuffer(bytes: number): Buffer {
  if (bytes < MAPPED_BYTES || bytes >= UNMOVING_BYTES) return Buffer.allocUnsafeSlow(bytes);
  return Buffer.allocUnsafeSlow(UNMOVING_BYTES).subarray(0, bytes);
}

/** An Int32Array of `length` zeros for a while: its free returns its memory (above). */
export function scratchInt32(length: number): Int32Array {
  return new Int32Array(block(length * 4), 0, length);
}
