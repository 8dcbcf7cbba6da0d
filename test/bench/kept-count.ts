// Instructions per request of one kept scenario (issue 20), for callgrind: our service wired as
// `bench:pipeline` wires it (or, with --bare, a bare node:http handler sending the same bytes), fed by
// in-memory sockets (10 connections, one request in flight each), WARM requests first, then COUNT
// requests between two calls of v8.getHeapCodeStatistics(), which callgrind can dump at:
//   valgrind --tool=callgrind --smc-check=all-non-file --dump-before='*UpdateHeapCodeStatisticsBuffer*' \
//     node --import tsx test/bench/kept-count.ts DATA_DIR list [--bare] [--root CHECKOUT] [--warm 3000] [--count 5000]
// The second dump (callgrind.out.PID.2) holds exactly the counted requests: its total over COUNT is
// the instructions per request (every thread; V8's helper threads do little here). Scenarios: list,
// filter, detail, 401, 429. Without valgrind it prints the CPU µs per request of the counted part.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { bare: { type: 'boolean', default: false }, root: { type: 'string' }, warm: { type: 'string', default: '3000' }, count: { type: 'string', default: '5000' } },
});
const DATA = resolve(positionals[0] ?? 'data');
const SCENARIO = positionals[1] ?? 'list';
const ROOT = resolve(flags.root ?? fileURLToPath(new URL('../../', import.meta.url)));
const CONNECTIONS = 10;

const made: http.Server[] = [];
const createServer = http.createServer;
(http as { createServer: unknown }).createServer = (...args: unknown[]) => {
  const server = (createServer as (...a: unknown[]) => http.Server)(...args);
  made.push(server);
  return server;
};

class MemorySocket extends Duplex {
  remoteAddress = '127.0.0.1';
  remotePort = 40_000;
  kept: Buffer[] | null = null;
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
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

const { startService } = await import(join(ROOT, 'src/service.ts'));
const { Metrics } = await import(join(ROOT, 'src/http/metrics.ts'));
const { createAccessLog } = await import(join(ROOT, 'src/http/access-log.ts'));
const { createLogger } = await import(join(ROOT, 'src/log.ts'));
const log = createLogger({ level: 'error', write: () => {} });
const metrics = new Metrics({ clock: Date.now, draining: () => false, store: () => null });
const accessLog = createAccessLog(log, false);
const state = mkdtempSync(join(os.tmpdir(), 'kept-count-'));
const observe = (req: unknown, route: unknown, status: number, id: string, start: unknown) => {
  metrics.observe(route, status, start);
  accessLog(req, status, id, start);
};
const service = await startService({ data: DATA, state, tls: null, port: 0, log, observe, metrics: () => metrics.render() });
const ourServer = made[made.length - 1]!;
const { key } = await service.gate.accounts.create({ email: 'bench@example.com', plan: 'enterprise', password: 'bench-password-not-secret' });
const { key: spent } = await service.gate.accounts.create({ email: 'spent@example.com', plan: 'free', password: 'bench-password-not-secret' });
await service.gate.usage.set('spent@example.com', 100);

const fixed = { status: 200, headers: [] as string[], body: Buffer.alloc(0) };
const bareServer = createServer({ keepAliveTimeout: 5000 }, (_req, res) => {
  res.writeHead(fixed.status, fixed.headers);
  res.end(fixed.body);
});
bareServer.maxRequestsPerSocket = 0;
await new Promise<void>((done) => bareServer.listen(0, '127.0.0.1', done));

const request = (path: string, k: string) => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench\r\nx-api-key: ${k}\r\n\r\n`);

function once(server: http.Server, req: Buffer): Promise<Buffer> {
  return new Promise((done) => {
    const socket = new MemorySocket();
    socket.kept = [];
    const onRequest = (_q: http.IncomingMessage, res: http.ServerResponse) =>
      res.once('finish', () =>
        setImmediate(() => {
          server.off('request', onRequest);
          socket.destroy();
          done(Buffer.concat(socket.kept!));
        }),
      );
    server.prependListener('request', onRequest);
    server.emit('connection', socket);
    socket.push(req);
  });
}

const sample = JSON.parse((await once(ourServer, request('/api/v1/celebrities?limit=50&sort=name_desc', key))).toString('utf8').split('\r\n\r\n')[1]!);
const pick = sample.data[7] as { nationality: string; slug: string };
const paths: Record<string, [string, string]> = {
  list: ['/api/v1/celebrities', key],
  filter: [`/api/v1/celebrities?nationality=${encodeURIComponent(pick.nationality)}&sort=name_asc`, key],
  detail: [`/api/v1/celebrities/${pick.slug}`, key],
  '401': ['/api/v1/celebrities', 'cel_0000000000000000000000000000000000000000'],
  '429': ['/api/v1/celebrities', spent],
};
const [path, k] = paths[SCENARIO]!;
const req = request(path, k);
const raw = await once(ourServer, req);
{
  const end = raw.indexOf('\r\n\r\n');
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const skip = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  fixed.status = Number(lines[0]!.split(' ')[1]);
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (!skip.has(line.slice(0, colon).toLowerCase())) fixed.headers.push(line.slice(0, colon), line.slice(colon + 2));
  }
  fixed.body = Buffer.from(raw.subarray(end + 4));
}
const server = flags.bare ? bareServer : ourServer;

/** `n` requests over CONNECTIONS connections, each sent from setImmediate once the last finished. */
function run(n: number): Promise<void> {
  return new Promise((done) => {
    let sent = 0;
    let finished = 0;
    const sockets: MemorySocket[] = [];
    const onRequest = (q: http.IncomingMessage, res: http.ServerResponse) => {
      const socket = q.socket as unknown as MemorySocket;
      res.once('finish', () => {
        if (++finished === n) {
          server.off('request', onRequest);
          for (const s of sockets) s.destroy();
          done();
        } else if (sent < n) {
          sent++;
          setImmediate(() => socket.push(req));
        }
      });
    };
    server.prependListener('request', onRequest);
    for (let i = 0; i < CONNECTIONS && sent < n; i++) {
      const socket = new MemorySocket();
      sockets.push(socket);
      server.emit('connection', socket);
      sent++;
      socket.push(req);
    }
  });
}

await run(Number(flags.warm));
v8.getHeapCodeStatistics();
const cpu0 = process.cpuUsage();
await run(Number(flags.count));
const used = process.cpuUsage(cpu0);
v8.getHeapCodeStatistics();
process.stdout.write(`${flags.bare ? 'bare' : 'ours'} ${SCENARIO} ${fixed.status} ${fixed.body.length} B: ${((used.user + used.system) / Number(flags.count)).toFixed(2)} µs per request (Node ${process.version})\n`);
await service.close(1000);
rmSync(state, { recursive: true, force: true });
process.exit(0);
