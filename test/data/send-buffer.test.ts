// src/data/send-buffer.ts: every body gets bytes of its own, across slab ends and past the slice limit,
// and an arena's room holds one body at a time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { collectGarbage } from '../../src/data/gc.ts';
import { addSendRoom, releaseSendBuffer, releaseWhenSent, roomBuffer, SEND_ROOM_BYTES, sendBuffer, sendRoomOf, type SendRoom } from '../../src/data/send-buffer.ts';

test('sendBuffer: 3,000 bodies of 1 B to 100 KiB, each filled with its own byte -> each still holds it', () => {
  const made: Buffer[] = [];
  for (let i = 0; i < 3000; i++) {
    const length = i % 97 === 0 ? 100_000 : 1 + ((i * 7919) % 9000);
    const b = sendBuffer(length);
    assert.equal(b.length, length);
    b.fill(i & 0xff);
    made.push(b);
  }
  made.forEach((b, i) => assert.ok(b.every((v) => v === (i & 0xff)), `body ${i} (${b.length} B) was overwritten`));
});

test('a room in an arena\'s memory: one body at a time; free again when it is given back, or once the collector found it unreachable', async () => {
  const memory = new ArrayBuffer(100 + SEND_ROOM_BYTES);
  const room = addSendRoom(memory, 100);
  assert.equal(sendRoomOf(memory), room);
  assert.equal(sendRoomOf(new ArrayBuffer(8)), null);
  useAndDrop(room, memory);
  const other = addSendRoom(new ArrayBuffer(8 + SEND_ROOM_BYTES), 8);
  const b = roomBuffer(other, 10)!;
  releaseSendBuffer(b);
  const c = roomBuffer(other, 20)!;
  assert.equal(c.byteOffset, b.byteOffset, 'the body given back: the next one is made in the room again');
  releaseSendBuffer(c);
  assert.equal(roomBuffer(other, SEND_ROOM_BYTES + 1), null, 'a body larger than the room');
  assert.equal(roomBuffer(room, 10), null, 'the dropped body not collected yet');
  // The body made in `room` is unreachable now (useAndDrop returned): free after a collection.
  for (let i = 0; i < 5 && !room.free; i++) {
    await tick();
    assert.equal(collectGarbage(), true);
    await tick(); // the registry's callbacks run in a later task
  }
  const d = roomBuffer(room, 10);
  assert.ok(d !== null, 'the room of a body nothing holds any more is free again');
  assert.equal(d.byteOffset, 100);
});

/** A body made in `room` and dropped without being given back (a 304 after the join, say). */
function useAndDrop(room: SendRoom, memory: ArrayBuffer): void {
  const a = roomBuffer(room, 300)!;
  assert.equal(a.buffer, memory);
  assert.equal(a.byteOffset, 100);
  assert.equal(a.length, 300);
  assert.equal(roomBuffer(room, 10), null, 'a body not given back: the next one goes elsewhere');
  releaseSendBuffer(a); // handed to the collector by the call above: giving it back now changes nothing
  assert.equal(roomBuffer(room, 10), null);
}

test('releaseWhenSent: a room body given to its carrier -> the room waits while it sends, is free once it finished, and after 64 joins elsewhere is left to the collector', () => {
  const memory = new ArrayBuffer(16 + SEND_ROOM_BYTES);
  const room = addSendRoom(memory, 16);
  const carrier = { writableFinished: false };
  const a = roomBuffer(room, 100)!;
  releaseWhenSent(a, carrier);
  assert.equal(roomBuffer(room, 10), null, 'still being sent: the next body goes elsewhere');
  carrier.writableFinished = true;
  const b = roomBuffer(room, 50);
  assert.ok(b !== null && b.byteOffset === 16, 'sent: the next body is made in the room');
  const slow = { writableFinished: false };
  releaseWhenSent(b, slow);
  for (let i = 1; i < 64; i++) assert.equal(roomBuffer(room, 10), null, `join ${i} while it sends`);
  assert.equal(room.body, b, 'the carrier still asked');
  assert.equal(roomBuffer(room, 10), null, 'join 64');
  assert.equal(room.body, null, 'handed to the collector');
  slow.writableFinished = true;
  assert.equal(roomBuffer(room, 10), null, 'its carrier is no longer asked: only the collector frees it now');
});

test('releaseWhenSent: the last slab body -> the next body starts where it did once its carrier finished; a body that is not the last, or not finished, keeps its bytes', () => {
  sendBuffer(64 << 10); // a fresh part of the slab is not needed, only a slice boundary
  const carrier = { writableFinished: false };
  const a = sendBuffer(100);
  releaseWhenSent(a, carrier);
  carrier.writableFinished = true;
  const b = sendBuffer(100);
  assert.equal(b.buffer, a.buffer);
  assert.equal(b.byteOffset, a.byteOffset, 'finished: its bytes are made again');
  releaseWhenSent(b, { writableFinished: false });
  const c = sendBuffer(100);
  assert.ok(c.buffer !== b.buffer || c.byteOffset >= b.byteOffset + b.length, 'not finished: b keeps its bytes');
  const d = sendBuffer(10);
  releaseWhenSent(c, { writableFinished: true }); // c is not the last one handed out
  const e = sendBuffer(10);
  assert.ok(e.buffer !== d.buffer || e.byteOffset >= d.byteOffset + d.length, 'd keeps its bytes');
});
