// The load generator: wrk (Debian package `wrk`), one thread, N keep-alive connections, bounded time.
// wrk over autocannon because a C client on a 2-core machine leaves the server its core; a Node
// client would compete with the server it measures and report its own limit.
import { execFileSync, spawn } from 'node:child_process';

export interface LoadResult {
  readonly requests: number;
  readonly rps: number;
  /** Latency percentiles in milliseconds. */
  readonly p50: number;
  readonly p99: number;
  /** Responses that were not 2xx/3xx, and socket errors (connect, read, write, timeout). */
  readonly non2xx: number;
  readonly errors: number;
}

function has(cmd: string): boolean {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk --version exits 1 after printing; only a missing binary is ENOENT.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Finds wrk, installing the Debian package when running as root with apt-get; throws with a hint otherwise. */
export function ensureWrk(log: (line: string) => void): string {
  if (has('wrk')) return 'wrk';
  if (process.getuid?.() === 0 && has('apt-get')) {
    log('wrk not found: apt-get install -y wrk');
    try {
      execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'ignore', timeout: 120_000 });
    } catch {
      execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 120_000 });
      execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'ignore', timeout: 120_000 });
    }
    if (has('wrk')) return 'wrk';
  }
  throw new Error('the benchmark needs wrk (https://github.com/wg/wrk): apt-get install wrk, brew install wrk, or build it');
}

/** "1.23ms" / "812.00us" / "1.02s" -> milliseconds. */
export function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

export function parseWrk(out: string): LoadResult {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const pct = (p: string) => toMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1] ?? '');
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: num(/(\d+) requests in/),
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50: pct('50'),
    p99: pct('99'),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/) || 0,
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

export interface LoadOptions {
  readonly url: string;
  readonly seconds: number;
  readonly connections: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A wrk Lua script (-s), e.g. one that varies the path per request. */
  readonly script?: string;
}

/** The core wrk runs on: not the servers' (server.ts SERVER_CORE). */
export const LOAD_CORE = '1';

/** One wrk run; the child is bounded by wrk's own -d plus a kill timer. */
export function runLoad(wrk: string, o: LoadOptions): Promise<LoadResult> {
  const args = ['-t1', `-c${o.connections}`, `-d${Math.max(1, Math.round(o.seconds))}s`, '--timeout', '5s', '--latency'];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`);
  if (o.script !== undefined) args.push('-s', o.script);
  args.push(o.url);
  return new Promise((resolve, reject) => {
    // On the core the servers are not pinned to (server.ts SERVER_CORE).
    const child = spawn('taskset', ['-c', LOAD_CORE, wrk, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), (o.seconds + 15) * 1000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`wrk exited ${code}: ${out}`));
      else resolve(parseWrk(out));
    });
  });
}
