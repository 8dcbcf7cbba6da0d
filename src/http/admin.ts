// The --admin-port listener: /healthz and /metrics only, for a monitoring network that the public
// port does not reach. Plain HTTP: it carries no keys and no customer data.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendMetrics } from './metrics.ts';
import { ALLOW, listenerHeaders, sendError, sendHealth, type Health } from './respond.ts';
import { hardenedServer, resolveLimits, start, urlOf, type Limits, type Listener } from './server.ts';

export interface AdminOptions {
  readonly host: string;
  readonly port: number;
  readonly metrics: () => string;
  readonly draining: () => boolean;
  readonly health: () => Health;
  readonly limits?: Partial<Limits>;
}

const HEADERS = listenerHeaders({ https: false, corsOrigin: null });

function answer(req: IncomingMessage, res: ServerResponse, o: AdminOptions): void {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const extra: string[] = o.draining() ? ['Connection', 'close'] : [];
  if (path !== '/healthz' && path !== '/metrics') return sendError(res, 'NOT_FOUND', HEADERS, extra);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    extra.push(...ALLOW);
    return sendError(res, 'METHOD_NOT_ALLOWED', HEADERS, extra);
  }
  if (path === '/healthz') sendHealth(res, o.health(), HEADERS, extra);
  else sendMetrics(res, o.metrics(), HEADERS, extra);
}

export async function listenAdmin(o: AdminOptions): Promise<Listener> {
  const server = hardenedServer(resolveLimits(o.limits), (req, res) => {
    try {
      answer(req, res, o);
    } catch {
      if (!res.headersSent) sendError(res, 'INTERNAL_ERROR', HEADERS, []);
      else res.destroy();
    }
  });
  await start(server, o.host, o.port);
  return { server, transport: 'insecure', url: urlOf(server, 'http', o.host) };
}
