// Listeners: HTTPS (or plain with --insecure-http) and the optional refusing/redirecting plain one,
// each hardened with explicit limits, and a close that lets in-flight requests finish.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { DEFAULTS } from '../config.ts';
import { errorBody, type ErrorCode } from '../errors.ts';
import type { App, Transport } from './app.ts';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** null: plain HTTP on the main port (--insecure-http). */
  readonly tls: { readonly cert: string | Buffer; readonly key: string | Buffer } | null;
  readonly httpPort: number | null;
}

export interface Listener {
  readonly server: http.Server;
  readonly transport: Transport;
  readonly url: string;
}

/** Every limit set on purpose (issue 4); the reasons are in config.ts DEFAULTS. */
const SERVER_OPTIONS = {
  headersTimeout: DEFAULTS.headersTimeoutMs,
  requestTimeout: DEFAULTS.requestTimeoutMs,
  keepAliveTimeout: DEFAULTS.keepAliveTimeoutMs,
  connectionsCheckingInterval: DEFAULTS.connectionsCheckingIntervalMs,
  maxHeaderSize: DEFAULTS.maxHeaderSize,
} as const;

/** Errors the HTTP parser raises before a request exists get a JSON body too (issue 4). */
const CLIENT_ERRORS: Readonly<Record<string, ErrorCode>> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const code = CLIENT_ERRORS[err.code ?? ''] ?? 'BAD_REQUEST';
  const status = code === 'HEADERS_TOO_LARGE' ? '431 Request Header Fields Too Large' : code === 'REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  const body = errorBody(code);
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

function harden(server: http.Server, app: App, transport: Transport): void {
  server.maxRequestsPerSocket = DEFAULTS.maxRequestsPerSocket;
  server.maxConnections = DEFAULTS.maxConnections;
  server.on('clientError', onClientError);
  server.on('request', (req, res) => app.handle(req, res, transport));
}

function urlOf(server: http.Server, scheme: string, host: string): string {
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown}:${port}`;
}

async function start(server: http.Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Starts the listeners; the HTTPS (or main) one comes first, as `serve` prints them (CONTRACT 6). */
export async function listen(app: App, options: ListenOptions): Promise<Listener[]> {
  const main = options.tls
    ? https.createServer({ ...SERVER_OPTIONS, cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2', handshakeTimeout: DEFAULTS.tlsHandshakeTimeoutMs })
    : http.createServer(SERVER_OPTIONS);
  const mainTransport: Transport = options.tls ? 'https' : 'insecure';
  harden(main, app, mainTransport);
  await start(main, options.host, options.port);
  const listeners: Listener[] = [{ server: main, transport: mainTransport, url: urlOf(main, options.tls ? 'https' : 'http', options.host) }];
  if (options.tls && options.httpPort !== null) {
    const plain = http.createServer(SERVER_OPTIONS);
    harden(plain, app, 'redirect');
    try {
      await start(plain, options.host, options.httpPort);
    } catch (err) {
      main.close();
      throw err;
    }
    app.httpsPortSuffix = `:${(main.address() as AddressInfo).port}`;
    listeners.push({ server: plain, transport: 'redirect', url: urlOf(plain, 'http', options.host) });
  }
  return listeners;
}

/**
 * Stops accepting, lets in-flight requests finish (their responses say `Connection: close`), closes
 * idle keep-alive sockets, and after `deadlineMs` closes whatever is left.
 */
export async function closeListeners(listeners: readonly Listener[], deadlineMs: number): Promise<void> {
  await Promise.all(
    listeners.map(
      ({ server }) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => server.closeAllConnections(), deadlineMs);
          timer.unref();
          server.close(() => {
            clearTimeout(timer);
            resolve();
          });
          server.closeIdleConnections();
        }),
    ),
  );
}
