// The access log: one line per response through the structured logger (JSON lines or text),
// with the client address, and never an API key (SPEC 5.5, CONTRACT 4).
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../log.ts';

/** Longest request target written out; headers are capped at 16 KiB, a log line need not be. */
const MAX_PATH = 1024;

/**
 * Anything shaped like a key (`cel_` plus a run of base62, possibly %-encoded underscore), and the
 * value of any query parameter whose name suggests a credential: clients do paste keys into URLs.
 */
const KEY_LIKE = /cel(?:_|%5[Ff])[A-Za-z0-9]{4,}/g;
const PARAM = /([?&][^=&]*=)([^&]*)/g;
const SECRET_NAME = /key|token|secret|password|auth/i;
const hideSecret = (_: string, name: string, value: string) => (SECRET_NAME.test(name) ? `${name}[redacted]` : name + value);

export function redactTarget(target: string): string {
  const short = target.length > MAX_PATH ? target.slice(0, MAX_PATH) + '...' : target;
  return short.replace(KEY_LIKE, 'cel_[redacted]').replace(PARAM, hideSecret);
}

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

export interface AccessLogEntry {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ms: number;
  readonly client: string;
}

/** Writes one entry; 5xx go out as errors so they pass a `--log-level warn` filter. */
export function createAccessLog(log: Logger, trustProxy: boolean): (req: IncomingMessage, status: number, requestId: string, startNs: bigint) => void {
  return (req, status, requestId, startNs) => {
    const entry: AccessLogEntry = {
      requestId,
      method: (req.method ?? '').slice(0, 16),
      path: redactTarget(req.url ?? ''),
      status,
      ms: Math.round(Number(process.hrtime.bigint() - startNs) / 1e3) / 1e3,
      client: clientAddress(req, trustProxy),
    };
    if (status >= 500) log.error('request', { ...entry });
    else log.info('request', { ...entry });
  };
}
