// `npm run bench:threads` (issue 21): `serve --threads 1` against `--threads 2` on the same data in
// the same run: start time, RSS, and per scenario (a list, a filter, a detail, a 429) req/s, p99 and
// the server's CPU microseconds per request (utime + stime of the whole process from /proc, every
// thread included). On a 2-core machine wrk shares the cores with the server, so req/s of 2 threads
// cannot show the scaling; CPU per request shows what a thread costs.
// With --redis the servers count on a redis-server of their own (started here, on a free loopback
// port); every row then also gives the main thread's CPU per request (/proc/PID/task/PID), which is
// where a worker's admission costs when it goes through the main thread's Redis client.
//   npm run bench:threads -- [--data DIR | --scale 10000] [--duration 5] [--connections 50] [--rounds 2]
//     [--redis] [--only list,429] [--threads 1,2]
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cli, CLI, fetchOnce, memoryOf, stop } from './server.ts';
import { ensureWrk, runLoad } from './wrk.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string' },
    scale: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '2' },
    work: { type: 'string', default: join(os.tmpdir(), 'celebrity-api-bench') },
    redis: { type: 'boolean', default: false },
    only: { type: 'string', default: 'list,filter,detail,429' },
    threads: { type: 'string', default: '1,2' },
  },
});
const log = (line: string) => process.stderr.write(`[bench:threads] ${line}\n`);
const TICK_US = 1e6 / 100; // USER_HZ: /proc reports CPU time in 1/100 s on Linux

/** utime + stime of every thread of `pid`, in microseconds. */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** utime + stime of the main thread of `pid` alone (its task whose id is the pid), in microseconds. */
function mainCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** With --redis: the server every serve and accounts command of this run is given. */
let redis: RedisServer | null = null;
const redisArgs = (): string[] => (redis === null ? [] : ['--redis-url', redis.url]);

async function dataDir(): Promise<string> {
  if (flags.data) return flags.data;
  const dir = join(flags.work!, `data-${flags.scale}-bench`);
  if (existsSync(join(dir, 'celebrities.json'))) return dir;
  await mkdir(flags.work!, { recursive: true });
  log(`generating scale ${flags.scale} into ${dir}`);
  await cli(['data', 'generate', '--out', dir, '--scale', flags.scale!, '--seed', 'bench']);
  return dir;
}

async function serve(data: string, state: string, threads: number): Promise<{ child: ChildProcess; url: string; startMs: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--insecure-http', '--port', '0', '--data', data, '--state', state, '--threads', String(threads), '--log-level', 'error', '--usage-durability', 'interval', ...redisArgs()], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]!, startMs: performance.now() - t0 });
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

async function key(state: string, email: string, plan: string): Promise<string> {
  return JSON.parse(await cli(['accounts', 'create', '--state', state, '--email', email, '--plan', plan, '--password-stdin', '--json', ...redisArgs()], 'bench password 1234\n')).key;
}

interface Row { threads: number; scenario: string; rps: number; p99: number; cpuUsPerReq: number; mainUsPerReq: number }

async function main(): Promise<void> {
  const wrk = ensureWrk(log);
  const data = await dataDir();
  const work = await mkdtemp(join(os.tmpdir(), 'celebrity-threads-bench-'));
  if (flags.redis) redis = await startRedis();
  const only = flags.only!.split(',');
  const counts = flags.threads!.split(',').map(Number);
  const rows: Row[] = [];
  const memory: { threads: number; startMs: number; rss: number }[] = [];
  try {
    const state = join(work, 'state');
    const enterprise = await key(state, 'bench@example.com', 'enterprise');
    const free = await key(state, 'free@example.com', 'free');
    // First start writes the boot cache; the starts measured read it, as every restart does.
    await stop((await serve(data, state, 1)).child);
    for (let round = 0; round < Number(flags.rounds); round++) {
      for (const threads of counts) {
        const server = await serve(data, state, threads);
        memory.push({ threads, startMs: server.startMs, rss: memoryOf(server.child.pid!).rss });
        // The start's own work goes on after `listening` (each thread compresses its first pages
        // ahead, off its event loop): measured, it would be counted to the first scenario, twice
        // with 2 threads. Wait until the server is below 5% of a core over a second (at most 60 s).
        for (let i = 0; i < 60; i++) {
          const before = cpuUs(server.child.pid!);
          await new Promise((r) => setTimeout(r, 1000));
          if (cpuUs(server.child.pid!) - before < 50_000) break;
        }
        const first = JSON.parse((await fetchOnce(`${server.url}/api/v1/celebrities?limit=1`, { 'x-api-key': enterprise })).body.toString()).data[0];
        const category = JSON.parse((await fetchOnce(`${server.url}/api/v1/outfits?limit=1`, { 'x-api-key': enterprise })).body.toString()).data[0].category;
        // Use up the free key's month, so its requests are the 429 scenario.
        for (let i = 0; i < 100; i++) await fetchOnce(`${server.url}/api/v1/news?limit=1`, { 'x-api-key': free });
        const scenarios = ([
          ['list', '/api/v1/celebrities', enterprise],
          ['filter', `/api/v1/outfits?category=${encodeURIComponent(category)}&sort=popular`, enterprise],
          ['detail', `/api/v1/celebrities/${first.slug}`, enterprise],
          ['429', '/api/v1/news', free],
        ] as [string, string, string][]).filter(([name]) => only.includes(name));
        for (const [scenario, path, k] of scenarios) {
          await runLoad(wrk, { url: `${server.url}${path}`, seconds: 1, connections: Number(flags.connections), headers: { 'x-api-key': k } });
          const [cpu0, main0] = [cpuUs(server.child.pid!), mainCpuUs(server.child.pid!)];
          const r = await runLoad(wrk, { url: `${server.url}${path}`, seconds: Number(flags.duration), connections: Number(flags.connections), headers: { 'x-api-key': k } });
          const [cpu, mainCpu] = [cpuUs(server.child.pid!) - cpu0, mainCpuUs(server.child.pid!) - main0];
          rows.push({ threads, scenario, rps: r.rps, p99: r.p99, cpuUsPerReq: cpu / r.requests, mainUsPerReq: mainCpu / r.requests });
          log(`round ${round} threads ${threads} ${scenario}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(2)} ms, ${(cpu / r.requests).toFixed(1)} us CPU/req (main thread ${(mainCpu / r.requests).toFixed(1)}), non-2xx ${r.non2xx}`);
        }
        memory[memory.length - 1]!.rss = Math.max(memory[memory.length - 1]!.rss, memoryOf(server.child.pid!).rss);
        await stop(server.child);
      }
    }
  } finally {
    await redis?.stop();
    await rm(work, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const pick = (t: number, s: string) => rows.filter((r) => r.threads === t && r.scenario === s);
  console.log(`| scenario | threads | req/s | p99 | CPU us/req | main thread us/req |`);
  console.log(`|---|---|---|---|---|---|`);
  for (const s of only) {
    for (const t of counts) {
      const a = pick(t, s);
      console.log(`| ${s}${redis ? ' (Redis)' : ''} | ${t} | ${mean(a.map((r) => r.rps)).toFixed(0)} | ${Math.max(...a.map((r) => r.p99)).toFixed(2)} ms | ${mean(a.map((r) => r.cpuUsPerReq)).toFixed(1)} | ${mean(a.map((r) => r.mainUsPerReq)).toFixed(1)} |`);
    }
  }
  if (!counts.includes(1) || !counts.includes(2)) return;
  console.log(`\n| scenario | CPU ratio 2 / 1 |\n|---|---|`);
  for (const s of only) console.log(`| ${s} | ${(mean(pick(2, s).map((r) => r.cpuUsPerReq)) / mean(pick(1, s).map((r) => r.cpuUsPerReq))).toFixed(2)}x |`);
  const m = (t: number) => memory.filter((x) => x.threads === t);
  const [r1, r2] = [mean(m(1).map((x) => x.rss)), mean(m(2).map((x) => x.rss))];
  const [s1, s2] = [mean(m(1).map((x) => x.startMs)), mean(m(2).map((x) => x.startMs))];
  console.log(`\n| threads | RSS after load | start (boot cache) |\n|---|---|---|`);
  console.log(`| 1 | ${r1.toFixed(0)} MiB | ${s1.toFixed(0)} ms |`);
  console.log(`| 2 | ${r2.toFixed(0)} MiB (${(r2 / r1).toFixed(2)}x) | ${s2.toFixed(0)} ms (${(s2 / s1).toFixed(2)}x) |`);
}

await main();
