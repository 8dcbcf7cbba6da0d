// Listeners: HTTPS (HTTP/2 and HTTP/1.1, or plain HTTP/1.1 with --insecure-http) and the optional
// refusing/redirecting plain one, each hardened with explicit limits, and a close that lets in-flight
// requests finish.
import http from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { DEFAULTS } from '../config.ts';
import type { ErrorCode } from '../errors.ts';
import type { App, Transport } from './app.ts';
import { onClientError, onConnect, onTlsClientError, type RawAnswer } from './client-error.ts';
import { closeQuietConnections, DRAIN_SWEEP_MS, stopAccepting } from './drain.ts';
import { ALLOW } from './respond.ts';
import { goAway, secureServer } from './tls-server.ts';

/** A listener's server: node:http for plain HTTP, node:http2 with HTTP/1.1 allowed for TLS. */
export type HttpServer = http.Server | Http2SecureServer;

/** The hardening limits; every one has its reason beside its default in config.ts DEFAULTS. */
export interface Limits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly connectionsCheckingIntervalMs: number;
  readonly maxHeaderSize: number;
  readonly maxRequestsPerSocket: number;
  readonly maxConnections: number;
  readonly tlsHandshakeTimeoutMs: number;
}

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** null: plain HTTP on the main port (--insecure-http). */
  readonly tls: { readonly cert: string | Buffer; readonly key: string | Buffer } | null;
  readonly httpPort: number | null;
  /** Overrides of DEFAULTS, so tests can see a 408 in one second rather than ten. */
  readonly limits?: Partial<Limits>;
  /** Bind with SO_REUSEPORT, beside the other threads on the same port (src/threads/, CONTRACT 10). */
  readonly reusePort?: boolean;
}

export interface Listener {
  readonly server: HttpServer;
  readonly transport: Transport;
  readonly url: string;
}

export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, connectionsCheckingIntervalMs, maxHeaderSize, maxRequestsPerSocket, maxConnections, tlsHandshakeTimeoutMs } = DEFAULTS;
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, connectionsCheckingIntervalMs, maxHeaderSize, maxRequestsPerSocket, maxConnections, tlsHandshakeTimeoutMs, ...overrides };
}

function serverOptions(limits: Limits): http.ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
    maxHeaderSize: limits.maxHeaderSize,
    // Node's own answer to a missing Host is an empty 400; the app sends it in JSON (RFC 9112 3.2).
    requireHostHeader: false,
    // Repeated Host lines arrive joined ("a, b") instead of the first silently winning, so the app can refuse them.
    joinDuplicateHeaders: true,
  };
}

/**
 * What answers requests: `refusal` is set when Node already decided (an unknown Expect: 417, CONNECT
 * over HTTP/2: 405). HTTP/2 requests arrive as node:http2's compatibility objects, typed here as
 * their node:http counterparts: the app uses only what both have (headers, url, method, httpVersion,
 * socket.remoteAddress; writeHead with a flat header list, end, headersSent, destroy).
 */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, refusal?: ErrorCode) => void;

const SOCKETS = new WeakMap<HttpServer, Set<Socket>>();

/**
 * A plain HTTP/1.1 server, or with `tls` an HTTP/2 one that also speaks HTTP/1.1, with every limit
 * applied (tls-server.ts says where Node applies which on the TLS port); `handler` answers requests,
 * `answer` builds the JSON refusals of what never becomes a request (parser errors, CONNECT), and
 * `plainAnswer` the one for plain HTTP that reached a TLS port (without HSTS, which a browser ignores
 * over plain HTTP).
 */
export function hardenedServer(limits: Limits, handler: Handler, tls: ListenOptions['tls'], answer: RawAnswer, plainAnswer = answer): HttpServer {
  const server: HttpServer = tls ? secureServer(limits, tls) : http.createServer(serverOptions(limits));
  if (!tls) (server as http.Server).maxRequestsPerSocket = limits.maxRequestsPerSocket;
  server.maxConnections = limits.maxConnections;
  server.on('clientError', onClientError(answer));
  if (tls) server.on('tlsClientError', onTlsClientError(plainAnswer));
  server.on('connect', onConnect(answer, ALLOW, handler));
  server.on('request', handler as never);
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => handler(req, res, 'EXPECTATION_FAILED'));
  // An idle kept-alive socket's keepAliveTimeout: Node destroys the socket unless a listener takes it.
  server.on('timeout', closeIdle);
  // Every raw socket, so the shutdown deadline also reaches those still in a TLS handshake.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  SOCKETS.set(server, sockets);
  return server;
}

/**
 * A kept-alive socket was idle for keepAliveTimeout (lib/_http_server.js socketOnTimeout; HTTP/2
 * sessions have their own timeout, tls-server.ts). Node would destroy it from the timers phase, which
 * libuv runs before the next poll phase: after the process was held past the timeout (a busy machine,
 * a long synchronous stretch), a request its client sent in time is still unread then, and is reset.
 * So the socket is destroyed from the check phase, after that poll, unless it has read something
 * since (a request: Node clears the timeout and answers it).
 */
function closeIdle(socket: Socket): void {
  setImmediate(destroyUnread, socket, socket.bytesRead);
}

function destroyUnread(socket: Socket, bytesRead: number): void {
  if (socket.bytesRead === bytesRead) socket.destroy();
}

export function urlOf(server: HttpServer, scheme: string, host: string): string {
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown}:${port}`;
}

export async function start(server: HttpServer, host: string, port: number, reusePort = false): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // `reusePort` only when asked: Node before 22.12 ignores it, and the threads check that first.
    server.listen(reusePort ? { port, host, reusePort } : { port, host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Starts the listeners; the HTTPS (or main) one comes first, as `serve` prints them (CONTRACT 6). */
export async function listen(app: App, options: ListenOptions): Promise<Listener[]> {
  const limits = resolveLimits(options.limits);
  const mainTransport: Transport = options.tls ? 'https' : 'insecure';
  const main = hardenedServer(limits, (req, res, refusal) => app.handle(req, res, mainTransport, refusal), options.tls, app.rawAnswer(mainTransport), app.rawAnswer('insecure'));
  await start(main, options.host, options.port, options.reusePort);
  const listeners: Listener[] = [{ server: main, transport: mainTransport, url: urlOf(main, options.tls ? 'https' : 'http', options.host) }];
  if (options.tls && options.httpPort !== null) {
    const plain = hardenedServer(limits, (req, res, refusal) => app.handle(req, res, 'redirect', refusal), null, app.rawAnswer('redirect'));
    try {
      await start(plain, options.host, options.httpPort, options.reusePort);
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
 * Stops accepting, lets in-flight requests finish and answers those that arrive on open connections
 * (HTTP/1.1: the app adds `Connection: close` while draining, so each socket ends after one more
 * answer; HTTP/2: each session gets a GOAWAY), closes keep-alive sockets once they have been quiet for
 * DRAIN_QUIET_MS (drain.ts: closing an idle socket at once resets the request its client is sending),
 * and after `deadlineMs` closes whatever is left. Resolves with the number of connections cut then.
 * `stopped` (threads sharing a port): each listener stops accepting at once, the rest waits for it,
 * the word that every thread's listener on the port has stopped accepting. Until then the thread
 * answers as before: a client told to close (or sent a GOAWAY) would connect again, the kernel would
 * queue its connection on a listener of another thread still open, and that listener's close would
 * reset it (a listener's accept queue is not handed to the others of its SO_REUSEPORT group).
 */
export async function closeListeners(listeners: readonly { readonly server: HttpServer }[], deadlineMs: number, stopped?: Promise<void>): Promise<number> {
  const cut = await Promise.all(
    listeners.map(
      ({ server }) =>
        new Promise<number>((resolve) => {
          let forced = 0;
          let closed = false;
          let sweep: NodeJS.Timeout | undefined;
          const deadline = setTimeout(() => {
            const open = SOCKETS.get(server) ?? new Set();
            forced = open.size;
            for (const socket of open) socket.destroy();
          }, deadlineMs);
          deadline.unref();
          stopAccepting(server, () => {
            closed = true;
            clearInterval(sweep);
            clearTimeout(deadline);
            resolve(forced);
          });
          const drain = () => {
            if (closed) return;
            sweep = setInterval(() => setImmediate(closeQuietConnections, server, Date.now()), DRAIN_SWEEP_MS);
            sweep.unref();
            goAway(server);
            closeQuietConnections(server, Date.now());
          };
          if (stopped === undefined) drain();
          else void stopped.then(drain);
        }),
    ),
  );
  return cut.reduce((a, b) => a + b, 0);
}
