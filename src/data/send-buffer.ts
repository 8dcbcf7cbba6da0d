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
  if (room !== undefined) {
    const slot = slotOf(room, body);
    if (slot !== -1) done(room, slot);
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
 * Gives back `body` once `carrier` has sent it: when it was built in a room, the joins there
 * (roomBuffer) ask `carrier`; when it is the last slab body, the next sendBuffer does. Over TLS
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
  if (room !== undefined) {
    const slot = slotOf(room, body);
    if (slot !== -1) room.carriers[slot] = carrier;
  }
}

/**
 * Room for bodies in the memory of an arena (fragments.ts joins), after its bytes: a join copies each
 * record into it by `copyWithin` of one Buffer over both, where a copy into a slab needs a Uint8Array
 * over each record's bytes first (Node 20: about 200 instructions and 96 bytes of heap a record, 1.9 KB
 * a page of 20). Made by the reader of the boot cache after the group of sections a list arena is in
 * (boot-cache-read.ts); never in a SharedArrayBuffer (`--threads`: every thread reads that memory), nor
 * in a first start's resizable arena (fragments.ts Arena.room).
 *
 * Bodies are made in it one after another, as in a ring, and their bytes are made again once the
 * oldest is done: given back (releaseSendBuffer: it went whole to the socket), its carrier finished
 * (releaseWhenSent: over TLS, the write's callback runs a turn of the loop after `end()`, and a turn
 * answers several connections, so several bodies wait at once), or the garbage collector found it
 * unreachable. A body neither given back nor carried when the next page is joined (a 304 after the
 * join), and the oldest once SLOW_JOINS joins found no room (a slow reader, a response whose connection
 * closed before its turn), are left to the collector. Whatever reads a body's bytes later holds the
 * Buffer itself (a socket's write request, a response's queue, zlib's input), so an unreachable body
 * is one that no one reads again. A join that finds no room builds in the slab.
 */
export interface SendRoom {
  /** The whole memory, the arena's bytes and the room's, as one Buffer: copies from one to the other are `copyWithin` of it. */
  readonly all: Buffer;
  readonly memory: ArrayBuffer;
  /** The room is `all[at, at + bytes)`. */
  readonly at: number;
  readonly bytes: number;
  /** The bodies not done yet, oldest first: slots first, first + 1, ... (modulo SLOTS), `count` of them. */
  first: number;
  count: number;
  /** Per slot: the body (null once left to the collector), its carrier, whether it is done, and where its bytes end (room offsets, 8-aligned). */
  readonly bodies: (Buffer | null)[];
  readonly carriers: (Carrier | null)[];
  readonly done: boolean[];
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** Per slot, the number of the body in it: the collector's word names a body by it (a slot is used again). */
  readonly serials: Float64Array;
  serial: number;
  /** Joins in a row that found no room while the oldest body was still being sent. */
  misses: number;
}

/** Bytes of a room: a body of more (a page of 200 large items) is made in the slab, as one of more than MAX_SLICE_BYTES. */
export const SEND_ROOM_BYTES = MAX_SLICE_BYTES;
/** Bodies a room holds at most (a page of 20 celebrities is about 7 KB: 9 fit). */
const SLOTS = 16;
/** Joins in a row a room finds full while its oldest body is still being sent, before that body is left to the collector. */
const SLOW_JOINS = 64;

const rooms = new WeakMap<ArrayBufferLike, SendRoom>();

/** The room in `memory` (an arena's ArrayBuffer), or null when it has none. */
export function sendRoomOf(memory: ArrayBufferLike): SendRoom | null {
  return rooms.get(memory) ?? null;
}

/** Marks `memory[at, at + SEND_ROOM_BYTES)` as the room of the arenas in `memory` (nothing else reads or writes there). */
export function addSendRoom(memory: ArrayBuffer, at: number): SendRoom {
  const room: SendRoom = {
    all: new FastBuffer(memory, 0, at + SEND_ROOM_BYTES), memory, at, bytes: SEND_ROOM_BYTES, first: 0, count: 0,
    bodies: new Array<Buffer | null>(SLOTS).fill(null), carriers: new Array<Carrier | null>(SLOTS).fill(null), done: new Array<boolean>(SLOTS).fill(false),
    starts: new Int32Array(SLOTS), ends: new Int32Array(SLOTS), serials: new Float64Array(SLOTS), serial: 0, misses: 0,
  };
  rooms.set(memory, room);
  return room;
}

/** The slot of `body` among `room`'s bodies not done, newest first (the one just sent), or -1. */
function slotOf(room: SendRoom, body: Uint8Array): number {
  for (let k = room.count - 1; k >= 0; k--) {
    const slot = (room.first + k) % SLOTS;
    if (room.bodies[slot] === body) return slot;
  }
  return -1;
}

/** Marks a slot's body done: nothing reads it again (its bytes go once every older body is done too). */
function done(room: SendRoom, slot: number): void {
  room.done[slot] = true;
  room.bodies[slot] = null;
  room.carriers[slot] = null;
}

/** Bodies left to the collector: the room, and the serial of the body (its slot may hold another by then). */
const unreachable = new FinalizationRegistry<{ readonly room: SendRoom; readonly serial: number }>(({ room, serial }) => {
  for (let k = 0; k < room.count; k++) {
    const slot = (room.first + k) % SLOTS;
    if (room.serials[slot] === serial) return done(room, slot);
  }
});

/** Lets the collector say when a slot's body is unreachable: nothing can give it back any more. */
function handOver(room: SendRoom, slot: number): void {
  unreachable.register(room.bodies[slot]!, { room, serial: room.serials[slot]! });
  room.bodies[slot] = null;
  room.carriers[slot] = null;
}

/**
 * A Buffer of `length` bytes in `room` for the body of a join (which writes it through `room.all`, at
 * its `byteOffset`), or null when no room is free for it: then the body goes to sendBuffer.
 */
export function roomBuffer(room: SendRoom, length: number): Buffer | null {
  if (length > room.bytes) return null;
  // The oldest bodies done or sent by now: their bytes are free.
  while (room.count > 0) {
    const slot = room.first;
    if (!room.done[slot]) {
      const carrier = room.carriers[slot];
      if (carrier === null || !carrier.writableFinished) break;
    }
    room.done[slot] = false;
    room.bodies[slot] = null;
    room.carriers[slot] = null;
    room.first = (slot + 1) % SLOTS;
    room.count--;
  }
  // A body neither given back nor carried by now (dropped: a 304 after the join) is the collector's.
  for (let k = 0; k < room.count; k++) {
    const slot = (room.first + k) % SLOTS;
    if (room.carriers[slot] === null && room.bodies[slot] !== null) handOver(room, slot);
  }
  let at = 0;
  if (room.count > 0) {
    if (room.count === SLOTS) return full(room);
    const head = room.starts[room.first]!;
    const last = (room.first + room.count - 1) % SLOTS;
    const tail = room.ends[last]!;
    if (room.starts[last]! >= head) {
      // [head, tail) in use: after it, else from the start when that ends before head.
      if (tail + length <= room.bytes) at = tail;
      else if (length > head) return full(room);
    } else {
      // Wrapped: [head, ...) and [0, tail) in use.
      if (tail + length > head) return full(room);
      at = tail;
    }
  }
  room.misses = 0;
  const slot = (room.first + room.count) % SLOTS;
  room.count++;
  const out = new FastBuffer(room.memory, room.at + at, length);
  room.bodies[slot] = out;
  room.carriers[slot] = null;
  room.done[slot] = false;
  room.starts[slot] = at;
  room.ends[slot] = at + ((length + 7) & ~7);
  room.serials[slot] = ++room.serial;
  return out;
}

/** No room: null, and after SLOW_JOINS in a row the oldest body, if still being sent, is left to the collector. */
function full(room: SendRoom): null {
  if (++room.misses >= SLOW_JOINS) {
    room.misses = 0;
    const slot = room.first;
    if (room.bodies[slot] !== null) handOver(room, slot);
  }
  return null;
}
