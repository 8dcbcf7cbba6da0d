// Where answer bodies are built: slices of 1 MiB slabs, handed out front to back (a slab goes once
// every slice of it is unreachable, as with Node's own 8 KiB pool); the last one handed out is given
// back when the caller knows nothing reads it again (releaseSendBuffer), so a server whose answers
// leave at once builds each in the same bytes, still in the CPU's caches. On Node 20 a
// Buffer.allocUnsafe above 4 KiB, a page of 20 records, is a new ArrayBuffer: about 1.4 µs, ten
// times a slice, and external memory that brings the next garbage collection closer.

const SLAB_BYTES = 1 << 20;
/** Larger bodies get their own allocation: a slab holds at least 16 of the largest slices. */
const MAX_SLICE_BYTES = 64 << 10;

/**
 * Node's own Buffer class (`Buffer[Symbol.species]`), whose constructor is the Uint8Array's: a view
 * made with it skips `Buffer.from`'s checks of its argument (an `isAnyArrayBuffer` call into C++ and
 * `fromArrayBuffer`'s conversions): 54 -> 26 ns a body on Node 20, 55 -> 36 on Node 26.
 */
const FastBuffer = (Buffer as unknown as { readonly [Symbol.species]: new (memory: ArrayBufferLike, byteOffset: number, length: number) => Buffer })[Symbol.species];

let slab: ArrayBuffer | null = null;
let used = 0;

/** A Buffer of `length` bytes, contents undefined, for a body written once and then sent. */
export function sendBuffer(length: number): Buffer {
  if (length > MAX_SLICE_BYTES) return Buffer.allocUnsafe(length);
  if (carried !== null) {
    // The last body, if still the last one and sent by now, gives its bytes back; else it never will.
    if (used === carriedEnd && carried.writableFinished) used = carriedAt;
    carried = null;
  }
  if (slab === null || used + length > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES).buffer as ArrayBuffer;
    used = 0;
  }
  const out = new FastBuffer(slab, used, length);
  used += (length + 7) & ~7; // 8-byte aligned, as Node's pool does
  return out;
}

/**
 * Gives back `body` when it is the last buffer sendBuffer handed out, or the body a room holds (SendRoom),
 * and nothing will read it again (the caller knows: its bytes went whole to the socket): the next body
 * is made in the same bytes, still in the CPU's caches, instead of memory no request touched lately.
 */
export function releaseSendBuffer(body: Uint8Array): void {
  const memory = body.buffer;
  if (memory === slab) {
    if (body.byteOffset + ((body.length + 7) & ~7) === used) used = body.byteOffset;
    return;
  }
  // The room is found by its memory, not kept in a variable: that held the last room's arena, whole,
  // after a reload replaced it (no room is made in a reload's new data, so none took its place).
  const room = rooms.get(memory);
  if (room !== undefined && body === room.body) {
    room.body = null;
    room.carrier = null;
    room.free = true;
  }
}

/**
 * What carries a body to its client: a response (node:http's, or HTTP/2's compatibility one). Its
 * `writableFinished` is true once every write of it came back done, so nothing reads the body again:
 * - HTTP/1.1 (Node 20): ended, nothing left in the response (a pipelined one waiting its turn holds
 *   its body there), and nothing in its socket's queue, where a write counts until its callback: over
 *   TLS that callback runs a turn of the loop later, after the record went to the socket under it.
 *   Node 26: set once 'finish' is emitted, in that same callback. A response whose socket closed
 *   first never says so.
 * - HTTP/2: its stream's, a Writable's `finished`: after every write's callback, which Node's session
 *   calls once the socket write that holds the DATA frames made from it is done (node_http2.cc
 *   ClearOutgoing); a stream reset first never says so.
 */
export interface Carrier {
  readonly writableFinished: boolean;
}

/** The last slab body given to its carrier while still being sent (releaseWhenSent), and where it starts and ends. */
let carried: Carrier | null = null;
let carriedAt = 0;
let carriedEnd = 0;

/**
 * Gives back `body` once `carrier` has sent it: when it was built in a room, the next join there
 * (roomBuffer) asks `carrier`; when it is the last slab body, the next sendBuffer does. Over TLS
 * (HTTP/1.1 or HTTP/2) a body is never sent by the time `end()` returns (releaseSendBuffer needs
 * that): the write's callback runs later. No listener per response: the next join reads a getter.
 */
export function releaseWhenSent(body: Uint8Array, carrier: Carrier): void {
  const memory = body.buffer;
  if (memory === slab) {
    const end = body.byteOffset + ((body.length + 7) & ~7);
    if (end === used) {
      carried = carrier;
      carriedAt = body.byteOffset;
      carriedEnd = end;
    }
    return;
  }
  const room = rooms.get(memory);
  if (room !== undefined && body === room.body) room.carrier = carrier;
}

/**
 * Room for a body in the memory of an arena (fragments.ts joins), after its bytes: a join copies each
 * record into it by `copyWithin` of one Buffer over both, where a copy into a slab needs a Uint8Array
 * over each record's bytes first (Node 20: about 200 instructions and 96 bytes of heap a record, 1.9 KB
 * a page of 20). Made by the reader of the boot cache after the group of sections a list arena is in
 * (boot-cache-read.ts); never in a SharedArrayBuffer (`--threads`: every thread reads that memory), nor
 * in a first start's resizable arena (fragments.ts Arena.room).
 *
 * It holds one body at a time. It takes the next one when the last went whole to the socket
 * (releaseSendBuffer, the slab's rule), or once the garbage collector found the last one unreachable:
 * a body kept, dropped, or still being sent when the next page is joined (a 304 after the join, a write
 * the kernel did not take at once, a warm compressing on the thread pool) holds the room until then,
 * and pages are built in the slab meanwhile. Whatever reads a body's bytes later holds the Buffer itself
 * (a socket's write request, a response's queue, zlib's input), so an unreachable body is one that no
 * one reads again.
 */
export interface SendRoom {
  /** The whole memory, the arena's bytes and the room's, as one Buffer: copies from one to the other are `copyWithin` of it. */
  readonly all: Buffer;
  readonly memory: ArrayBuffer;
  /** The room is `all[at, at + bytes)`. */
  readonly at: number;
  readonly bytes: number;
  /** The body made in it and not given back yet, or null. */
  body: Buffer | null;
  /** What sends that body, once known (releaseWhenSent): the room is free once it finished. */
  carrier: Carrier | null;
  /** Joins made elsewhere while `carrier` was still sending (a slow reader): after WAITS_FOR_CARRIER, the collector decides. */
  waits: number;
  /** True when a body may be made in it (nothing reads its last one again). */
  free: boolean;
}

/** Bytes of a room: a body of more (a page of 200 large items) is made in the slab, as one of more than MAX_SLICE_BYTES. */
export const SEND_ROOM_BYTES = MAX_SLICE_BYTES;

const rooms = new WeakMap<ArrayBufferLike, SendRoom>();

/** The room in `memory` (an arena's ArrayBuffer), or null when it has none. */
export function sendRoomOf(memory: ArrayBufferLike): SendRoom | null {
  return rooms.get(memory) ?? null;
}

/** Marks `memory[at, at + SEND_ROOM_BYTES)` as the room of the arenas in `memory` (nothing else reads or writes there). */
export function addSendRoom(memory: ArrayBuffer, at: number): SendRoom {
  const room: SendRoom = { all: new FastBuffer(memory, 0, at + SEND_ROOM_BYTES), memory, at, bytes: SEND_ROOM_BYTES, body: null, carrier: null, waits: 0, free: true };
  rooms.set(memory, room);
  return room;
}

/** Rooms whose body was neither given back nor kept track of: free once the collector finds that body unreachable. */
const unreachable = new FinalizationRegistry<SendRoom>((room) => {
  room.free = true;
});

/** Lets the collector say when `room`'s body is unreachable: nothing can give it back any more. */
function handOver(room: SendRoom): void {
  unreachable.register(room.body!, room);
  room.body = null;
  room.carrier = null;
}

/**
 * Joins a room lets go to the slab while its body's carrier is still sending it, before the collector
 * is asked instead: a reader slower than that, or a response that never finishes (its connection
 * closed before its turn), no longer holds the room.
 */
const WAITS_FOR_CARRIER = 64;

/**
 * A Buffer of `length` bytes in `room` for the body of a join (which writes it through `room.all`), or
 * null when its last body may still be read or `length` does not fit: then the body goes to sendBuffer.
 */
export function roomBuffer(room: SendRoom, length: number): Buffer | null {
  if (!room.free) {
    const carrier = room.carrier;
    if (carrier === null) {
      if (room.body !== null) handOver(room);
      return null;
    }
    if (!carrier.writableFinished) {
      if (++room.waits === WAITS_FOR_CARRIER) handOver(room);
      return null;
    }
    room.carrier = null;
    room.body = null;
    room.free = true;
  }
  if (length > room.bytes) return null;
  const out = new FastBuffer(room.memory, room.at, length);
  room.body = out;
  room.waits = 0;
  room.free = false;
  return out;
}
