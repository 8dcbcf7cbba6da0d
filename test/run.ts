// `npm test`: node's own test runner over every test file (or the files named), with a deadline per
// file. A file whose process is stuck (once seen: Node 20's main thread asleep on a futex in a TLS
// test, no socket, no child, SIGUSR1 ignored) would hold the suite until CI's own limit, 90 minutes
// later, with nothing said about where. Node 20's --test-timeout ends such a file, Node 26's does not
// (its timeout is per test, inside the file's process, where a blocked thread cannot run it), so the
// deadline is kept here: past it, the file's native stacks (gdb when installed, the kernel's view
// otherwise) go to stderr, then the file's process and everything it started are killed, and node's
// runner reports that file as failed.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** Minutes a test file may run. The longest file takes about 2 minutes on an idle 2-core machine, 6 at a load of 10. */
const DEADLINE_MINUTES = Number(process.env.CELEBRITY_API_TEST_FILE_DEADLINE_MINUTES ?? 15);
/**
 * How often the deadlines are looked at: every 2 s, or a tenth of a short deadline (run.test.ts sets
 * one of 3.6 s), so that a file is seen within a tenth of its deadline of its start and ended within
 * a tenth past it, not up to two whole polls later.
 */
const POLL_MS = Math.min(2_000, (DEADLINE_MINUTES * 60_000) / 10);

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* testFiles(path);
    else if (entry.name.endsWith('.test.ts')) yield path;
  }
}

const named = process.argv.slice(2);
const files = named.length > 0 ? named : [...testFiles('test')].sort();
const wanted = new Set(files.map((file) => resolve(file)));
const runner = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => runner.kill(signal));

/** Parent of every process, from /proc (Linux); an empty map elsewhere, where no deadline is kept. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parentOf;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command name may hold spaces and parentheses: the fields after its last ')' are fixed.
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return parentOf;
}

function descendants(pid: number, parentOf: Map<number, number>): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    for (const [child, parent] of parentOf) if (parent === next) (found.push(child), queue.push(child));
  }
  return found;
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '?';
  }
}

/** What each thread of a stuck process is doing, as far as this machine can tell. */
function stacks(pid: number): string {
  const gdb = spawnSync('gdb', ['-p', String(pid), '-batch', '-nx', '-ex', 'thread apply all bt 30'], { encoding: 'utf8', timeout: 60_000 });
  if (gdb.status === 0 && gdb.stdout.includes('Thread')) return gdb.stdout;
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return '(the process is gone)';
  }
  return tasks
    .map((tid) => `thread ${tid} ${read(`/proc/${pid}/task/${tid}/comm`)}: waiting in ${read(`/proc/${pid}/task/${tid}/wchan`)}\n${read(`/proc/${pid}/task/${tid}/stack`)}`)
    .join('\n');
}

/** The test file a process of the runner runs, or its command line (read again while it is not one). */
function fileOf(pid: number): string {
  const cmdline = read(`/proc/${pid}/cmdline`).split('\0');
  const file = cmdline.find((arg) => wanted.has(resolve(arg)));
  return file === undefined ? cmdline.join(' ') : relative(process.cwd(), file);
}

const started = new Map<number, { since: number; file: string }>(); // a file's process -> when it was first seen
/** How long each file's process ran, as seen by the polls: printed at the end, the slowest first. */
const took: [ms: number, file: string][] = [];
const watch = setInterval(() => {
  const parentOf = parents();
  const now = Date.now();
  for (const [pid, parent] of parentOf) {
    if (parent !== runner.pid || started.has(pid)) continue;
    started.set(pid, { since: now, file: fileOf(pid) });
  }
  for (const [pid, seen] of started) {
    if (!parentOf.has(pid)) {
      took.push([now - seen.since, seen.file]);
      started.delete(pid);
      continue;
    }
    if (!wanted.has(resolve(seen.file))) seen.file = fileOf(pid); // first seen between its fork and its exec
    if (now - seen.since < DEADLINE_MINUTES * 60_000) continue;
    const file = seen.file;
    process.stderr.write(`\nnpm test: ${file} ran past its deadline of ${DEADLINE_MINUTES} minutes; its threads:\n${stacks(pid)}\nkilling it and what it started\n`);
    for (const child of [pid, ...descendants(pid, parentOf)]) {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    started.delete(pid);
  }
}, POLL_MS);

runner.on('exit', (code, signal) => {
  clearInterval(watch);
  // Where the suite's time goes, for whoever makes it faster: wall time per file, to within a poll.
  for (const { since, file } of started.values()) took.push([Date.now() - since, file]); // ended since the last poll
  const slowest = took.sort((a, b) => b[0] - a[0]).slice(0, 12);
  if (slowest.length > 0) process.stderr.write(`npm test: the slowest files (wall seconds, to within ${POLL_MS / 1000} s):\n${slowest.map(([ms, file]) => `  ${(ms / 1000).toFixed(0).padStart(4)}  ${file}`).join('\n')}\n`);
  process.exitCode = code ?? (signal ? 1 : 0);
});
