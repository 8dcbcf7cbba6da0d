// The TLS listener in the intermediate profile (src/tls/profile.ts): HTTP/2 and HTTP/1.1 on one port,
// chosen by ALPN (RFC 9113 3.3), each protocol held to the same hardening limits, a drain that sends
// HTTP/2 clients a GOAWAY, and a certificate replaced without a restart.
import http2 from 'node:http2';
import { TLS_PROFILE } from '../tls/profile.ts';
import type { Limits } from './server.ts';

/** Streams one HTTP/2 connection may have open at once (RFC 9113 6.5.2 advises no less than 100). */
const MAX_CONCURRENT_STREAMS = 100;

const STREAMS = Symbol('streams opened');
const SEEN = Symbol('streams at the last sweep');
const QUIET_SINCE = Symbol('no new stream since');
const MAX_STREAMS = Symbol('max streams');
type Session = http2.ServerHttp2Session & { [STREAMS]: number; [SEEN]: number; [QUIET_SINCE]: number; [MAX_STREAMS]: number };

const SESSIONS = new WeakMap<http2.Http2SecureServer, Set<Session>>();

/**
 * Where each limit of `Limits` is applied:
 * - TLS handshake (both protocols): `handshakeTimeout`, by tls.Server.
 * - Connections (both): `maxConnections`, by net.Server (set by the caller).
 * - HTTP/1.1: Node hands the connection to node:http's parser, which reads its limits from the server
 *   object, not from these options: headersTimeout and requestTimeout (checked every
 *   connectionsCheckingInterval), keepAliveTimeout, maxHeaderSize, maxRequestsPerSocket.
 * - HTTP/2: a header block arrives whole or not at all (nghttp2 holds it), at most maxHeaderListSize
 *   bytes (announced in SETTINGS; a larger one resets its stream); a session with no frame either way
 *   for keepAliveTimeout, or no new stream for requestTimeout (a client trickling a header block
 *   opens none), is closed with a GOAWAY and destroyed a requestTimeout later; after
 *   maxRequestsPerSocket streams a session is closed with a GOAWAY, as HTTP/1.1 closes the socket.
 */
export function secureServer(limits: Limits, tls: { readonly cert: string | Buffer; readonly key: string | Buffer }): http2.Http2SecureServer {
  const server = http2.createSecureServer({
    ...TLS_PROFILE,
    cert: tls.cert,
    key: tls.key,
    handshakeTimeout: limits.tlsHandshakeTimeoutMs,
    allowHTTP1: true,
    // Nagle off on every accepted socket, as node:https and node:http do by default (http2 does not:
    // strace showed no TCP_NODELAY on our sockets where the bare https server sets it per connection).
    noDelay: true,
    settings: { maxHeaderListSize: limits.maxHeaderSize, maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
  });
  Object.assign(server, {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
    maxHeaderSize: limits.maxHeaderSize,
    maxRequestsPerSocket: limits.maxRequestsPerSocket,
    // As for the plain listener (server.ts serverOptions): the app answers these in JSON.
    requireHostHeader: false,
    joinDuplicateHeaders: true,
  });
  const sessions = new Set<Session>();
  SESSIONS.set(server, sessions);
  server.on('session', (s: http2.ServerHttp2Session) => {
    const session = Object.assign(s, { [STREAMS]: 0, [SEEN]: 0, [QUIET_SINCE]: Date.now(), [MAX_STREAMS]: limits.maxRequestsPerSocket });
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.setTimeout(limits.keepAliveTimeoutMs, closeSession);
    session.on('stream', countStream);
  });
  const sweep = setInterval(sweepSessions, limits.connectionsCheckingIntervalMs, sessions, limits.requestTimeoutMs);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
  return server;
}

function closeSession(this: http2.ServerHttp2Session): void {
  if (!this.closed) this.close();
}

function countStream(this: Session): void {
  if (++this[STREAMS] === this[MAX_STREAMS]) this.close();
}

/** Closes sessions that opened no stream for `timeoutMs`, and destroys those that stay open that long after. */
function sweepSessions(sessions: Set<Session>, timeoutMs: number): void {
  const now = Date.now();
  for (const session of sessions) {
    if (session[STREAMS] !== session[SEEN]) {
      session[SEEN] = session[STREAMS];
      session[QUIET_SINCE] = now;
    } else if (now - session[QUIET_SINCE] >= timeoutMs) {
      if (session.closed) session.destroy();
      else session.close();
      session[QUIET_SINCE] = now;
    }
  }
}

/**
 * Serves new handshakes with another certificate and key (a renewed pair, on SIGHUP); connections
 * already open keep the one they agreed on. Throws, keeping the old pair, when OpenSSL refuses the new.
 */
export function replaceCertificate(server: http2.Http2SecureServer, tls: { readonly cert: string | Buffer; readonly key: string | Buffer }): void {
  server.setSecureContext({ ...TLS_PROFILE, cert: tls.cert, key: tls.key });
}

/**
 * Draining: every HTTP/2 session gets a GOAWAY (RFC 9113 6.8), the HTTP/2 form of `Connection: close`;
 * streams already open finish, the client sends new ones elsewhere.
 */
export function goAway(server: unknown): void {
  for (const session of SESSIONS.get(server as http2.Http2SecureServer) ?? []) if (!session.closed) session.close();
}
