// The kept rows' probe (issue 20): our server (and optionally a second checkout's), and the bench's
// bare same-bytes server (baseline.ts), each pinned to core 0, wrk on core 1, the kept scenarios of
// `npm run bench` (list, deep page, filter + sort, two filters, detail, 401, 429) in many short
// interleaved slices; CPU µs per request of each server process in each slice (the sum of its
// threads' on-CPU nanoseconds, /proc/PID/task/*/schedstat), then medians per scenario. The bench's
// table takes 2 slices of 3 s a row; this takes --rounds of them, so that a row's share is a median,
// not one slice's draw.
//   node --import tsx test/bench/kept-probe.ts --data DIR [--work DIR] [--against CHECKOUT]
//        [--rounds 8] [--seconds 2] [--connections 50] [--only list,401] [--transport http|https]
// --work: state directories (one per server: accounts, boot cache), kept between runs (a first
// start at 100k takes minutes; later ones read the boot cache). --against: a second server from
// another checkout's bin/celebrity-api on the same data (A = this checkout, B = that one).
// --b-args 'FLAGS': B is this checkout (or --against's) run with these node flags besides --node-args.
// Node: the one running this script runs every server (run it with Node 26 for Node 26).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureWrk, runLoad } from './wrk.ts';
import { CLI, fetchOnce, pinServer, startBaseline, stop, stopAll, type Baseline } from './server.ts';

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string' },
    work: { type: 'string', default: join(os.tmpdir(), 'kept-probe') },
    against: { type: 'string' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    transport: { type: 'string', default: 'http' },
    'node-args': { type: 'string', default: '' },
    'b-args': { type: 'string' },
  },
});
if (flags.data === undefined) throw new Error('--data DIR');
const DATA = resolve(flags.data);
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
const CONNECTIONS = Number(flags.connections);
const HTTPS = flags.transport === 'https';
const log = (line: string) => process.stderr.write(`[probe] ${line}\n`);

/** On-CPU ns of every thread of `pid` (schedstat's first field), summed. */
function cpuNs(pid: number): number {
  let total = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'latin1').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return total;
}

function run(cli: string, args: string[], stdin?: string): Promise<string> {
  return new Promise((ok, fail) => {
    const c = execFile(process.execPath, [cli, ...args], { maxBuffer: 1 << 24, timeout: 900_000 }, (err, out, errOut) => (err ? fail(new Error(errOut || err.message)) : ok(out)));
    if (stdin !== undefined) c.stdin!.end(stdin);
  });
}

interface Keys {
  readonly good: string;
  readonly spent: string;
}

/** A state directory with its two accounts (kept in keys.json), its boot cache copied from `seed` when it has none. */
async function state(cli: string, dir: string, seed: string | null): Promise<Keys> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'probe-keys.json');
  if (seed !== null && !existsSync(join(dir, 'cache')) && existsSync(join(seed, 'cache'))) cpSync(join(seed, 'cache'), join(dir, 'cache'), { recursive: true });
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Keys;
  const password = 'probe-password-not-secret';
  const create = async (email: string, plan: string) => (JSON.parse(await run(cli, ['accounts', 'create', '--state', dir, '--email', email, '--plan', plan, '--password-stdin', '--json'], password)) as { key: string }).key;
  const keys = { good: await create('probe@example.com', 'enterprise'), spent: await create('spent@example.com', 'free') };
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, JSON.stringify(keys));
  return keys;
}

interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: string;
  readonly keys: Keys;
}

function serve(name: string, cli: string, dir: string, keys: Keys): Promise<Server> {
  const extra = name === 'B' ? (flags['b-args'] ?? '').split(' ').filter(Boolean) : [];
  const args = [...flags['node-args']!.split(' ').filter(Boolean), ...extra, cli, 'serve', '--data', DATA, '--state', dir, '--port', '0', '--log-level', 'error'];
  if (!HTTPS) args.push('--insecure-http');
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((ok, fail) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        pinServer(child.pid);
        log(`${name} listening after ${((performance.now() - t0) / 1000).toFixed(1)} s (pid ${child.pid})`);
        ok({ name, child, url: m[1]!.replace('localhost', '127.0.0.1'), keys });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.once('exit', (code) => fail(new Error(`${name} exited ${code}\n${err.slice(-3000)}`)));
  });
}

/** Waits until `pid` uses under 5% of a core over a second (a first start works on after `listening`). */
async function settle(pid: number): Promise<void> {
  let before = cpuNs(pid);
  for (let i = 0; i < 180; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuNs(pid);
    if (now - before < 50e6) return;
    before = now;
  }
}

interface Scenario {
  readonly name: string;
  readonly path: string;
  readonly key: 'good' | 'bad' | 'spent';
  readonly status: number;
}

const BAD_KEY = 'cel_0000000000000000000000000000000000000000';

/** The kept scenarios of run.ts, from the same picks. */
async function scenarios(url: string, key: string): Promise<Scenario[]> {
  const first = JSON.parse((await fetchOnce(`${url}/api/v1/celebrities?limit=50&sort=name_desc`, { 'x-api-key': key })).body.toString());
  const pick = first.data[7] as { nationality: string; occupation: string[]; slug: string };
  const deep = Math.max(2, Math.floor(((first.pagination.total as number) / 20) * 0.75));
  const q = encodeURIComponent;
  return [
    { name: 'list', path: '/api/v1/celebrities', key: 'good', status: 200 },
    { name: 'deep', path: `/api/v1/celebrities?page=${deep}`, key: 'good', status: 200 },
    { name: 'filter', path: `/api/v1/celebrities?nationality=${q(pick.nationality)}&sort=name_asc`, key: 'good', status: 200 },
    { name: 'two-filters', path: `/api/v1/celebrities?occupation=${q(pick.occupation[0]!)}&nationality=${q(pick.nationality)}`, key: 'good', status: 200 },
    { name: 'detail', path: `/api/v1/celebrities/${pick.slug}`, key: 'good', status: 200 },
    { name: '401', path: '/api/v1/celebrities', key: 'bad', status: 401 },
    { name: '429', path: '/api/v1/celebrities', key: 'spent', status: 429 },
  ];
}

function sameHeaders(raw: readonly string[]): string[] {
  const own = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!own.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const wrk = ensureWrk(log);
  const servers: Server[] = [];
  const ours: { name: string; cli: string }[] = [{ name: 'A', cli: CLI }];
  if (flags.against !== undefined || flags['b-args'] !== undefined) ours.push({ name: 'B', cli: flags.against === undefined ? CLI : join(resolve(flags.against), 'bin', 'celebrity-api') });
  try {
    for (const o of ours) {
      const dir = join(flags.work!, `state-${o.name}`);
      const keys = await state(o.cli, dir, o.name === 'A' ? null : join(flags.work!, 'state-A'));
      servers.push(await serve(o.name, o.cli, dir, keys));
    }
    for (const s of servers) await settle(s.child.pid!);
    let baseline: Baseline = await startBaseline(HTTPS ? { cert: join(flags.work!, 'state-A', 'tls', 'cert.pem'), key: join(flags.work!, 'state-A', 'tls', 'key.pem') } : null);
    for (const s of servers) {
      for (let i = 0; i < 1000; i++) if ((await fetchOnce(`${s.url}/api/v1/celebrities?limit=1`, { 'x-api-key': s.keys.spent })).status === 429) break;
    }
    const only = flags.only?.split(',') ?? null;
    const list = (await scenarios(servers[0]!.url, servers[0]!.keys.good)).filter((s) => only === null || only.some((o) => s.name === o));
    const keyOf = (srv: Server, k: Scenario['key']) => (k === 'bad' ? BAD_KEY : srv.keys[k]);
    // Each side's sample must agree on status and body length (a B of other code may differ in bytes: said, not refused).
    for (const [i, sc] of list.entries()) {
      const bodies: number[] = [];
      for (const srv of servers) {
        const r = await fetchOnce(srv.url + sc.path, { 'x-api-key': keyOf(srv, sc.key) });
        if (r.status !== sc.status) throw new Error(`${srv.name} ${sc.name}: ${r.status}`);
        bodies.push(r.body.length);
        if (srv === servers[0]) await baseline.set(`/s/${i}`, r.status, r.body, sameHeaders(r.rawHeaders));
      }
      log(`${sc.name}: ${sc.path} body ${bodies.join(' / ')} B`);
    }
    const sides = [...servers.map((s) => ({ name: s.name, pid: s.child.pid!, url: s.url, srv: s as Server | null })), { name: 'bare', pid: baseline.child.pid!, url: baseline.url, srv: null }];
    const results = new Map<string, number[]>();
    const load = (sc: Scenario, side: (typeof sides)[number], i: number, seconds: number) =>
      runLoad(wrk, { url: side.srv === null ? `${side.url}/s/${i}` : side.url + sc.path, seconds, connections: CONNECTIONS, headers: { 'x-api-key': keyOf(side.srv ?? servers[0]!, sc.key) } });
    for (const [i, sc] of list.entries()) for (const side of sides) await load(sc, side, i, 1);
    const loads: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(os.loadavg()[0]!);
      for (const [i, sc] of list.entries()) {
        // The order of the sides turns each round, so no side always follows the same one.
        for (let k = 0; k < sides.length; k++) {
          const side = sides[(k + round) % sides.length]!;
          const before = cpuNs(side.pid);
          const r = await load(sc, side, i, SECONDS);
          const us = (cpuNs(side.pid) - before) / 1000 / r.requests;
          const bad = sc.status === 200 ? r.non2xx : r.requests - r.non2xx;
          if (bad > 0 || r.errors > 0) log(`${side.name} ${sc.name}: ${bad} unexpected statuses, ${r.errors} socket errors`);
          const key = `${sc.name}\t${side.name}`;
          results.set(key, [...(results.get(key) ?? []), us]);
        }
      }
      log(`round ${round + 1}/${ROUNDS} done, load ${os.loadavg()[0]!.toFixed(2)}`);
    }
    const out: string[] = [];
    out.push(`kept probe: Node ${process.version}, ${flags.transport}, ${DATA}, ${ROUNDS} rounds of ${SECONDS} s, -c${CONNECTIONS}, load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
    out.push('CPU µs per request, median (min-max) over the rounds; share = bare median / ours median, and the median of the per-round shares');
    for (const sc of list) {
      const bare = results.get(`${sc.name}\tbare`)!;
      const cells = [`bare ${median(bare).toFixed(1)} (${Math.min(...bare).toFixed(1)}-${Math.max(...bare).toFixed(1)})`];
      for (const s of servers) {
        const xs = results.get(`${sc.name}\t${s.name}`)!;
        const perRound = xs.map((x, k) => bare[k]! / x);
        cells.push(`${s.name} ${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}) share ${(median(bare) / median(xs)).toFixed(3)} / ${median(perRound).toFixed(3)}`);
      }
      out.push(`${sc.name.padEnd(12)} ${cells.join('  |  ')}`);
    }
    out.push(`raw: ${JSON.stringify(Object.fromEntries([...results].map(([k, v]) => [k, v.map((x) => Number(x.toFixed(2)))])))}`);
    process.stdout.write(out.join('\n') + '\n');
    await stop(baseline.child);
    baseline = undefined as never;
  } finally {
    for (const s of servers) await stop(s.child, 15_000);
    await stopAll();
  }
}

main().catch(async (err: unknown) => {
  await stopAll();
  process.stderr.write(`probe failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
