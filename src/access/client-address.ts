// Who is at the door: the client's address as the access log and the login throttle see it.
import type { IncomingMessage } from 'node:http';

/**
 * The client's address. Behind a trusted proxy the last X-Forwarded-For entry is the one that proxy
 * appended (the peer it saw); entries before it were sent by the client and can be forged.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? '';
  if (!trustProxy) return peer;
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded !== 'string') return peer;
  const last = forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
  return last.length > 0 && last.length <= 45 ? last : peer;
}
