// The dashboard with any number of threads: it stays on the main thread with the accounts, sessions
// and throttles it changes, and a worker hands it each /dashboard request whole (a form is at most
// FORM_LIMIT_BYTES) and writes back the answer. The dashboard sees a request as it would from a
// socket: method, target, headers, peer address and the body as a stream.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';
import type { Arrival, MountedSite } from '../http/mounted.ts';

/** More than any form the dashboard takes (its limit is 8 KiB): what is past it is not sent on. */
const BODY_LIMIT = 64 * 1024;

type Visit = [number, string, string, IncomingMessage['headers'], string, number, number, Uint8Array, Arrival];
/** [id, status, headers, body], or [id, -1] when the dashboard destroyed the connection. */
type Answer = [number, number, Record<string, string | string[]>, Uint8Array] | [number, -1];

/** Main side: answers the visits a worker hands over with the one dashboard. */
export function serveMounted(port: MessagePort, site: MountedSite): void {
  port.on('message', (v: Visit) => {
    const [id, method, url, headers, remoteAddress, major, minor, body, arrival] = v;
    const req = new PassThrough() as unknown as IncomingMessage & PassThrough;
    Object.assign(req, { method, url, headers, httpVersionMajor: major, httpVersionMinor: minor, httpVersion: `${major}.${minor}`, socket: { remoteAddress } });
    (req as unknown as PassThrough).end(body);
    let status = 0;
    let out: Record<string, string | string[]> = {};
    let sent: Uint8Array = new Uint8Array(0);
    let destroyed = false;
    const res = {
      headersSent: false,
      writeHead(s: number, h: Record<string, string | string[]>) {
        status = s;
        out = h;
        res.headersSent = true;
        return res;
      },
      end(b?: Buffer | string) {
        if (b !== undefined) sent = typeof b === 'string' ? Buffer.from(b) : b;
        return res;
      },
      destroy() {
        destroyed = true;
      },
    };
    void site.handle(req, res as unknown as ServerResponse, arrival).then(
      () => port.postMessage((destroyed ? [id, -1] : [id, status, out, sent]) satisfies Answer),
      () => port.postMessage([id, -1] satisfies Answer),
    );
  });
}

/** Worker side: the MountedSite the worker's pipeline mounts under /dashboard. */
export class MountedProxy implements MountedSite {
  private next = 0;
  private readonly waiting = new Map<number, (a: Answer) => void>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (a: Answer) => {
      const done = this.waiting.get(a[0]);
      this.waiting.delete(a[0]);
      done?.(a);
    });
  }

  handle(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<number> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let ended = false;
      req.on('data', (chunk: Buffer) => {
        if (size <= BODY_LIMIT) chunks.push(chunk);
        size += chunk.length;
      });
      // Aborted before its end: nothing to hand over, no answer to write (status 0, as a drop).
      req.once('close', () => ended || resolve(0));
      req.once('end', () => {
        ended = true;
        const id = ++this.next;
        this.waiting.set(id, (a) => {
          if (a[1] === -1) {
            res.destroy();
            return resolve(500);
          }
          const [, status, headers, body] = a as Extract<Answer, [number, number, unknown, unknown]>;
          res.writeHead(status, headers);
          res.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
          resolve(status);
        });
        this.port.postMessage([id, req.method ?? 'GET', req.url ?? '', req.headers, req.socket?.remoteAddress ?? '', req.httpVersionMajor, req.httpVersionMinor, Buffer.concat(chunks), arrival] satisfies Visit);
      });
    });
  }
}
