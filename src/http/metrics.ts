// Prometheus text exposition (format 0.0.4) of what an operator watches: traffic by route and
// status, latency, quota rejections, the live data version and how far the usage log lags.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks'; // a binding: the global is a getter per read
import type { StoreStatus } from '../store/types.ts';
import { COLLECTIONS, type CollectionName } from '../resources/types.ts';
import type { Route } from './router.ts';

export interface MetricsSources {
  readonly clock: () => number;
  readonly draining: () => boolean;
  /** The store's health and its own series (the usage log's, or Redis round trips). */
  readonly store: () => StoreStatus | null;
  /** Answers compressed per request: found among those kept by tag (hits) or compressed anew (misses). */
  readonly compressed?: () => { readonly hits: number; readonly misses: number } | null;
  /** List pages and details: sent again as kept by tag and target (hits) or built (misses); src/http/kept-pages.ts. */
  readonly keptPages?: () => { readonly hits: number; readonly misses: number } | null;
}

/** Upper bounds in seconds; most answers are sub-millisecond joins of precomputed JSON. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

// Route labels are fixed strings, so the number of series is bounded whatever clients send.
const LIST_LABEL = new Map<CollectionName, string>(COLLECTIONS.map((c) => [c, `/api/v1/${c}`]));
const DETAIL_LABEL = new Map<CollectionName, string>(COLLECTIONS.map((c) => [c, `/api/v1/${c}/{slug}`]));
const FIXED_LABEL: Readonly<Record<string, string>> = {
  openapi: '/api/v1/openapi.json', healthz: '/healthz', metrics: '/metrics', 'api-unknown': '/api/other', unknown: 'other', dashboard: '/dashboard',
};

function routeLabel(r: Route): string {
  if (r.kind === 'list') return LIST_LABEL.get(r.collection)!;
  if (r.kind === 'detail') return DETAIL_LABEL.get(r.collection)!;
  return FIXED_LABEL[r.kind]!;
}

class Histogram {
  readonly counts = new Array<number>(BUCKETS.length).fill(0);
  sum = 0;
  count = 0;
  add(seconds: number): void {
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

/** What one response counts in: its route's and status's counter, its route's latency. */
interface Series {
  readonly route: Route | null;
  readonly status: number;
  readonly count: { n: number };
  readonly latency: Histogram;
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class Metrics {
  private readonly requests = new Map<string, Map<number, { n: number }>>();
  private readonly latency = new Map<string, Histogram>();
  private quotaRejections = 0;
  private version = '';
  private loadedAtMs = 0;
  private readonly reloads = { success: 0, rejected: 0 };
  private readonly startedAtMs: number;

  constructor(private readonly sources: MetricsSources) {
    this.startedAtMs = sources.clock();
  }

  /** The app's observe hook calls this once per response. */
  /** `startMs`: performance.now() when the request came. */
  observe(r: Route, status: number, startMs: number): void {
    // The series of the last route object and status seen, kept: the router answers the same path
    // with the same object, and a client asks for the same thing again and again (four Map lookups saved).
    let series = this.last;
    if (series.route !== r || series.status !== status) this.last = series = this.series(r, status);
    series.count.n++;
    series.latency.add((performance.now() - startMs) / 1e3);
    if (status === 429) this.quotaRejections++;
  }

  /** The counter and histogram of a route and status, made (in the order first seen, as rendered) when new. */
  private series(r: Route, status: number): Series {
    const label = routeLabel(r);
    let byStatus = this.requests.get(label);
    if (byStatus === undefined) this.requests.set(label, (byStatus = new Map()));
    let count = byStatus.get(status);
    if (count === undefined) byStatus.set(status, (count = { n: 0 }));
    let latency = this.latency.get(label);
    if (latency === undefined) this.latency.set(label, (latency = new Histogram()));
    return { route: r, status, count, latency };
  }
  private last: Series = { route: null, status: 0, count: { n: 0 }, latency: new Histogram() };

  dataLoaded(version: string, loadedAtMs: number): void {
    this.version = version;
    this.loadedAtMs = loadedAtMs;
  }

  reloaded(ok: boolean): void {
    if (ok) this.reloads.success++;
    else this.reloads.rejected++;
  }

  render(): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family('celebrity_api_requests_total', 'counter', 'Responses sent, by route and HTTP status.');
    for (const [route, byStatus] of this.requests) {
      for (const [status, { n }] of byStatus) out.push(`celebrity_api_requests_total{route="${route}",status="${status}"} ${n}`);
    }
    family('celebrity_api_request_duration_seconds', 'histogram', 'Time from request to response, by route.');
    for (const [route, h] of this.latency) {
      BUCKETS.forEach((le, i) => out.push(`celebrity_api_request_duration_seconds_bucket{route="${route}",le="${le}"} ${h.counts[i]}`));
      out.push(`celebrity_api_request_duration_seconds_bucket{route="${route}",le="+Inf"} ${h.count}`);
      out.push(`celebrity_api_request_duration_seconds_sum{route="${route}"} ${h.sum}`);
      out.push(`celebrity_api_request_duration_seconds_count{route="${route}"} ${h.count}`);
    }
    family('celebrity_api_quota_rejections_total', 'counter', 'Requests refused with 429 QUOTA_EXCEEDED.');
    out.push(`celebrity_api_quota_rejections_total ${this.quotaRejections}`);
    const compressed = this.sources.compressed?.() ?? null;
    if (compressed !== null) {
      family('celebrity_api_compressed_answers_total', 'counter', 'Answers compressed for a request (not made ahead): kept from an earlier request by ETag (hit) or compressed now (miss).');
      out.push(`celebrity_api_compressed_answers_total{result="hit"} ${compressed.hits}`);
      out.push(`celebrity_api_compressed_answers_total{result="miss"} ${compressed.misses}`);
    }
    const pages = this.sources.keptPages?.() ?? null;
    if (pages !== null) {
      family('celebrity_api_kept_pages_total', 'counter', 'List pages and details asked for: sent as kept from an earlier request with the same ETag and target (hit) or built now (miss).');
      out.push(`celebrity_api_kept_pages_total{result="hit"} ${pages.hits}`);
      out.push(`celebrity_api_kept_pages_total{result="miss"} ${pages.misses}`);
    }
    family('celebrity_api_data_info', 'gauge', 'The data version being served (always 1).');
    out.push(`celebrity_api_data_info{version="${escapeLabel(this.version)}"} 1`);
    family('celebrity_api_data_loaded_timestamp_seconds', 'gauge', 'When the live data was loaded.');
    out.push(`celebrity_api_data_loaded_timestamp_seconds ${this.loadedAtMs / 1000}`);
    family('celebrity_api_data_reloads_total', 'counter', 'Reloads (SIGHUP or --watch), by result; rejected ones keep the old data.');
    out.push(`celebrity_api_data_reloads_total{result="success"} ${this.reloads.success}`);
    out.push(`celebrity_api_data_reloads_total{result="rejected"} ${this.reloads.rejected}`);
    const store = this.sources.store();
    if (store !== null) {
      family('celebrity_api_store_up', 'gauge', '1 while the quota store answers; 0 sends 503s (CONTRACT 9).');
      out.push(`celebrity_api_store_up ${store.healthy ? 1 : 0}`);
      let last = '';
      for (const m of store.metrics) {
        if (m.name !== last) family(m.name, m.type, m.help); // series of one name with labels share their header
        last = m.name;
        out.push(`${m.name}${m.labels ? `{${m.labels}}` : ''} ${m.value}`);
      }
    }
    family('celebrity_api_draining', 'gauge', '1 while shutting down.');
    out.push(`celebrity_api_draining ${this.sources.draining() ? 1 : 0}`);
    family('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.');
    out.push(`process_start_time_seconds ${this.startedAtMs / 1000}`);
    family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.');
    out.push(`process_resident_memory_bytes ${process.memoryUsage.rss()}`);
    return out.join('\n') + '\n';
  }
}

const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/**
 * Whether /metrics may be answered on the main port: only to a loopback peer, and never to a request
 * that carries a proxy's forwarding header: a proxy on the same host connects from loopback too, and
 * would otherwise expose the metrics to the internet (with or without --trust-proxy).
 */
export function fromLoopback(req: IncomingMessage): boolean {
  const h = req.headers;
  if (h['x-forwarded-for'] !== undefined || h['x-forwarded-proto'] !== undefined || h.forwarded !== undefined || h['x-real-ip'] !== undefined) return false;
  return LOOPBACK.test(req.socket.remoteAddress ?? '');
}

const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A listener's header list with its JSON Content-Type swapped for the exposition format's. */
export function sendMetrics(res: ServerResponse, body: string, base: readonly string[], extra: readonly string[]): void {
  const headers: string[] = [];
  for (let i = 0; i < base.length; i += 2) if (base[i]!.toLowerCase() !== 'content-type') headers.push(base[i]!, base[i + 1]!);
  res.writeHead(200, headers.concat(extra, ['Content-Type', METRICS_CONTENT_TYPE, 'Content-Length', String(Buffer.byteLength(body))]));
  res.end(body);
}
