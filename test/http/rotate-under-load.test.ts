// Issue 20: whatever the hot path caches about a key, a rotation acts on the next request of the same
// process (CONTRACT 9): with requests in flight on the old key, none sent after the rotation answered
// is a 200, and the new key is admitted at once.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';

/** One GET on a kept-alive connection of `agent`; resolves the status. */
function get(agent: http.Agent, url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/v1/celebrities?limit=1`, { agent, headers: { 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

test('rotate a key under load -> no 200 for the old key after the rotation answer; the new key works at once', async () => {
  const server = await startTestServer({ protocol: 'http1' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  try {
    const email = 'rotating@example.com';
    const oldKey = await server.account('enterprise', email);
    let rotated = false;
    let sentAfter = 0;
    let okBefore = 0;
    const lateOks: number[] = [];
    // 8 clients, each sending the old key again as soon as its answer arrives, until 50 requests of
    // each have been sent after the rotation answered.
    const client = async () => {
      let after = 0;
      while (after < 50) {
        const afterRotation = rotated; // read when the request is sent
        const status = await get(agent, server.url, oldKey);
        if (afterRotation) {
          after++;
          sentAfter++;
          if (status === 200) lateOks.push(sentAfter);
          else assert.equal(status, 401);
        } else if (status === 200) okBefore++;
      }
    };
    const clients = Array.from({ length: 8 }, client);
    // Rotate once the old key is known to be admitted under this load (and cached wherever it is).
    while (okBefore < 40) await new Promise((r) => setImmediate(r));
    const issued = await server.service.gate.accounts.rotateKey(email, 'correct horse battery');
    rotated = true;
    const fresh = await get(agent, server.url, issued.key);
    await Promise.all(clients);
    assert.equal(sentAfter, 400);
    assert.deepEqual(lateOks, [], 'requests with the old key sent after the rotation answer got a 200');
    assert.equal(fresh, 200, 'the new key is admitted on its first request');
    assert.ok(okBefore >= 40);
  } finally {
    agent.destroy();
    await server.close();
  }
});
