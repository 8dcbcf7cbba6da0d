// Draining an HTTP/1.1 listener without resetting keep-alive clients: stop accepting, answer whatever
// arrives with `Connection: close` (the app does), and close a kept-alive socket only once it has
// been quiet long enough that no request can be on its way (issue 15 item 4).
import net from 'node:net';
import type { Socket } from 'node:net';
import type { HttpServer } from './server.ts';

/**
 * A socket idle this long while draining is closed. A keep-alive client sends its next request as soon
 * as it has read a response, so a request arriving during the drain shows up well within this; closing
 * an idle socket sooner races that request, and the client sees a reset instead of an answer.
 */
export const DRAIN_QUIET_MS = 250;
/** How often a draining server looks for quiet sockets. */
export const DRAIN_SWEEP_MS = 50;

/** Node's own bookkeeping (lib/_http_server.js), reached by its symbol's name; null where a version lacks it. */
function internal<T>(server: HttpServer, name: string): T | null {
  const symbol = Object.getOwnPropertySymbols(server).find((s) => s.description === name);
  return symbol === undefined ? null : ((server as unknown as Record<symbol, T>)[symbol] ?? null);
}

/** The parsers Node counts as idle: no request being read (a half-sent one is not idle). */
type ConnectionsList = { idle(): { socket: Socket | null }[] };

const QUIET_SINCE = Symbol('quiet since');
const QUIET_BYTES = Symbol('quiet bytes');
type Watched = Socket & { [QUIET_SINCE]?: number; [QUIET_BYTES]?: number; _httpMessage?: { finished: boolean } | null };

/**
 * Stops accepting connections without closing idle ones: `close()` of node:http (and of node:http2
 * with HTTP/1.1 allowed) would close every idle keep-alive socket at once, including those whose
 * client is sending a request at that instant.
 */
export function stopAccepting(server: HttpServer, closed: () => void): void {
  net.Server.prototype.close.call(server, () => {
    // What http.Server.close() would have stopped: the timer that checks request timeouts.
    const checking = internal<NodeJS.Timeout>(server, 'http.server.connectionsCheckingInterval');
    if (checking !== null) clearInterval(checking);
    closed();
  });
}

/**
 * One sweep: closes the sockets that were idle at an earlier sweep and have read nothing since, for
 * at least DRAIN_QUIET_MS. Run from setImmediate after a timer, so input that arrived while the
 * process was busy has been read (poll phase) before a socket is judged quiet (check phase).
 */
export function closeQuietConnections(server: HttpServer, now: number): void {
  const connections = internal<ConnectionsList>(server, 'http.server.connections');
  // No bookkeeping in this Node version: its own rule (at once), rather than none.
  if (connections === null) return (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
  for (const { socket } of connections.idle()) {
    const s = socket as Watched | null;
    if (s === null || s.writableEnded || (s._httpMessage != null && !s._httpMessage.finished)) continue;
    if (s[QUIET_BYTES] !== s.bytesRead) {
      s[QUIET_BYTES] = s.bytesRead;
      s[QUIET_SINCE] = now;
    } else if (now - s[QUIET_SINCE]! >= DRAIN_QUIET_MS) {
      s.end(); // nothing unread, nothing owed: a FIN, and TLS its close_notify
    }
  }
}
