// Listeners: HTTPS (or plain with --insecure-http) and the optional refusing/redirecting plain one,
// each hardened with explicit limits, and a close that lets in-flight requests finish.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { DEFAULTS } from '../config.ts';
import type { ErrorCode } from '../errors.ts';
import type { App, Transport } from './app.ts';
import { onClientError, onConnect, onTlsClientError, type RawAnswer } from './client-error.ts';
import { closeQuietConnections, DRAIN_SWEEP_MS, stopAccepting } from './drain.ts';
import { ALLOW } from './respond.ts';

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
}

export interface Listener {
  readonly server: http.Server;
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

/** What answers requests: `refusal` is set when Node already decided (an unknown Expect: 417). */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, refusal?: ErrorCode) => void;

const SOCKETS = new WeakMap<http.Server, Set<Socket>>();

/**
 * An HTTP or HTTPS server with every limit applied; `handler` answers requests, `answer` builds the
 * JSON refusals of what never becomes a request (parser errors, CONNECT), and `plainAnswer` the one
 * for plain HTTP that reached a TLS port (without HSTS, which a browser ignores over plain HTTP).
 */
export function hardenedServer(limits: Limits, handler: Handler, tls: ListenOptions['tls'], answer: RawAnswer, plainAnswer = answer): http.Server {
  const server = tls
    ? https.createServer({ ...serverOptions(limits), cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2', handshakeTimeout: limits.tlsHandshakeTimeoutMs })
    : http.createServer(serverOptions(limits));
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  server.maxConnections = limits.maxConnections;
  server.on('clientError', onClientError(answer));
  if (tls) server.on('tlsClientError', onTlsClientError(plainAnswer));
  server.on('connect', onConnect(answer, ALLOW));
  server.on('request', handler);
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => handler(req, res, 'EXPECTATION_FAILED'));
  // Every raw socket, so the shutdown deadline also reaches those still in a TLS handshake, which
  // closeAllConnections (HTTP parsers only) does not see.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  SOCKETS.set(server, sockets);
  return server;
}

export function urlOf(server: http.Server, scheme: string, host: string): string {
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown}:${port}`;
}

export async function start(server: http.Server, host: string, port: number): Promise<void> {
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
  const limits = resolveLimits(options.limits);
  const mainTransport: Transport = options.tls ? 'https' : 'insecure';
  const main = hardenedServer(limits, (req, res, refusal) => app.handle(req, res, mainTransport, refusal), options.tls, app.rawAnswer(mainTransport), app.rawAnswer('insecure'));
  await start(main, options.host, options.port);
  const listeners: Listener[] = [{ server: main, transport: mainTransport, url: urlOf(main, options.tls ? 'https' : 'http', options.host) }];
  if (options.tls && options.httpPort !== null) {
    const plain = hardenedServer(limits, (req, res, refusal) => app.handle(req, res, 'redirect', refusal), null, app.rawAnswer('redirect'));
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
 * Stops accepting, lets in-flight requests finish and answers those that arrive on open connections
 * (the app adds `Connection: close` while draining, so each socket ends after one more answer), closes
 * keep-alive sockets once they have been quiet for DRAIN_QUIET_MS (drain.ts: closing an idle socket at
 * once resets the request its client is sending), and after `deadlineMs` closes whatever is left.
 * Resolves with the number of connections cut at the deadline.
 */
export async function closeListeners(listeners: readonly { readonly server: http.Server }[], deadlineMs: number): Promise<number> {
  const cut = await Promise.all(
    listeners.map(
      ({ server }) =>
        new Promise<number>((resolve) => {
          let forced = 0;
          const sweep = setInterval(() => setImmediate(closeQuietConnections, server, Date.now()), DRAIN_SWEEP_MS);
          const deadline = setTimeout(() => {
            const open = SOCKETS.get(server);
            forced = open?.size ?? 0;
            server.closeAllConnections();
            for (const socket of open ?? []) socket.destroy();
          }, deadlineMs);
          sweep.unref();
          deadline.unref();
          stopAccepting(server, () => {
            clearInterval(sweep);
            clearTimeout(deadline);
            resolve(forced);
          });
          closeQuietConnections(server, Date.now());
        }),
    ),
  );
  return cut.reduce((a, b) => a + b, 0);
}
