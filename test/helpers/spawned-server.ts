// Runs `celebrity-api serve` (any build of it: bin, installed package, single executable) as a child
// process, waits for its `listening on <url>` line (CONTRACT 6) and stops it with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';

export interface SpawnedServer {
  readonly url: string;
  readonly child: ChildProcess;
  /** SIGTERM, then the exit code once the process has shut down gracefully. */
  stop(): Promise<number | null>;
  /** What the process wrote to stderr so far (the log), for failure messages. */
  stderr(): string;
}

export async function spawnServer(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<SpawnedServer> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no 'listening on' line within ${options.timeoutMs ?? 15_000} ms\nstdout: ${out}\nstderr: ${err}`));
    }, options.timeoutMs ?? 15_000);
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /^listening on (\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });
  return {
    url,
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
