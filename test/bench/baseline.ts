// The physical limit to measure against (issue 5): a bare node:http / node:https server that answers
// each scenario with a fixed, precomputed body of the same bytes as ours (compressed ones with their
// Content-Encoding). Run as a child process by run.ts; bodies arrive over IPC before any load starts,
// so a request does no work but the write.
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

interface Fixed {
  readonly status: number;
  readonly body: Buffer;
  readonly headers: readonly string[];
}

const bodies = new Map<string, Fixed>();
const MISSING: Fixed = { status: 404, body: Buffer.from('{}'), headers: ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', '2'] };

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  // A query only tells requests apart (the scenarios of many distinct answers): the body is the path's.
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const f = bodies.get(q === -1 ? url : url.slice(0, q)) ?? MISSING;
  res.writeHead(f.status, f.headers as string[]);
  res.end(f.body);
}

const [certFile, keyFile] = process.argv.slice(2);
const tls = certFile && keyFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : null;
// Same limits that matter for throughput as ours: keep-alive, TLS >= 1.2 with the same certificate.
const server = tls ? https.createServer({ ...tls, minVersion: 'TLSv1.2', keepAliveTimeout: 5000 }, handler) : http.createServer({ keepAliveTimeout: 5000 }, handler);
server.maxRequestsPerSocket = 0;

process.on('message', (m: { path: string; status: number; body: string; headers: string[] }) => {
  const body = Buffer.from(m.body, 'base64');
  bodies.set(m.path, { status: m.status, body, headers: ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(body.length), ...m.headers] });
  process.send!({ ok: m.path });
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send!({ url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}` });
});
