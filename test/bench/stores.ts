// The cost of where counts go (issues 10 and 13): the same `serve` on the state directory's files
// with --usage-durability interval (written once a second) and strict (a 200 leaves once its record
// is fsynced, in group commits), and on Redis (--redis-url), driven by wrk in alternating slices of
// the same run. Ratios are against files/interval.
//   taskset -c 1 node --import tsx test/bench/stores.ts [--data DIR] [--duration 4] [--connections 50]
// The servers run pinned to core 0, Redis and wrk (with this script) on core 1.
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { CLI, cli, fetchOnce, stop } from './server.ts';
import { ensureWrk, runLoad, type LoadResult } from './wrk.ts';

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string' },
    duration: { type: 'string', default: '4' },
    connections: { type: 'string', default: '50' },
    appendfsync: { type: 'string', default: 'everysec' },
  },
});
const SECONDS = Number(flags.duration);
const CONNECTIONS = Number(flags.connections);
const ROUNDS = 2;
const SIDES = ['interval', 'strict', 'redis'] as const;
type Side = (typeof SIDES)[number];
const log = (line: string) => process.stderr.write(`[bench:stores] ${line}\n`);
const PIN = ['taskset', '-c', '0'];

const children: ChildProcess[] = [];

/** `serve` pinned to core 0 over plain HTTP; resolves with its URL once it listens. */
function serve(state: string, extra: string[]): Promise<{ child: ChildProcess; url: string }> {
  const args = [...PIN.slice(1), process.execPath, CLI, 'serve', '--insecure-http', '--port', '0', '--state', state, '--log-level', 'error', ...extra];
  if (flags.data) args.push('--data', flags.data);
  const child = spawn(PIN[0]!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

async function account(store: string[], email: string, plan: string): Promise<string> {
  return JSON.parse(await cli(['accounts', 'create', ...store, '--email', email, '--plan', plan, '--password-stdin', '--json'], 'bench-password-not-secret\n')).key;
}

/** The mean Redis round trip of reservations so far, from the server's /metrics. */
async function reserveRoundTripMs(url: string): Promise<number> {
  const text = (await fetchOnce(`${url}/metrics`, {})).body.toString();
  const value = (name: string) => Number(new RegExp(`^${name}\\{op="reserve"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return (value('celebrity_api_store_round_trip_seconds_total') / value('celebrity_api_store_round_trips_total')) * 1000;
}

/** The strict server's group commits so far, from its /metrics. */
async function commitFigures(url: string): Promise<{ commits: number; perCommit: number; meanMs: number; maxMs: number }> {
  const text = (await fetchOnce(`${url}/metrics`, {})).body.toString();
  const value = (name: string) => Number(new RegExp(`^celebrity_api_usage_log_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const commits = value('commits_total');
  return { commits, perCommit: value('committed_requests_total') / commits, meanMs: (value('commit_seconds_total') / commits) * 1000, maxMs: value('commit_seconds_max') * 1000 };
}

function combine(rs: readonly LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  return { requests: sum((r) => r.requests), rps: sum((r) => r.rps) / rs.length, p50: sum((r) => r.p50) / rs.length, p99: Math.max(...rs.map((r) => r.p99)), non2xx: sum((r) => r.non2xx), errors: sum((r) => r.errors) };
}

async function main(): Promise<void> {
  const wrk = ensureWrk(log);
  const dir = await mkdtemp(join(os.tmpdir(), 'celebrity-api-bench-stores-'));
  let redis: RedisServer | null = null;
  try {
    redis = await startRedis({ args: ['--appendonly', 'yes', '--appendfsync', flags.appendfsync!] });
    const files = ['--state', join(dir, 'files')];
    const shared = ['--redis-url', redis.url];
    const fileKeys = { good: await account(files, 'bench@example.com', 'enterprise'), spent: await account(files, 'spent@example.com', 'free') };
    const keys = {
      interval: fileKeys,
      // The same accounts: the strict server reads the interval server's state as a copy.
      strict: fileKeys,
      redis: { good: await account(shared, 'bench@example.com', 'enterprise'), spent: await account(shared, 'spent@example.com', 'free') },
    };
    await cp(join(dir, 'files'), join(dir, 'files-strict'), { recursive: true });
    const servers = {
      interval: await serve(join(dir, 'files'), ['--usage-durability', 'interval']),
      strict: await serve(join(dir, 'files-strict'), ['--usage-durability', 'strict']),
      redis: await serve(join(dir, 'redis-instance'), shared),
    };
    for (const side of SIDES) {
      for (let i = 0; i < 101; i++) await fetchOnce(`${servers[side].url}/api/v1/celebrities?limit=1`, { 'x-api-key': keys[side].spent });
    }
    const scenarios = [
      { name: 'list, limit 1 (200)', path: '/api/v1/celebrities?limit=1', key: 'good' },
      { name: 'list default page (200)', path: '/api/v1/celebrities', key: 'good' },
      { name: '429 quota used up', path: '/api/v1/celebrities', key: 'spent' },
      { name: '401 bad key (no store call)', path: '/api/v1/celebrities', key: 'bad' },
    ] as const;
    const rows: string[] = [];
    for (const s of scenarios) {
      const results: Record<Side, LoadResult[]> = { interval: [], strict: [], redis: [] };
      const headersOf = (side: Side) => ({ 'x-api-key': s.key === 'bad' ? 'cel_0000000000000000000000000000000000000000' : keys[side][s.key] });
      for (const side of SIDES) await runLoad(wrk, { url: servers[side].url + s.path, seconds: 1, connections: CONNECTIONS, headers: headersOf(side) });
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of SIDES) {
          results[side].push(await runLoad(wrk, { url: servers[side].url + s.path, seconds: SECONDS / ROUNDS, connections: CONNECTIONS, headers: headersOf(side) }));
        }
      }
      const f = combine(results.interval);
      const cells = SIDES.map((side) => {
        const r = combine(results[side]);
        return `${r.rps.toFixed(0)} | ${r.p99.toFixed(2)}${side === 'interval' ? '' : ` | ${(r.rps / f.rps).toFixed(2)}`}`;
      });
      rows.push(`| ${s.name} | ${cells.join(' | ')} |`);
      log(`${s.name}: ${SIDES.map((side) => `${side} ${combine(results[side]).rps.toFixed(0)} req/s`).join(', ')}`);
    }
    const rt = await reserveRoundTripMs(servers.redis.url);
    const commits = await commitFigures(servers.strict.url);
    process.stdout.write(
      [
        `\n## Where counts go (${os.cpus()[0]?.model ?? '?'}, Node ${process.version}, wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, Redis appendfsync ${flags.appendfsync}; servers on core 0, Redis and wrk on core 1)\n`,
        '| scenario | interval req/s | interval p99 ms | strict req/s | strict p99 ms | ratio | redis req/s | redis p99 ms | ratio |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
        ...rows,
        `\nMean Redis round trip of a reservation, as the server measured it (/metrics): ${rt.toFixed(3)} ms.`,
        `Strict group commits (/metrics): ${commits.commits} commits, ${commits.perCommit.toFixed(1)} requests per commit, ${commits.meanMs.toFixed(2)} ms mean write + fdatasync (max ${commits.maxMs.toFixed(1)} ms).`,
      ].join('\n') + '\n',
    );
  } finally {
    await Promise.all(children.map((c) => stop(c, 10_000)));
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
