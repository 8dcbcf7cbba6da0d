// A real redis-server for the Redis store's tests: its own loopback port and temporary directory,
// no persistence unless asked, stopped (and the directory removed) when the test is over.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Sends one command (inline protocol) and resolves with the raw reply. */
  command(...args: string[]): Promise<string>;
  /** SIGKILL: the server is gone at once, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (what was persisted, if anything, comes back). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the socket stays open but nothing answers (a hung server, a partition). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A port that was free a moment ago (the kernel's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServerOptions {
  /** Extra redis-server arguments, e.g. ['--appendonly', 'yes']. Default: no persistence at all. */
  readonly args?: readonly string[];
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'celebrity-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...(options.args ?? [])];
  let child: ChildProcess | null = null;

  async function start(): Promise<void> {
    const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${out}`)), 10_000);
      proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      });
    });
    proc.stdout!.resume();
    child = proc;
  }

  async function kill(): Promise<void> {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    command: (...a) => rawCommand(port, a),
    kill,
    restart: start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One command over a fresh connection, in RESP; resolves with the reply's text as Redis sent it. */
function rawCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.setTimeout(5000, () => socket.destroy(new Error(`redis ${args[0]}: no reply in 5 s`)));
    socket.on('data', (s: string) => {
      reply += s;
      if (reply.endsWith('\r\n')) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(reply));
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}
