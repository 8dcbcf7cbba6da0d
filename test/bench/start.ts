// `npm run bench:start` (issues 19, 21): the time from spawning `serve` to its `listening on` line, and
// the CPU the process used until then (/proc/PID/stat: every thread, the kernel's time for its reads
// included), for a restart from the boot cache. Variants run interleaved, round after round, so a
// change of the machine's load falls on all of them alike; wall time on a shared machine is mostly
// waiting for a core, so compare CPU. The state directory must already hold the boot cache for the
// data (run the server once on it); each variant may have its own (tsx and a bundle key it apart).
//   npm run bench:start -- --data DIR --state DIR [--runs 5] [--threads 1,2]
//       [--variant 'label=command with args' ...]   (default: this checkout's bin/celebrity-api)
// A variant's command gets `serve --data DIR --state DIR --port 0 --insecure-http --threads N` added;
// `label@STATE=command` gives that variant a state directory of its own (a tsx run and a bundle key
// the boot cache apart, so each needs its own).
//   npm run bench:start -- --data DIR --state S --variant "tsx@S2=env CELEBRITY_API_TSX=1 node bin/celebrity-api" --variant "bin=node bin/celebrity-api"
// --settle: also the CPU until the start's work after `listening on` is done (the first pages
// compressed ahead, off the event loop): until the process uses under 5% of a core over a second
// (at most 30 s), and how long after `listening on` that was (to within that second).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CLI } from './server.ts';

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string' },
    state: { type: 'string' },
    runs: { type: 'string', default: '5' },
    threads: { type: 'string', default: '1' },
    variant: { type: 'string', multiple: true },
    settle: { type: 'boolean', default: false },
  },
});
if (!flags.data || !flags.state) throw new Error('--data DIR and --state DIR are needed (a state directory holding the boot cache)');

interface Variant {
  readonly label: string; readonly command: string; readonly state: string; readonly threads: number;
  readonly wall: number[]; readonly cpu: number[]; readonly settledCpu: number[]; readonly settledAfter: number[];
}
const commands = (flags.variant ?? [`bin=${process.execPath} ${CLI}`]).map((v) => {
  const at = v.indexOf('=');
  const [label, state] = v.slice(0, at).split('@') as [string, string | undefined];
  return { label, state: state ?? flags.state!, command: v.slice(at + 1) };
});
const variants: Variant[] = flags.threads!.split(',').flatMap((n) =>
  commands.map((c) => ({ label: `${c.label} threads ${n}`, command: c.command, state: c.state, threads: Number(n), wall: [], cpu: [], settledCpu: [], settledAfter: [] })),
);
const TICKS = 100; // USER_HZ: the unit of /proc/PID/stat times

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime
}

/** The process's CPU seconds once it uses under 5% of a core over a second (at most 30 s), and the seconds waited. */
async function settled(pid: number): Promise<{ cpu: number; after: number }> {
  const t0 = performance.now();
  let cpu = cpuSeconds(pid);
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuSeconds(pid);
    if (now - cpu < 0.05) return { cpu: now, after: (performance.now() - t0) / 1000 - 1 };
    cpu = now;
  }
  return { cpu, after: (performance.now() - t0) / 1000 };
}

function once(v: Variant): Promise<{ wall: number; cpu: number; settledCpu: number; settledAfter: number }> {
  const serveArgs = `serve --data '${flags.data}' --state '${v.state}' --port 0 --insecure-http --log-level error --threads ${v.threads}`;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('bash', ['-c', `exec ${v.command} ${serveArgs}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let seen = false;
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (seen || !out.includes('listening on')) return;
      seen = true;
      const wall = (performance.now() - t0) / 1000;
      const cpu = cpuSeconds(child.pid!);
      void (flags.settle ? settled(child.pid!) : Promise.resolve({ cpu: NaN, after: NaN })).then((s) => {
        child.once('exit', () => resolve({ wall, cpu, settledCpu: s.cpu, settledAfter: s.after }));
        child.kill('SIGTERM');
      });
    });
    child.once('exit', (code) => seen || reject(new Error(`${v.label} exited ${code} before listening:\n${err}`)));
  });
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loads = [load()];
for (let r = 0; r < Number(flags.runs); r++) {
  for (const v of variants) {
    const { wall, cpu, settledCpu, settledAfter } = await once(v);
    v.wall.push(wall);
    v.cpu.push(cpu);
    v.settledCpu.push(settledCpu);
    v.settledAfter.push(settledAfter);
    const more = flags.settle ? `, settled ${settledAfter.toFixed(0)} s later at cpu ${settledCpu.toFixed(2)} s` : '';
    process.stderr.write(`[bench:start] ${v.label}: wall ${wall.toFixed(2)} s, cpu ${cpu.toFixed(2)} s${more}\n`);
  }
  loads.push(load());
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const range = (a: number[]) => `${median(a).toFixed(2)} (${Math.min(...a).toFixed(2)}-${Math.max(...a).toFixed(2)})`;
if (flags.settle) {
  console.log('| variant | wall s, median (range) | CPU s, median (range) | CPU s once settled | settled, s after listening |\n|---|---:|---:|---:|---:|');
  for (const v of variants) console.log(`| ${v.label} | ${range(v.wall)} | ${range(v.cpu)} | ${range(v.settledCpu)} | ${range(v.settledAfter)} |`);
} else {
  console.log('| variant | wall s, median (range) | CPU s, median (range) |\n|---|---:|---:|');
  for (const v of variants) console.log(`| ${v.label} | ${range(v.wall)} | ${range(v.cpu)} |`);
}
console.log(`\n${flags.runs} runs each, interleaved; load average (1, 5, 15 min) before and after each round: ${loads.join(' / ')}`);
