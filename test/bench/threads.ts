// `npm run bench:threads` (issue 21): `serve --threads 1` against `--threads 2` on the same data in
// the same run: start time, RSS, and per scenario (a list, a filter, a detail, a 429) req/s, p99 and
// the server's CPU microseconds per request (every thread's time on a core, from /proc: the
// scheduler's count in ns, finer than utime + stime's 10 ms ticks). On a 2-core machine wrk shares the cores with the server, so req/s of 2 threads
// cannot show the scaling; CPU per request shows what a thread costs.
// Each row also splits that CPU by thread kind, from /proc/PID/task/*/schedstat and each task's name
// (Node 22+ names them): the main thread, the worker threads, V8's helpers (garbage collection,
// compilation), libuv's pool, and the rest. The server is pinned to one core (server.ts SERVER_CORE)
// and wrk to the other (wrk.ts LOAD_CORE), so a side's CPU is not counted with wrk's on a shared core.
// With --redis the servers count on a redis-server of their own (started here, on a free loopback port).
// Each side is a serve command line: `--threads 1,2` makes the sides `--threads 1` and `--threads 2`;
// `--server=ARGS` (repeated; with the `=`, as ARGS begins with a dash) gives each side's own flags instead, after the common ones (a later
// flag wins), e.g. `--server='--threads 1 --usage-durability strict' --server='--threads 2
// --usage-durability strict'`; words of the form NAME=value set the side's environment (CLI=path runs
// another checkout's bin/celebrity-api on that side: the code before a change, for an A/B;
// NODE_ARGS=a,b gives node flags of its own). The ratio
// compares the first side with every other.
//   npm run bench:threads -- [--data DIR | --scale 10000] [--duration 5] [--warmup 1] [--connections 50] [--rounds 2]
//     [--redis] [--only list,429] [--threads 1,2 | --server=ARGS ...] [--unpinned] [--together]
// --together: every side's server runs at once (each on its own state directory, all pinned to the
// same core), and each round measures every scenario on every side back to back (the sides' order
// turned each round), so a side's figure and the other's are seconds apart rather than minutes on
// a machine whose load moves; the warm-up is done once, in the first round. It prints each side's
// median and spread (min-max) over the rounds, and the median and spread of the paired ratios
// (each round's figure over the first side's in the same round).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cli, CLI, fetchOnce, memoryOf, pinServer, stop } from './server.ts';
import { ensureWrk, runLoad } from './wrk.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string' },
    scale: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '2' },
    work: { type: 'string', default: join(os.tmpdir(), 'celebrity-api-bench') },
    redis: { type: 'boolean', default: false },
    only: { type: 'string', default: 'list,filter,detail,429' },
    threads: { type: 'string', default: '1,2' },
    server: { type: 'string', multiple: true },
    unpinned: { type: 'boolean', default: false },
    together: { type: 'boolean', default: false },
  },
});
const log = (line: string) => process.stderr.write(`[bench:threads] ${line}\n`);
const TICK_US = 1e6 / 100; // USER_HZ: /proc reports CPU time in 1/100 s on Linux

/** utime + stime of every thread of `pid`, in microseconds. */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** The kinds of thread a Node process has, by the names Node 22+ gives them (Node 20 names all `node`: the main thread, the rest `other`). */
const KINDS = ['main', 'workers', 'v8', 'libuv', 'other'] as const;
type Kind = (typeof KINDS)[number];
const KIND_TITLES: Record<Kind, string> = { main: 'main thread', workers: 'worker threads', v8: 'V8 helpers (GC)', libuv: 'libuv pool', other: 'other' };
function kindOf(pid: number, tid: number, name: string): Kind {
  if (tid === pid) return 'main';
  if (name === 'WorkerThread') return 'workers';
  if (name === 'node-V8Worker' || name === 'DelayedTaskSche') return 'v8';
  if (name === 'libuv-worker') return 'libuv';
  return 'other';
}

/**
 * Each task (thread) of `pid`: its kind, its CPU time in microseconds and the times it was put on a
 * core, from /proc/PID/task/TID/schedstat (the scheduler's own count, in ns: finer than stat's
 * 10 ms ticks); from stat's ticks, with no count, where schedstat is missing.
 */
function tasksUs(pid: number): Map<number, [Kind, number, number]> {
  const out = new Map<number, [Kind, number, number]>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const kind = kindOf(pid, Number(t), stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      let sched: string[] | null = null;
      try {
        sched = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').trim().split(' ');
      } catch {
        // no schedstat (a kernel without CONFIG_SCHED_INFO)
      }
      if (sched !== null) out.set(Number(t), [kind, Number(sched[0]) / 1000, Number(sched[2])]);
      else {
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(Number(t), [kind, (Number(fields[11]) + Number(fields[12])) * TICK_US, 0]);
      }
    } catch {
      // Ended between the listing and the read.
    }
  }
  return out;
}

/** CPU and times put on a core, by kind, between two readings of tasksUs (a task that started since counts from 0; one that ended is lost: none do while measured). */
function byKind(before: Map<number, [Kind, number, number]>, after: Map<number, [Kind, number, number]>): { us: Record<Kind, number>; runs: number } {
  const us = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  let runs = 0;
  for (const [tid, [kind, t, n]] of after) {
    us[kind] += t - (before.get(tid)?.[1] ?? 0);
    runs += n - (before.get(tid)?.[2] ?? 0);
  }
  return { us, runs };
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

/**
 * A side of the comparison: its serve flags (after the common ones: a later flag wins), and the
 * environment variables its words begin with (`NAME=value`, e.g. a switch for an A/B of a change).
 */
const sides: string[][] = (flags.server ?? flags.threads!.split(',').map((n) => `--threads ${n}`)).map((a) => a.trim().split(/\s+/).filter((w) => w !== ''));
const label = (side: number) => sides[side]!.join(' ');
const ENV_WORD = /^[A-Z_][A-Z0-9_]*=/;

async function serve(data: string, state: string, args: readonly string[]): Promise<{ child: ChildProcess; url: string; startMs: number }> {
  const t0 = performance.now();
  const env = { ...process.env };
  for (const w of args.filter((a) => ENV_WORD.test(a))) env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  const flagsOfSide = args.filter((a) => !ENV_WORD.test(a));
  // CLI=path: this side runs another checkout's bin/celebrity-api (the code before a change, for an A/B).
  // NODE_ARGS=a,b: node's own flags for this side (V8's heap sizes, say), before the CLI.
  const nodeArgs = env.NODE_ARGS ? env.NODE_ARGS.split(',') : [];
  const child = spawn(process.execPath, [...nodeArgs, env.CLI ?? CLI, 'serve', '--insecure-http', '--port', '0', '--data', data, '--state', state, '--log-level', 'error', '--usage-durability', 'interval', ...redisArgs(), ...flagsOfSide], { stdio: ['ignore', 'pipe', 'inherit'], env });
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

interface Row { side: number; scenario: string; rps: number; p99: number; cpuUsPerReq: number; kinds: Record<Kind, number>; runsPerReq: number }

/** Waits until the start's own work after `listening` is done (below 5% of a core over a second, at most 60 s). */
async function settle(pid: number): Promise<void> {
  // The start's own work goes on after `listening` (the first pages compressed ahead, off the
  // event loop: with threads by the main thread, once for all): measured, it would be counted
  // to the first scenario.
  for (let i = 0; i < 60; i++) {
    const before = cpuUs(pid);
    await new Promise((r) => setTimeout(r, 1000));
    if (cpuUs(pid) - before < 50_000) break;
  }
}

/** The scenarios on `url` (the free key's month used up first, so its requests are the 429 scenario). */
async function scenariosOf(url: string, enterprise: string, free: string, only: readonly string[]): Promise<[string, string, string][]> {
  const first = JSON.parse((await fetchOnce(`${url}/api/v1/celebrities?limit=1`, { 'x-api-key': enterprise })).body.toString()).data[0];
  const category = JSON.parse((await fetchOnce(`${url}/api/v1/outfits?limit=1`, { 'x-api-key': enterprise })).body.toString()).data[0].category;
  for (let i = 0; i < 100; i++) await fetchOnce(`${url}/api/v1/news?limit=1`, { 'x-api-key': free });
  return ([
    ['list', '/api/v1/celebrities', enterprise],
    ['filter', `/api/v1/outfits?category=${encodeURIComponent(category)}&sort=popular`, enterprise],
    ['detail', `/api/v1/celebrities/${first.slug}`, enterprise],
    ['429', '/api/v1/news', free],
  ] as [string, string, string][]).filter(([name]) => only.includes(name));
}

/** One measured load of `path` on the server `pid` at `url` (after `warmup` seconds of it, if any). */
async function measure(wrk: string, pid: number, url: string, path: string, k: string, warmup: number): Promise<Omit<Row, 'side' | 'scenario'>> {
  const load = (seconds: number) => runLoad(wrk, { url: `${url}${path}`, seconds, connections: Number(flags.connections), headers: { 'x-api-key': k } });
  if (warmup > 0) await load(warmup);
  const tasks0 = tasksUs(pid);
  const r = await load(Number(flags.duration));
  const { us: kinds, runs } = byKind(tasks0, tasksUs(pid));
  let cpu = 0;
  for (const kind of KINDS) (cpu += kinds[kind]), (kinds[kind] /= r.requests);
  if (r.non2xx > 0 && !path.startsWith('/api/v1/news')) log(`  ${r.non2xx} answers not 2xx`);
  return { rps: r.rps, p99: r.p99, cpuUsPerReq: cpu / r.requests, kinds, runsPerReq: runs / r.requests };
}

const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 === 1 ? a[a.length >> 1]! : (a[a.length / 2 - 1]! + a[a.length / 2]!) / 2;
};
const spread = (xs: number[], digits = 1) => `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;

/** --together: every side's server at once, each round every scenario on every side back to back. */
async function together(wrk: string, data: string, work: string, only: readonly string[]): Promise<void> {
  const servers: { child: ChildProcess; url: string; startMs: number; scenarios: [string, string, string][]; rss: number }[] = [];
  const rows: (Row & { round: number; load: number })[] = [];
  try {
    for (const [side, args] of sides.entries()) {
      const state = join(work, `state-${side}`);
      const enterprise = await key(state, 'bench@example.com', 'enterprise');
      const free = await key(state, 'free@example.com', 'free');
      await stop((await serve(data, state, args)).child); // writes the boot cache; the start measured reads it
      const server = await serve(data, state, args);
      if (!flags.unpinned) pinServer(server.child.pid!);
      await settle(server.child.pid!);
      servers.push({ ...server, scenarios: await scenariosOf(server.url, enterprise, free, only), rss: memoryOf(server.child.pid!).rss });
      log(`[${label(side)}] started in ${server.startMs.toFixed(0)} ms, pid ${server.child.pid}`);
    }
    for (let round = 0; round < Number(flags.rounds); round++) {
      for (const [i, scenario] of only.entries()) {
        const order = [...sides.keys()];
        if ((round + i) % 2 === 1) order.reverse(); // neither side always first
        for (const side of order) {
          const server = servers[side]!;
          const [, path, k] = server.scenarios.find(([name]) => name === scenario)!;
          const r = await measure(wrk, server.child.pid!, server.url, path, k, round === 0 ? Number(flags.warmup) : 0);
          const load = os.loadavg()[0]!;
          rows.push({ side, scenario, round, load, ...r });
          server.rss = Math.max(server.rss, memoryOf(server.child.pid!).rss);
          log(`round ${round} [${label(side)}] ${scenario}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(2)} ms, ${r.cpuUsPerReq.toFixed(1)} us CPU/req (${KINDS.map((kd) => `${kd} ${r.kinds[kd].toFixed(1)}`).join(', ')}), ${r.runsPerReq.toFixed(3)} times on a core per request, load ${load.toFixed(1)}`);
        }
      }
    }
  } finally {
    for (const server of servers) await stop(server.child);
  }
  const pick = (side: number, s: string) => rows.filter((r) => r.side === side && r.scenario === s);
  const loads = rows.map((r) => r.load);
  console.log(`Together: every side's server running at once, ${flags.rounds} rounds of ${flags.duration} s per scenario and side (warm-up ${flags.warmup} s in the first); ${flags.unpinned ? 'unpinned' : 'servers on one core, wrk on the other'}; load average ${spread(loads)} (median ${median(loads).toFixed(1)}); CPU in us per request, medians (min-max over the rounds).\n`);
  console.log(`| scenario | side | req/s | p99 (worst) | CPU us/req | ${KINDS.map((k) => KIND_TITLES[k]).join(' | ')} | on a core per request |`);
  console.log(`|---|---|---|---|---|${KINDS.map(() => '---|').join('')}---|`);
  for (const s of only) {
    for (const side of sides.keys()) {
      const a = pick(side, s);
      const cpu = a.map((r) => r.cpuUsPerReq);
      console.log(`| ${s}${redis ? ' (Redis)' : ''} | ${label(side)} | ${median(a.map((r) => r.rps)).toFixed(0)} | ${Math.max(...a.map((r) => r.p99)).toFixed(2)} ms | ${median(cpu).toFixed(1)} (${spread(cpu)}) | ${KINDS.map((k) => median(a.map((r) => r.kinds[k])).toFixed(1)).join(' | ')} | ${median(a.map((r) => r.runsPerReq)).toFixed(3)} |`);
    }
  }
  if (sides.length >= 2) {
    console.log(`\n| scenario | side | CPU ratio to [${label(0)}], median of the rounds' | spread | each round |\n|---|---|---|---|---|`);
    for (const s of only) {
      for (let side = 1; side < sides.length; side++) {
        const ratios = pick(side, s).map((r, i) => r.cpuUsPerReq / pick(0, s)[i]!.cpuUsPerReq);
        console.log(`| ${s} | ${label(side)} | ${median(ratios).toFixed(2)}x | ${spread(ratios, 2)} | ${ratios.map((x) => x.toFixed(2)).join(', ')} |`);
      }
    }
  }
  const [r0, s0] = [servers[0]!.rss, servers[0]!.startMs];
  console.log(`\n| side | RSS after the load (max) | start (boot cache, one each: see bench:start) |\n|---|---|---|`);
  for (const [side, server] of servers.entries()) console.log(`| ${label(side)} | ${server.rss.toFixed(0)} MiB (${(server.rss / r0).toFixed(2)}x) | ${server.startMs.toFixed(0)} ms (${(server.startMs / s0).toFixed(2)}x) |`);
}

async function main(): Promise<void> {
  const wrk = ensureWrk(log);
  const data = await dataDir();
  const work = await mkdtemp(join(os.tmpdir(), 'celebrity-threads-bench-'));
  if (flags.redis) redis = await startRedis();
  const only = flags.only!.split(',');
  const rows: Row[] = [];
  const memory: { side: number; startMs: number; rss: number }[] = [];
  log(`sides: ${sides.map((_, i) => `[${label(i)}]`).join(' against ')}; ${flags.unpinned ? 'unpinned' : 'server pinned to one core, wrk to the other'}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (flags.together) {
    try {
      await together(wrk, data, work, only);
    } finally {
      await redis?.stop();
      await rm(work, { recursive: true, force: true });
    }
    return;
  }
  try {
    const state = join(work, 'state');
    const enterprise = await key(state, 'bench@example.com', 'enterprise');
    const free = await key(state, 'free@example.com', 'free');
    // First start writes the boot cache; the starts measured read it, as every restart does.
    await stop((await serve(data, state, sides[0]!)).child);
    for (let round = 0; round < Number(flags.rounds); round++) {
      for (const [side, args] of sides.entries()) {
        const server = await serve(data, state, args);
        const pid = server.child.pid!;
        // Pinned once started (every thread, taskset -a): the start is timed with every core, as a
        // deployment starts (a second thread loads its modules beside the data on another core),
        // the requests on one core beside wrk's.
        if (!flags.unpinned) pinServer(pid);
        memory.push({ side, startMs: server.startMs, rss: memoryOf(pid).rss });
        // The start's own work goes on after `listening` (the first pages compressed ahead, off the
        // event loop: with threads by the main thread, once for all): measured, it would be counted
        // to the first scenario. Wait until the server is below 5% of a core over a second (at most 60 s).
        for (let i = 0; i < 60; i++) {
          const before = cpuUs(pid);
          await new Promise((r) => setTimeout(r, 1000));
          if (cpuUs(pid) - before < 50_000) break;
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
          await runLoad(wrk, { url: `${server.url}${path}`, seconds: Number(flags.warmup), connections: Number(flags.connections), headers: { 'x-api-key': k } });
          const tasks0 = tasksUs(pid);
          const r = await runLoad(wrk, { url: `${server.url}${path}`, seconds: Number(flags.duration), connections: Number(flags.connections), headers: { 'x-api-key': k } });
          const { us: kinds, runs } = byKind(tasks0, tasksUs(pid));
          let cpu = 0;
          for (const kind of KINDS) (cpu += kinds[kind]), (kinds[kind] /= r.requests);
          rows.push({ side, scenario, rps: r.rps, p99: r.p99, cpuUsPerReq: cpu / r.requests, kinds, runsPerReq: runs / r.requests });
          log(`round ${round} [${label(side)}] ${scenario}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(2)} ms, ${(cpu / r.requests).toFixed(1)} us CPU/req (${KINDS.map((k) => `${k} ${kinds[k].toFixed(1)}`).join(', ')}), ${(runs / r.requests).toFixed(3)} times on a core per request, non-2xx ${r.non2xx}, load ${os.loadavg()[0]!.toFixed(1)}`);
        }
        memory[memory.length - 1]!.rss = Math.max(memory[memory.length - 1]!.rss, memoryOf(pid).rss);
        await stop(server.child);
      }
    }
  } finally {
    await redis?.stop();
    await rm(work, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const pick = (side: number, s: string) => rows.filter((r) => r.side === side && r.scenario === s);
  console.log(`Load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${flags.unpinned ? 'unpinned' : 'server on one core, wrk on the other'}; CPU in us per request.\n`);
  console.log(`| scenario | side | req/s | p99 | CPU us/req | ${KINDS.map((k) => KIND_TITLES[k]).join(' | ')} | on a core per request |`);
  console.log(`|---|---|---|---|---|${KINDS.map(() => '---|').join('')}---|`);
  for (const s of only) {
    for (const side of sides.keys()) {
      const a = pick(side, s);
      console.log(`| ${s}${redis ? ' (Redis)' : ''} | ${label(side)} | ${mean(a.map((r) => r.rps)).toFixed(0)} | ${Math.max(...a.map((r) => r.p99)).toFixed(2)} ms | ${mean(a.map((r) => r.cpuUsPerReq)).toFixed(1)} | ${KINDS.map((k) => mean(a.map((r) => r.kinds[k])).toFixed(1)).join(' | ')} | ${mean(a.map((r) => r.runsPerReq)).toFixed(3)} |`);
    }
  }
  if (sides.length < 2) return;
  const ratio = (side: number, f: (r: Row) => number, s: string) => (mean(pick(side, s).map(f)) / mean(pick(0, s).map(f))).toFixed(2);
  console.log(`\n| scenario | side | CPU ratio to [${label(0)}] | each round |\n|---|---|---|---|`);
  for (const s of only) {
    for (let side = 1; side < sides.length; side++) {
      console.log(`| ${s} | ${label(side)} | ${ratio(side, (r) => r.cpuUsPerReq, s)}x | ${pick(side, s).map((r, i) => (r.cpuUsPerReq / pick(0, s)[i]!.cpuUsPerReq).toFixed(2)).join(', ')} |`);
    }
  }
  const m = (side: number) => memory.filter((x) => x.side === side);
  const [r0, s0] = [mean(m(0).map((x) => x.rss)), mean(m(0).map((x) => x.startMs))];
  console.log(`\n| side | RSS after load | start (boot cache) |\n|---|---|---|`);
  for (const side of sides.keys()) {
    const [r, st] = [mean(m(side).map((x) => x.rss)), mean(m(side).map((x) => x.startMs))];
    console.log(`| ${label(side)} | ${r.toFixed(0)} MiB (${(r / r0).toFixed(2)}x) | ${st.toFixed(0)} ms (${(st / s0).toFixed(2)}x) |`);
  }
}

await main();
