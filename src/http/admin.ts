// The --admin-port listener: /healthz and /metrics only, for a monitoring network that the public
// port does not reach. Plain HTTP: it carries no keys and no customer data.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode } from '../errors.ts';
import { rawResponse } from './client-error.ts';
import { sendMetrics } from './metrics.ts';
import { ALLOW, listenerHeaders, RequestIds, sendError, sendHealth, type HealthReport } from './respond.ts';
import { hardenedServer, resolveLimits, start, urlOf, type Limits, type Listener } from './server.ts';
import { splitTarget, type Target } from './target.ts';

export interface AdminOptions {
  readonly host: string;
  readonly port: number;
  readonly metrics: () => string;
  readonly draining: () => boolean;
  readonly health: () => HealthReport;
  readonly limits?: Partial<Limits>;
}

const HEADERS = listenerHeaders({ https: false, corsOrigin: null });
/** Reused: read synchronously in answer() only. */
const target: Target = { path: '', query: '', absolute: false };

function answer(req: IncomingMessage, res: ServerResponse, o: AdminOptions, requestId: string, refusal: ErrorCode | undefined): void {
  splitTarget(req.url ?? '', target); // as the main listener reads it: absolute form, %-decoding
  const { path } = target;
  const extra: string[] = ['X-Request-Id', requestId];
  if (o.draining()) extra.push('Connection', 'close');
  if (refusal !== undefined) return sendError(res, refusal, HEADERS, extra);
  if (path !== '/healthz' && path !== '/metrics') return sendError(res, 'NOT_FOUND', HEADERS, extra);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    extra.push(...ALLOW);
    return sendError(res, 'METHOD_NOT_ALLOWED', HEADERS, extra);
  }
  if (path === '/healthz') sendHealth(res, o.health(), true, HEADERS, extra); // a monitoring network: the node too
  else sendMetrics(res, o.metrics(), HEADERS, extra);
}

export async function listenAdmin(o: AdminOptions): Promise<Listener> {
  const ids = new RequestIds();
  const handler = (req: IncomingMessage, res: ServerResponse, refusal?: ErrorCode) => {
    const requestId = ids.next();
    try {
      answer(req, res, o, requestId, refusal);
    } catch {
      if (!res.headersSent) sendError(res, 'INTERNAL_ERROR', HEADERS, ['X-Request-Id', requestId]);
      else res.destroy();
    }
  };
  const server = hardenedServer(resolveLimits(o.limits), handler, null, (code, extra = [], message) => rawResponse(code, [...HEADERS, 'X-Request-Id', ids.next(), ...extra], message));
  await start(server, o.host, o.port);
  return { server, transport: 'insecure', url: urlOf(server, 'http', o.host) };
}
