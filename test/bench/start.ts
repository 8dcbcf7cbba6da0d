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
  },
});
if (!flags.data || !flags.state) throw new Error('--data DIR and --state DIR are needed (a state directory holding the boot cache)');

interface Variant { readonly label: string; readonly command: string; readonly state: string; readonly threads: number; readonly wall: number[]; readonly cpu: number[] }
const commands = (flags.variant ?? [`bin=${process.execPath} ${CLI}`]).map((v) => {
  const at = v.indexOf('=');
  const [label, state] = v.slice(0, at).split('@') as [string, string | undefined];
  return { label, state: state ?? flags.state!, command: v.slice(at + 1) };
});
const variants: Variant[] = flags.threads!.split(',').flatMap((n) =>
  commands.map((c) => ({ label: `${c.label} threads ${n}`, command: c.command, state: c.state, threads: Number(n), wall: [], cpu: [] })),
);
const TICKS = 100; // USER_HZ: the unit of /proc/PID/stat times

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime
}

function once(v: Variant): Promise<{ wall: number; cpu: number }> {
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
      child.once('exit', () => resolve({ wall, cpu }));
      child.kill('SIGTERM');
    });
    child.once('exit', (code) => seen || reject(new Error(`${v.label} exited ${code} before listening:\n${err}`)));
  });
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loads = [load()];
for (let r = 0; r < Number(flags.runs); r++) {
  for (const v of variants) {
    const { wall, cpu } = await once(v);
    v.wall.push(wall);
    v.cpu.push(cpu);
    process.stderr.write(`[bench:start] ${v.label}: wall ${wall.toFixed(2)} s, cpu ${cpu.toFixed(2)} s\n`);
  }
  loads.push(load());
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const range = (a: number[]) => `${median(a).toFixed(2)} (${Math.min(...a).toFixed(2)}-${Math.max(...a).toFixed(2)})`;
console.log('| variant | wall s, median (range) | CPU s, median (range) |\n|---|---:|---:|');
for (const v of variants) console.log(`| ${v.label} | ${range(v.wall)} | ${range(v.cpu)} |`);
console.log(`\n${flags.runs} runs each, interleaved; load average (1, 5, 15 min) before and after each round: ${loads.join(' / ')}`);
