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

test('a room in an arena\'s memory: bodies one after another; the bytes of those given back made again, and of a dropped one once the collector found it unreachable', async () => {
  const memory = new ArrayBuffer(100 + SEND_ROOM_BYTES);
  const room = addSendRoom(memory, 100);
  assert.equal(sendRoomOf(memory), room);
  assert.equal(sendRoomOf(new ArrayBuffer(8)), null);
  const a = roomBuffer(room, 300)!;
  assert.equal(a.buffer, memory);
  assert.equal(a.byteOffset, 100);
  assert.equal(a.length, 300);
  releaseSendBuffer(a);
  const b = roomBuffer(room, 20)!;
  assert.equal(b.byteOffset, 100, 'the body given back: the next one is made in its bytes');
  releaseSendBuffer(b);
  assert.equal(roomBuffer(room, SEND_ROOM_BYTES + 1), null, 'a body larger than the room');
  useAndDrop(room);
  const c = roomBuffer(room, 10)!; // after the dropped body, which the collector now decides
  assert.equal(c.byteOffset, 100 + 304, 'the dropped body keeps its bytes');
  releaseSendBuffer(c);
  // The dropped body is unreachable now (useAndDrop returned): its bytes come back after a collection.
  let d = roomBuffer(room, 10)!;
  for (let i = 0; i < 5 && d.byteOffset !== 100; i++) {
    releaseSendBuffer(d);
    await tick();
    assert.equal(collectGarbage(), true);
    await tick(); // the registry's callbacks run in a later task
    d = roomBuffer(room, 10)!;
  }
  assert.equal(d.byteOffset, 100, 'every body done: the next one starts the room again');
});

/** A body made in `room` and dropped without being given back (a 304 after the join, say). */
function useAndDrop(room: SendRoom): void {
  const a = roomBuffer(room, 300)!;
  assert.equal(a.byteOffset, 100);
}

test('releaseWhenSent: room bodies given to their carriers -> their bytes kept while they send, made again once they finished, the oldest left to the collector after 64 joins that found the room full', () => {
  const memory = new ArrayBuffer(16 + SEND_ROOM_BYTES);
  const room = addSendRoom(memory, 16);
  const first = { writableFinished: false };
  const a = roomBuffer(room, 100)!;
  releaseWhenSent(a, first);
  const second = { writableFinished: false };
  const b = roomBuffer(room, 50)!;
  assert.equal(b.byteOffset, 16 + 104, 'a still being sent: b after it');
  releaseWhenSent(b, second);
  first.writableFinished = true;
  const c = roomBuffer(room, 8000)!;
  assert.equal(c.byteOffset, 16 + 104 + 56, 'a finished, b not: c after b');
  releaseWhenSent(c, { writableFinished: true });
  // b is the oldest and still being sent: bodies of 8 KB fill the rest, then the room is full.
  let made = 0;
  while (roomBuffer(room, 8000) !== null) made++;
  assert.ok(made >= 5 && made <= 8, `${made} more fitted`);
  for (let i = 2; i < 64; i++) assert.equal(roomBuffer(room, 8000), null, `join ${i} finds it full`);
  assert.ok(room.bodies[room.first] === b, 'b: its carrier still asked');
  assert.equal(roomBuffer(room, 8000), null, 'join 64');
  assert.equal(room.bodies[room.first], null, 'b left to the collector');
});

test('a room used as a ring: 20,000 bodies of 1 B to 20 KB, each filled with its own byte, given back or finished in a random order -> no body not yet done is ever written over', () => {
  const memory = new ArrayBuffer(8 + SEND_ROOM_BYTES);
  const room = addSendRoom(memory, 8);
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const live: { body: Buffer; fill: number; carrier: { writableFinished: boolean } }[] = [];
  let inRoom = 0;
  for (let i = 0; i < 20_000; i++) {
    const length = 1 + Math.floor(random() ** 3 * 20_000);
    const body = roomBuffer(room, length);
    if (body !== null) {
      inRoom++;
      assert.equal(body.length, length);
      body.fill(i & 0xff);
      const carrier = { writableFinished: false };
      if (random() < 0.2) releaseSendBuffer(body); // sent whole at once
      else {
        releaseWhenSent(body, carrier);
        live.push({ body, fill: i & 0xff, carrier });
      }
    }
    // Some carriers finish, in any order, each body whole as it was made; it may be written over from then on.
    for (let k = live.length - 1; k >= 0; k--) {
      const l = live[k]!;
      if (random() < 0.3) {
        assert.ok(l.body.every((v) => v === l.fill), `body ${l.fill} (${l.body.length} B) written over before it finished, step ${i}`);
        l.carrier.writableFinished = true;
        live.splice(k, 1);
      } else {
        const b = l.body;
        assert.ok(b[0] === l.fill && b[b.length >> 1] === l.fill && b[b.length - 1] === l.fill, `body ${l.fill} (${b.length} B) written over at step ${i}`);
      }
    }
  }
  assert.ok(inRoom > 10_000, `${inRoom} bodies made in the room`);
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
