// /metrics and /healthz: the Prometheus text is well formed and counts what it claims; it is served
// to loopback only on the main port or on --admin-port alone; /healthz never counts against a quota.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fromLoopback, Metrics } from '../../src/http/metrics.ts';
import { usageLogMetrics } from '../../src/store/file/file-store.ts';
import type { UsageLogStatus } from '../../src/store/file/usage-log.ts';
import type { StoreStatus } from '../../src/store/types.ts';
import { route } from '../../src/http/router.ts';
import { createKey, eventually, request, tempDir, writeData } from '../helpers/serve-harness.ts';
import { EVENTUALLY_MS } from '../helpers/deadlines.ts';
import { runCli, spawnServe } from '../helpers/serve-process.ts';

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\])*",?)*\})? (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|\+Inf|NaN)$/;

/** Checks the exposition format: HELP and TYPE before each family's samples; returns name{labels} -> value. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const typed = new Set<string>();
  assert.ok(text.endsWith('\n'));
  for (const line of text.trimEnd().split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') typed.add(meta[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    assert.ok(typed.has(m[1]!.replace(/_(bucket|sum|count)$/, '')) || typed.has(m[1]!), `no TYPE before ${line}`);
    samples.set(m[1]! + (m[2] ?? ''), Number(m[3]));
  }
  return samples;
}

describe('Metrics', () => {
  let now = 1_000_000;
  let store: StoreStatus | null = null;
  const metrics = new Metrics({ clock: () => now, draining: () => false, store: () => store });
  const start = () => performance.now() - 2; // 2 ms ago

  it('counts by route and status, with a cumulative latency histogram and quota rejections', () => {
    for (const [path, status] of [['/api/v1/celebrities', 200], ['/api/v1/celebrities', 200], ['/api/v1/celebrities', 429], ['/api/v1/movies/night-train', 200], ['/api/v1/nope', 404], ['/favicon.ico', 404]] as const) {
      metrics.observe(route(path), status, start());
    }
    metrics.dataLoaded('v-"1"\\', 1_700_000_000_000);
    metrics.reloaded(true);
    metrics.reloaded(false);
    const s = parseExposition(metrics.render());
    assert.equal(s.get('celebrity_api_requests_total{route="/api/v1/celebrities",status="200"}'), 2);
    assert.equal(s.get('celebrity_api_requests_total{route="/api/v1/celebrities",status="429"}'), 1);
    assert.equal(s.get('celebrity_api_requests_total{route="/api/v1/movies/{slug}",status="200"}'), 1, 'slugs never become labels');
    assert.equal(s.get('celebrity_api_requests_total{route="/api/other",status="404"}'), 1);
    assert.equal(s.get('celebrity_api_requests_total{route="other",status="404"}'), 1);
    assert.equal(s.get('celebrity_api_quota_rejections_total'), 1);
    const buckets = [...s].filter(([k]) => k.startsWith('celebrity_api_request_duration_seconds_bucket{route="/api/v1/celebrities"'));
    assert.deepEqual(buckets.map(([, v]) => v), [...buckets.map(([, v]) => v)].sort((a, b) => a - b), 'buckets are cumulative');
    assert.equal(buckets.at(-1)![1], 3);
    assert.equal(s.get('celebrity_api_request_duration_seconds_bucket{route="/api/v1/celebrities",le="0.001"}'), 0, 'each took 2 ms');
    assert.equal(s.get('celebrity_api_request_duration_seconds_count{route="/api/v1/celebrities"}'), 3);
    assert.equal(s.get('celebrity_api_data_info{version="v-\\"1\\"\\\\"}'), 1, 'label values are escaped');
    assert.equal(s.get('celebrity_api_data_loaded_timestamp_seconds'), 1_700_000_000);
    assert.equal(s.get('celebrity_api_data_reloads_total{result="success"}'), 1);
    assert.equal(s.get('celebrity_api_data_reloads_total{result="rejected"}'), 1);
    assert.equal(s.get('celebrity_api_draining'), 0);
    assert.equal(s.has('celebrity_api_usage_log_lag_seconds'), false, 'no usage log, no lag series');
    assert.equal(s.has('celebrity_api_store_up'), false, 'no store, no store series');
  });

  const logStatus = (pendingRecords: number, lastFlushMs: number, flushFailures: number): UsageLogStatus => ({
    pendingRecords, lastFlushMs, flushFailures, commits: 4, committedRecords: 10, committedWaiters: 7, commitSeconds: 0.02, commitSecondsMax: 0.008, waiting: 3, withdrawn: 1,
  });

  it('usage-log lag: 0 when all is durable, else the time since the last flush; batches, sync times, waiters', () => {
    store = { healthy: true, metrics: usageLogMetrics(logStatus(0, now - 5000, 0), now) };
    assert.equal(parseExposition(metrics.render()).get('celebrity_api_usage_log_lag_seconds'), 0);
    store = { healthy: false, metrics: usageLogMetrics(logStatus(3, now - 2500, 2), now) };
    const s = parseExposition(metrics.render());
    assert.equal(s.get('celebrity_api_store_up'), 0);
    assert.equal(s.get('celebrity_api_usage_log_lag_seconds'), 2.5);
    assert.equal(s.get('celebrity_api_usage_log_pending_records'), 3);
    assert.equal(s.get('celebrity_api_usage_log_flush_failures_total'), 2);
    assert.equal(s.get('celebrity_api_usage_log_commits_total'), 4);
    assert.equal(s.get('celebrity_api_usage_log_committed_requests_total'), 7);
    assert.equal(s.get('celebrity_api_usage_log_commit_seconds_max'), 0.008);
    assert.equal(s.get('celebrity_api_usage_log_waiting_requests'), 3);
    assert.equal(s.get('celebrity_api_usage_log_withdrawn_total'), 1);
    store = null;
  });

  const peers: [string, Record<string, string>, boolean][] = [
    ['127.0.0.1', {}, true],
    ['127.8.9.10', {}, true],
    ['::1', {}, true],
    ['::ffff:127.0.0.1', {}, true],
    ['10.0.0.1', {}, false],
    ['::ffff:192.168.1.2', {}, false],
    ['127.0.0.1', { 'x-forwarded-for': '203.0.113.1' }, false],
    ['127.0.0.1', { 'x-forwarded-proto': 'https' }, false],
    ['127.0.0.1', { forwarded: 'for=203.0.113.1' }, false],
    ['127.0.0.1', { 'x-real-ip': '203.0.113.1' }, false],
  ];
  for (const [address, headers, expected] of peers) {
    it(`fromLoopback ${address} ${JSON.stringify(headers)} -> ${expected}`, () => {
      const req = { socket: { remoteAddress: address }, headers } as unknown as IncomingMessage;
      assert.equal(fromLoopback(req), expected);
    });
  }
});

describe('serve: /healthz and /metrics', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    tmp = await tempDir('metrics');
    await writeData(join(tmp.dir, 'data'));
  });
  after(async () => tmp.remove());

  it('main port: /metrics for loopback only, /healthz without a key and never counted', async () => {
    const state = join(tmp.dir, 'state-main');
    const key = await createKey(state, 'metrics@example.com');
    const serve = await spawnServe(['--insecure-http', '--port', '0', '--state', state, '--data', join(tmp.dir, 'data')]);
    const [url] = serve.urls as [string];
    try {
      for (let i = 0; i < 3; i++) assert.equal((await request(url, '/healthz', { headers: { 'x-api-key': key } })).status, 200);
      assert.equal((await request(url, '/api/v1/celebrities', { headers: { 'x-api-key': key } })).status, 200);
      assert.equal((await request(url, '/api/v1/celebrities')).status, 401);
      const m = await request(url, '/metrics');
      assert.equal(m.status, 200);
      assert.equal(m.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      const s = parseExposition(m.body);
      assert.equal(s.get('celebrity_api_requests_total{route="/healthz",status="200"}'), 3);
      assert.equal(s.get('celebrity_api_requests_total{route="/api/v1/celebrities",status="200"}'), 1);
      assert.equal(s.get('celebrity_api_requests_total{route="/api/v1/celebrities",status="401"}'), 1);
      assert.ok([...s.keys()].some((k) => k.startsWith('celebrity_api_data_info{version="')));
      const proxied = await request(url, '/metrics', { headers: { 'x-forwarded-for': '203.0.113.5' } });
      assert.equal(proxied.status, 404);
    } finally {
      serve.child.kill('SIGTERM');
      assert.equal((await serve.exited).code, 0);
    }
    const usage = JSON.parse((await runCli(['usage', '--email', 'metrics@example.com', '--json', '--state', state])).stdout);
    assert.equal(usage.used, 1, '/healthz with a key is not counted');
  });

  it('--admin-port: /healthz and /metrics there only; the main port keeps /healthz but not /metrics', async () => {
    const serve = await spawnServe(['--insecure-http', '--port', '0', '--admin-port', '0', '--state', join(tmp.dir, 'state-admin'), '--data', join(tmp.dir, 'data')]);
    try {
      await eventually(() => /^admin listening on /m.test(serve.stdout()), EVENTUALLY_MS, 'admin line');
      const admin = /^admin listening on (\S+)$/m.exec(serve.stdout())![1]!;
      const [url] = serve.urls as [string];
      assert.equal((await request(url, '/metrics')).status, 404);
      assert.equal((await request(url, '/healthz')).status, 200);
      const m = await request(admin, '/metrics');
      assert.equal(m.status, 200);
      assert.equal(parseExposition(m.body).get('celebrity_api_requests_total{route="/metrics",status="404"}'), 1);
      // The store behind the counts: this state directory's files (no node: there is no Redis).
      assert.deepEqual(JSON.parse((await request(admin, '/healthz')).body), { status: 'ok', store: { mode: 'files' } });
      assert.deepEqual(JSON.parse((await request(url, '/healthz')).body), { status: 'ok', store: { mode: 'files' } });
      assert.equal((await request(admin, '/api/v1/celebrities')).status, 404);
      const post = await request(admin, '/healthz', { method: 'POST' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
    } finally {
      serve.child.kill('SIGTERM');
      assert.equal((await serve.exited).code, 0);
    }
  });
});
