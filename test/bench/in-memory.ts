// What `bench:pipeline` and kept-count.ts share: our service started as `serve` wires it (file store,
// metrics, access log at --log-level error) from a checkout, its HTTP server fed by sockets in memory
// (Node's parser and writer, no system calls). Importing this module hooks http.createServer so the
// servers the service makes can be found; import it before the service starts.
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';

/** Every server http.createServer made since this module loaded, in order. */
export const made: http.Server[] = [];
/** Node's own http.createServer (for a bare server outside `made`). */
export const createServer = http.createServer;
(http as { createServer: unknown }).createServer = (...args: unknown[]) => {
  const server = (createServer as (...a: unknown[]) => http.Server)(...args);
  made.push(server);
  return server;
};

/** A connection in memory: what the server writes is counted, and kept when `kept` is an array. */
export class MemorySocket extends Duplex {
  remoteAddress = '127.0.0.1';
  remotePort = 40_000;
  written = 0;
  kept: Buffer[] | null = null;
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.written += chunk.length;
    this.kept?.push(Buffer.from(chunk));
    done();
  }
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

export interface Ours {
  readonly server: http.Server;
  /** An enterprise key, and a free one whose monthly quota is used up (429s). */
  readonly key: string;
  readonly spent: string;
  /** The state directory (a fresh temporary one, or the caller's). */
  readonly state: string;
  close(ms: number): Promise<void>;
}

/**
 * Our service from the checkout at `root` on `data`: the access log and metrics observed per response
 * as `serve` does (the start is whatever that checkout's app passes: a bigint before issue 20's clock
 * step, a number after). `prepare` sees the state directory before the service opens it.
 */
export async function startOurs(root: string, data: string, prepare: (state: string) => void = () => {}): Promise<Ours> {
  const { startService } = await import(join(root, 'src/service.ts'));
  const { Metrics } = await import(join(root, 'src/http/metrics.ts'));
  const { createAccessLog } = await import(join(root, 'src/http/access-log.ts'));
  const { createLogger } = await import(join(root, 'src/log.ts'));
  const log = createLogger({ level: 'error', write: () => {} });
  const metrics = new Metrics({ clock: Date.now, draining: () => false, store: () => null });
  const accessLog = createAccessLog(log, false);
  const state = mkdtempSync(join(os.tmpdir(), 'bench-in-memory-'));
  prepare(state);
  const before = made.length;
  const observe = (req: unknown, route: unknown, status: number, id: string, start: unknown) => {
    metrics.observe(route, status, start);
    accessLog(req, status, id, start);
  };
  const service = await startService({ data, state, tls: null, port: 0, log, observe, metrics: () => metrics.render() });
  const { key } = await service.gate.accounts.create({ email: 'bench@example.com', plan: 'enterprise', password: 'bench-password-not-secret' });
  const { key: spent } = await service.gate.accounts.create({ email: 'spent@example.com', plan: 'free', password: 'bench-password-not-secret' });
  await service.gate.usage.set('spent@example.com', 100);
  return { server: made[before]!, key, spent, state, close: (ms) => service.close(ms) };
}

export interface Bare {
  readonly server: http.Server;
  /** The one answer it sends: status, headers and body as ours sent them (bar Date and connection headers). */
  readonly fixed: { status: number; headers: string[]; body: Buffer };
  /** Makes the bare server answer what `raw` (one response of ours, head and body) says. */
  answerWith(raw: Buffer): void;
}

/**
 * A bare node:http server sending one fixed answer, listening as `npm run bench`'s baseline does and
 * ours do: a server that listens has Node track its connections (a ConnectionsList entry per parser,
 * for its header and request timeouts), which one that never listens skips, so a bare side that did
 * not listen paid less than the real baseline per request and understated our share.
 */
export async function startBare(): Promise<Bare> {
  const fixed = { status: 200, headers: [] as string[], body: Buffer.alloc(0) };
  const server = createServer({ keepAliveTimeout: 5000 }, (_req, res) => {
    res.writeHead(fixed.status, fixed.headers);
    res.end(fixed.body);
  });
  server.maxRequestsPerSocket = 0;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const skip = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  return {
    server,
    fixed,
    answerWith(raw) {
      const end = raw.indexOf('\r\n\r\n');
      const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
      fixed.status = Number(lines[0]!.split(' ')[1]);
      fixed.headers = [];
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (!skip.has(line.slice(0, colon).toLowerCase())) fixed.headers.push(line.slice(0, colon), line.slice(colon + 2));
      }
      fixed.body = Buffer.from(raw.subarray(end + 4));
    },
  };
}
