// A kept-alive HTTP/1.1 socket idle for keepAliveTimeout is closed, but a request its client sent
// before then is answered even when the process was held past the timeout (a busy machine, a long
// synchronous stretch): Node alone destroys the socket from the timers phase, before the next poll
// phase reads that request, and the client sees a reset (src/http/server.ts closeIdle).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { startService } from '../../src/service.ts';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';
import { fixture } from '../helpers/fixture.ts';
import { EVENTUALLY_MS, within } from '../helpers/state.ts';

const KEEP_ALIVE_MS = 100;
/** Node closes an idle socket 1 s after the keepAliveTimeout it announces (Node 20 and 26). */
const NODE_CLOSES_AFTER_MS = KEEP_ALIVE_MS + 1000;
const certificate = createSelfSignedCertificate();
const GET = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';

/** Holds this whole process (the server in it included) for `ms`, as a busy machine does. */
function hold(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const answers = (text: string) => text.split('HTTP/1.1 ').length - 1;

describe('keepAliveTimeout', () => {
  for (const secure of [false, true]) {
    it(`${secure ? 'TLS' : 'plain HTTP'}: a request sent in time is answered after the process was held past it; the idle socket then closes`, async () => {
      const service = await startService({ data: fixture(), state: 'memory', tls: secure ? certificate : false, limits: { keepAliveTimeoutMs: KEEP_ALIVE_MS } });
      try {
        const port = Number(new URL(service.listeners[0]!.url).port);
        const socket = secure
          ? tls.connect({ host: '127.0.0.1', port, ca: certificate.cert, servername: 'localhost', ALPNProtocols: ['http/1.1'] })
          : net.connect(port, '127.0.0.1');
        await new Promise<void>((resolve, reject) => socket.once(secure ? 'secureConnect' : 'connect', resolve).once('error', reject));
        let text = '';
        let reset: string | null = null;
        socket.setEncoding('utf8').on('data', (d: string) => {
          text += d;
          if (answers(text) !== 1 || !text.endsWith('}')) return;
          // The server's idle timer runs once its answer is out (within a turn of the loop). Then the
          // next request goes out, and the process is held past that timer, in the check phase: the
          // timers phase comes next, before a poll phase reads the request.
          setTimeout(() => setImmediate(() => (socket.write(GET), hold(NODE_CLOSES_AFTER_MS + 300))), 20);
        });
        socket.on('error', (err: NodeJS.ErrnoException) => (reset = err.code ?? err.message));
        let closed = false;
        socket.once('close', () => (closed = true));

        socket.write(GET);
        await within(EVENTUALLY_MS, () => (answers(text) === 2 && text.endsWith('}')) || socket.destroyed);
        assert.equal(answers(text), 2, `the second request was answered (${reset ?? 'closed'} instead)`);
        assert.match(text.slice(text.lastIndexOf('HTTP/1.1 ')), /^HTTP\/1\.1 200 /);
        await within(EVENTUALLY_MS, () => closed); // idle again past keepAliveTimeout: closed by the server
        assert.equal(reset, null);
      } finally {
        await service.close(0);
      }
    });
  }
});
