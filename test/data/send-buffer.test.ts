// src/data/send-buffer.ts: every body gets bytes of its own, across slab ends and past the slice limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sendBuffer } from '../../src/data/send-buffer.ts';

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
