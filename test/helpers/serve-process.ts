// Runs `celebrity-api serve` (any build of it: bin, installed package, single executable) as a child
// process, waits for its `listening on <url>` lines (CONTRACT 6) and stops it with SIGTERM; and runs
// one-shot CLI commands of the repository's bin.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EVENTUALLY_MS, STARTED_MS } from './deadlines.ts';

const BIN = fileURLToPath(new URL('../../bin/celebrity-api', import.meta.url));

export interface ListeningProcess {
  readonly child: ChildProcess;
  /** Every `listening on` URL printed by the time the wait was over, in order. */
  readonly urls: string[];
  /** The first of `urls`. */
  readonly url: string;
  stdout(): string;
  /** What the process wrote to stderr so far (the log), for failure messages. */
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr holds `text` (a log line), or rejects after `ms`. */
  waitForLog(text: string, ms?: number): Promise<void>;
  /** SIGTERM, then the exit code once the process has shut down gracefully. */
  stop(): Promise<number | null>;
}

export interface SpawnListeningOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** How many `listening on` lines to wait for. */
  readonly count?: number;
  /** Only fails a start that hangs (STARTED_MS): a busy 2-core machine took over 15 s to boot a server (issue 25), a starved one 132 s. */
  readonly timeoutMs?: number;
}

// A failed test must not leave a server behind: whatever is still running dies with the test process.
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `command args` and resolves once `count` `listening on <url>` lines are out on its stdout. */
export async function spawnListening(command: string, args: readonly string[], options: SpawnListeningOptions = {}): Promise<ListeningProcess> {
  const { count = 1, timeoutMs = STARTED_MS } = options;
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  let err = '';
  // 'close', not 'exit': 'exit' can come before the last of the output is read, and a test that reads
  // the log once the process has ended must see all of it (its "stopped" line, say).
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const urls = await new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ${count} 'listening on' line(s) within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`));
    }, timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const found = [...out.matchAll(/^listening on (\S+)$/gm)].map((m) => m[1]!);
      if (found.length >= count) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code ?? signal} before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });
  const waitForLog = (text: string, ms = EVENTUALLY_MS) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const look = () => {
        if (err.includes(text)) return resolve();
        if (Date.now() - started > ms) return reject(new Error(`no log line with ${JSON.stringify(text)} in ${ms} ms:\n${err}`));
        setTimeout(look, 20);
      };
      look();
    });
  return {
    child,
    urls,
    url: urls[0]!,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return (await exited).code;
    },
  };
}

/** Starts the repository's `celebrity-api serve` and resolves once `count` `listening on` lines are out. */
export function spawnServe(args: string[], count = 1, timeoutMs = STARTED_MS): Promise<ListeningProcess> {
  return spawnListening(process.execPath, [BIN, 'serve', ...args], { count, timeoutMs });
}

/** Runs a CLI command to completion and returns its exit code and output. */
export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.once('close', (code) => resolve({ code, stdout, stderr })); // once the output is all read
  });
}
