// What bounds a first start (issue 19): one `serve` first start on a fresh state directory, spawn to
// `listening on`, with V8's CPU profiler on every JavaScript thread (`--cpu-prof` writes one profile
// per thread: the main thread and the build thread), the CPU, run-queue wait and sleep of every
// thread of the process from /proc/PID/task/TID/schedstat every 50 ms (V8's helper threads, which
// collect garbage and compile, and libuv's, which read the files, have no profile), and the data
// files the process holds open (/proc/PID/fd), which tells when each collection's file is read.
// Prints, per JavaScript thread, its CPU by phase (each sample goes to the innermost frame of src/,
// read back through the bundle's source map, and that file's phase; the phases' shares of the
// thread's busy samples times its CPU to `listening on`), the CPU of every thread, and the timeline
// of both threads. Never part of `npm test`; a timed run goes under the bench lock (README). The
// README's "What bounds the first start" has its figures.
//   node --import tsx test/bench/boot-profile.ts DATA_DIR [--out DIR] [--interval-us 1000] [--no-profile]
// --no-profile: the same run without the profiler (its CPU and timeline alone: the profiler's own
// cost is 1-3 s of CPU at 100k). The profiles stay in --out (a temporary directory by default).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CLI } from './server.ts';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { out: { type: 'string' }, 'interval-us': { type: 'string', default: '1000' }, 'no-profile': { type: 'boolean', default: false } },
});
const DATA = resolve(positionals[0] ?? '');
if (positionals[0] === undefined) throw new Error('usage: boot-profile.ts DATA_DIR [--out DIR] [--interval-us N] [--no-profile]');
const OUT = flags.out ?? mkdtempSync(join(os.tmpdir(), 'boot-profile-'));
const STATE = mkdtempSync(join(os.tmpdir(), 'boot-profile-state-'));

/** Seconds since the spawn, on the clock V8's profiles use (CLOCK_MONOTONIC, in µs). */
const T0 = process.hrtime.bigint();
const now = (): number => Number(process.hrtime.bigint() - T0) / 1e9;
const T0_US = Number(T0 / 1000n);

const loadavg = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');
const load0 = loadavg();
const profiling = !flags['no-profile'];
const args = [
  ...(profiling ? ['--cpu-prof', `--cpu-prof-dir=${OUT}`, `--cpu-prof-interval=${flags['interval-us']}`] : []),
  CLI, 'serve', '--data', DATA, '--state', STATE, '--port', '0', '--insecure-http', '--log-level', 'info',
];
const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const pid = child.pid!;

/** Per thread: its name, and samples [s since spawn, CPU s, run-queue s]. */
const threads = new Map<number, { readonly comm: string; readonly s: [number, number, number][] }>();
/** Per data file: the intervals it was open, [from, to] s. */
const open = new Map<string, [number, number][]>();
let listenAt = NaN;
let writtenAt = NaN;
let loadLine: Record<string, unknown> = {};
const poll = () => {
  const t = now();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const tid of tids) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number) as [number, number];
      let x = threads.get(Number(tid));
      if (!x) threads.set(Number(tid), (x = { comm: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), s: [] }));
      x.s.push([t, run / 1e9, wait / 1e9]);
    } catch {
      // the thread ended
    }
  }
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (dirname(target) !== DATA || !target.endsWith('.json')) continue;
      const file = basename(target);
      const spans = open.get(file) ?? [];
      const last = spans[spans.length - 1];
      // Open in the last poll too: the same read (a file read again is closed in between).
      if (last && t - last[1] < 0.12) last[1] = t;
      else spans.push([t, t]);
      open.set(file, spans);
    }
  } catch {
    // the process ended
  }
};
const timer = setInterval(poll, 50);
const lines = (stream: NodeJS.ReadableStream, each: (line: string) => void) => {
  let buf = '';
  stream.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      each(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
};
const onLine = (line: string) => {
  if (/listening on/.test(line) && Number.isNaN(listenAt)) {
    poll();
    listenAt = now();
  }
  if (/"data read and indexed"/.test(line)) loadLine = JSON.parse(line) as Record<string, unknown>;
  if (/"boot cache (not )?written"/.test(line) && Number.isNaN(writtenAt)) {
    poll();
    writtenAt = now();
    child.kill('SIGTERM'); // the main thread's profile is written as the process exits
  }
};
lines(child.stdout, onLine);
lines(child.stderr, onLine);
const deadline = setTimeout(() => child.kill('SIGKILL'), 1_800_000);
await new Promise<void>((done) => child.on('exit', () => done()));
clearInterval(timer);
clearTimeout(deadline);
rmSync(STATE, { recursive: true, force: true });
if (Number.isNaN(listenAt)) throw new Error('the server did not start');

// Threads: Node 26 names them (node-V8Worker, libuv-worker, WorkerThread, ...); on Node 20 all are
// "node" but the profiler's, made in the same order: the main thread, V8's delayed-task scheduler,
// its four helpers, the signal thread, then libuv's four as the first file is opened. The build
// thread: of the others, the one that ran most.
const tids = [...threads.keys()].sort((a, b) => a - b);
const comm = (t: number) => threads.get(t)!.comm;
const label = new Map<number, string>();
if (tids.some((t) => /V8Worker|libuv-worker/.test(comm(t)))) {
  const NAMES: [RegExp, string][] = [[/V8Worker/, 'V8 helpers'], [/libuv-worker/, 'libuv'], [/ProfEvnt/, 'profiler'], [/DelayedTask/, 'delayed'], [/SignalInspector/, 'signal']];
  for (const t of tids) label.set(t, t === pid ? 'main' : (NAMES.find(([re]) => re.test(comm(t)))?.[1] ?? 'other'));
} else {
  const ORDER = ['main', 'delayed', 'V8 helpers', 'V8 helpers', 'V8 helpers', 'V8 helpers', 'signal', 'libuv', 'libuv', 'libuv', 'libuv'];
  tids.filter((t) => !/ProfEvnt/.test(comm(t))).forEach((t, i) => label.set(t, ORDER[i] ?? 'other'));
  for (const t of tids) if (!label.has(t)) label.set(t, 'profiler');
}
const at = (t: number, s: number): [number, number, number] => {
  const x = threads.get(t)!.s;
  let r = x[0]!;
  for (const p of x) {
    if (p[0] > s) break;
    r = p;
  }
  return r;
};
const build = tids.filter((t) => label.get(t) === 'other').sort((a, b) => at(b, listenAt)[1] - at(a, listenAt)[1])[0];
if (build !== undefined) label.set(build, 'build');
const main = pid;
/** CPU, run-queue wait and sleep of a thread between two times (sleep: what is left of the wall time). */
const span = (t: number, a: number, b: number) => {
  const p = at(t, a);
  const q = at(t, b);
  const x = threads.get(t)!.s;
  const from = Math.max(a, x[0]![0]);
  const to = Math.min(b, x[x.length - 1]![0]);
  const run = q[1] - p[1];
  const wait = q[2] - p[2];
  return { run, wait, sleep: Math.max(0, to - from - run - wait) };
};

const f2 = (n: number) => n.toFixed(2);
console.log(`${process.version}, ${basename(DATA)}: listening on at ${f2(listenAt)} s, boot cache written at ${f2(writtenAt)} s; load ${load0} -> ${loadavg()}`);
console.log(`the load's line: thread ${JSON.stringify(loadLine.thread ?? null)}, searchedHere ${JSON.stringify(loadLine.searchedHere ?? null)}`);

// Every thread's CPU to `listening on`, by kind.
const kinds = new Map<string, { n: number; cpu: number; wait: number }>();
for (const t of tids) {
  const k = kinds.get(label.get(t)!) ?? { n: 0, cpu: 0, wait: 0 };
  const p = at(t, listenAt);
  k.n++;
  k.cpu += p[1];
  k.wait += p[2];
  kinds.set(label.get(t)!, k);
}
const all = [...kinds.values()].reduce((a, k) => a + k.cpu, 0);
console.log(`\nCPU s to listening on (run-queue wait s): ${[...kinds].filter(([, k]) => k.cpu > 0.005).map(([name, k]) => `${name}${k.n > 1 ? ` x${k.n}` : ''} ${f2(k.cpu)} (${f2(k.wait)})`).join(', ')}; all ${f2(all)} s, ${((all / (2 * listenAt)) * 100).toFixed(0)}% of two cores`);

// Timeline: per JavaScript thread, a mark per 0.5 s (# busy over 3/4 of it, + a quarter or more, w
// waiting for a core over 0.2 s, . asleep), and when each data file was open.
const thread = new Set((loadLine.thread as string[] | undefined)?.map((n) => `${n}.json`) ?? []);
console.log('\ntimeline, 0.5 s a mark (# busy, + partly, w waiting for a core, . asleep):');
for (const [name, t] of [['main', main], ['build', build]] as const) {
  if (t === undefined) continue;
  let strip = '';
  const born = threads.get(t)!.s[0]![0];
  for (let s = 0; s < listenAt; s += 0.5) {
    const v = span(t, s, s + 0.5);
    strip += born > s + 0.5 ? ' ' : v.wait > 0.2 ? 'w' : v.run > 0.375 ? '#' : v.run > 0.125 ? '+' : '.';
  }
  const w = span(t, 0, listenAt);
  console.log(`  ${name.padEnd(5)} |${strip}| CPU ${f2(w.run)}, waiting for a core ${f2(w.wait)}, asleep ${f2(w.sleep)} s`);
  const files = [...open].filter(([file]) => thread.has(file) === (name === 'build'));
  // Spans of one file with no other file of this thread opened in between are one read (a poll that
  // came late splits them); what is opened after `listening on` is the boot cache's digest of the files.
  const reads: { file: string; a: number; b: number }[] = [];
  for (const r of files.flatMap(([file, spans]) => spans.map(([a, b]) => ({ file, a, b }))).filter((r) => r.a < listenAt).sort((x, y) => x.a - y.a)) {
    const last = reads[reads.length - 1];
    if (last?.file === r.file) last.b = r.b;
    else reads.push(r);
  }
  console.log(`        ${reads.map(({ file, a, b }) => `${file.replace('.json', '')} ${a.toFixed(1)}-${b.toFixed(1)}`).join(', ')}`);
}

// Phases: the profiles' samples (wall-weighted: a thread waiting for a core keeps its stack) as
// shares of each thread's busy samples before `listening on`, times that thread's CPU to it.
if (profiling) {
  type Frame = { readonly fn: string; readonly file: string; readonly line: number; readonly src: boolean; readonly evald: boolean };
  type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] };
  type Profile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (url: string): SourceMap | null => {
    if (!maps.has(url)) {
      let m: SourceMap | null = null;
      try {
        if (url.startsWith('file:')) m = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')));
      } catch {
        // no map: not a bundle of src/
      }
      maps.set(url, m);
    }
    return maps.get(url)!;
  };
  /** A phase per file of src/ (by line where a file holds several). */
  const BY_FILE: Record<string, (fn: string, line: number) => string> = {
    'records.ts': (fn) => (fn === 'parseBatch' ? 'decode + JSON.parse' : fn === 'arrayText' ? 'decode + JSON.parse' : 'cut (byte scan, UTF-8 check)'),
    'collect.ts': () => 'collect (_id, slug keys)',
    'string-keys.ts': () => 'collect (_id, slug keys)',
    'validate.ts': () => 'validate',
    'validate-fast.ts': () => 'validate',
    'iso-time.ts': () => 'validate',
    'load.ts': () => 'link (references, copies)',
    'known.ts': () => 'link (references, copies)',
    'types.ts': () => 'link (references, copies)',
    'celebrities.ts': () => 'link (references, copies)',
    'movies.ts': () => 'link (references, copies)',
    'reviews.ts': () => 'link (references, copies)',
    'outfits.ts': () => 'link (references, copies)',
    'news.ts': () => 'link (references, copies)',
    'json-bytes.ts': () => 'serialize answers',
    'shape.ts': () => 'serialize answers',
    'fragments.ts': () => 'serialize answers',
    'detail-layout.ts': () => 'serialize answers',
    'filmography.ts': () => 'serialize answers',
    'record-groups.ts': () => 'group digests (SHA-256)',
    'content-digest.ts': () => 'group digests (SHA-256)',
    'search-index.ts': () => 'search index',
    'search-regroup.ts': () => 'search index',
    'search-text.ts': () => 'search texts (fold)',
    'fold.ts': () => 'search texts (fold)',
    'unit-texts.ts': () => 'search texts (fold)',
    'sort-order.ts': () => 'indexes (orders, filters, slugs)',
    'string-table.ts': () => 'indexes (orders, filters, slugs)',
    'scratch.ts': () => 'indexes (orders, filters, slugs)',
    'indexes.ts': () => 'indexes (orders, filters, slugs)',
    'boot-cache-read.ts': () => 'hand-over between threads',
    'boot-cache-write.ts': () => 'hand-over between threads',
    'build-split.ts': () => 'hand-over between threads',
    'build-thread.ts': () => 'hand-over between threads',
  };
  const phaseOf = (stack: readonly Frame[]): string => {
    const leaf = stack[0]!;
    if (leaf.fn === '(garbage collector)') return 'GC on this thread';
    if (leaf.fn === '(idle)') return 'idle';
    for (const fr of stack) if (fr.fn === 'buildSearchIndex') return 'search index';
    for (const fr of stack) {
      if (fr.evald) return 'validate'; // validate-fast.ts's compiled checks (new Function: no source map)
      if (fr.src) return BY_FILE[fr.file]?.(fr.fn, fr.line) ?? (fr.file.startsWith('data/') ? fr.file : 'other');
    }
    return 'other';
  };
  const cpuTo = new Map<string, number>([['main', at(main, listenAt)[1]]]);
  if (build !== undefined) cpuTo.set('build', at(build, listenAt)[1]);
  const rows = new Map<string, Map<string, number>>();
  // Profiles are named CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile: thread 0 is the main thread.
  for (const file of readdirSync(OUT).filter((f) => f.endsWith('.cpuprofile'))) {
    const who = file.split('.')[4] === '0' ? 'main' : 'build';
    const p = JSON.parse(readFileSync(join(OUT, file), 'utf8')) as Profile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const frames = new Map<number, Frame>();
    const frame = (id: number): Frame => {
      let fr = frames.get(id);
      if (fr) return fr;
      const cf = byId.get(id)!.callFrame;
      const e = (cf.url ? mapOf(cf.url)?.findEntry(cf.lineNumber, cf.columnNumber) : undefined) as { originalSource?: string; originalLine?: number } | undefined;
      const source = e?.originalSource ?? '';
      const src = /\/src\//.test(source);
      fr = {
        fn: cf.functionName,
        file: src ? source.slice(source.lastIndexOf('/src/') + 5).replace(/^data\//, '').replace(/^resources\//, '') : '',
        line: (e?.originalLine ?? -1) + 1,
        src,
        evald: cf.url === '' && cf.lineNumber >= 0 && !/^\(|^RegExp/.test(cf.functionName),
      };
      frames.set(id, fr);
      return fr;
    };
    const phases = new Map<number, string>();
    const share = new Map<string, number>();
    let t = p.startTime;
    for (let i = 0; i < p.samples.length; i++) {
      t += p.timeDeltas[i]!;
      if ((t - T0_US) / 1e6 > listenAt) break;
      const id = p.samples[i]!;
      let ph = phases.get(id);
      if (ph === undefined) {
        const stack: Frame[] = [];
        for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) stack.push(frame(x));
        phases.set(id, (ph = phaseOf(stack)));
      }
      share.set(ph, (share.get(ph) ?? 0) + (p.timeDeltas[i + 1] ?? 0));
    }
    share.delete('idle');
    const busy = [...share.values()].reduce((a, b) => a + b, 0);
    for (const [ph, v] of share) {
      const row = rows.get(ph) ?? new Map<string, number>();
      row.set(who, (row.get(who) ?? 0) + (v / busy) * (cpuTo.get(who) ?? 0));
      rows.set(ph, row);
    }
  }
  console.log('\nCPU s by phase to listening on (main thread, build thread, both):');
  const sum = (r: Map<string, number>) => (r.get('main') ?? 0) + (r.get('build') ?? 0);
  for (const [ph, r] of [...rows].sort((a, b) => sum(b[1]) - sum(a[1]))) {
    console.log(`  ${ph.padEnd(34)} ${f2(r.get('main') ?? 0).padStart(6)} ${f2(r.get('build') ?? 0).padStart(6)} ${f2(sum(r)).padStart(6)}`);
  }
  console.log(`profiles in ${OUT}`);
} else if (flags.out === undefined) {
  rmSync(OUT, { recursive: true, force: true });
}
