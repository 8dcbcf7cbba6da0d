// The load client's one resend (test/helpers/load.ts): a request that goes out on a kept-alive socket
// the server has just closed as idle is reset before the server read it, and is sent again on a NEW
// connection, not on the next pooled socket, which the server closed just as idle (cluster test 3's
// "every key known on every instance" got 2 of 9 status 0 that way). A server that resets requests
// on new connections still gets status 0.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { loadClient } from './load.ts';

/**
 * Answers the first request of each connection (keep-alive) and resets the connection on any later
 * one, unread: what a server whose keep-alive timer fired just as the request arrived does, to every
 * pooled socket at once. `resetAll`: resets every request, a server that drops requests.
 */
async function idleClosingServer(resetAll = false): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    let answered = 0;
    let head = '';
    socket.on('data', (d) => {
      head += d.toString('latin1');
      while (head.includes('\r\n\r\n')) {
        head = head.slice(head.indexOf('\r\n\r\n') + 4);
        if (resetAll || answered++ > 0) return void socket.resetAndDestroy();
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{}');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, connections: () => connections, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Lets the agent put the sockets of answered requests back in its free list. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('a request reset on a reused keep-alive socket is sent again once, on a new connection, and answered', async () => {
  const server = await idleClosingServer();
  const client = loadClient([server.url]);
  try {
    // Eight pooled sockets, as a burst leaves behind; then three requests, as cluster test 3 sends to each instance.
    assert.deepEqual(await client.burst(Array(8).fill('/'), 'k'), Array(8).fill(200));
    await settle();
    await settle();
    assert.equal(server.connections(), 8);
    assert.deepEqual(await client.burst(Array(3).fill('/'), 'k'), [200, 200, 200], JSON.stringify(client.lost));
    assert.equal(server.connections(), 11, 'each resent on a connection of its own');
    assert.deepEqual(client.noAnswer, {});
  } finally {
    client.close();
    await server.close();
  }
});

test('a server that resets every request: status 0, said why, sent once more at most', async () => {
  const server = await idleClosingServer(true);
  const client = loadClient([server.url]);
  try {
    assert.deepEqual(await client.burst(Array(3).fill('/'), 'k'), [0, 0, 0]);
    assert.equal(server.connections(), 3, 'a request reset on a new connection is not sent again');
    assert.deepEqual(client.noAnswer, { ECONNRESET: 3 });
    assert.deepEqual(
      client.lost.map((l) => [l.server, l.why, l.reused, l.retried]),
      [0, 1, 2].map(() => [0, 'ECONNRESET', false, false]),
    );
  } finally {
    client.close();
    await server.close();
  }
});
