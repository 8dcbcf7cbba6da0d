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
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { MemorySocket, startBare, startOurs } from './in-memory.ts';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { bare: { type: 'boolean', default: false }, root: { type: 'string' }, warm: { type: 'string', default: '3000' }, count: { type: 'string', default: '5000' } },
});
const DATA = resolve(positionals[0] ?? 'data');
const SCENARIO = positionals[1] ?? 'list';
const ROOT = resolve(flags.root ?? fileURLToPath(new URL('../../', import.meta.url)));
const CONNECTIONS = 10;

const ours = await startOurs(ROOT, DATA);
const ourServer = ours.server;
const { key, spent, state } = ours;

const bare = await startBare();
const fixed = bare.fixed;

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
bare.answerWith(raw);
const server = flags.bare ? bare.server : ourServer;

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
await ours.close(1000);
rmSync(state, { recursive: true, force: true });
process.exit(0);
