// Child processes of the benchmark: our server through the real CLI (`serve`), the baseline, and
// json-server. Every child is tracked so that the harness ends exactly the processes it started.
import { execFile, execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = `${ROOT}bin/celebrity-api`;

const children = new Set<ChildProcess>();

/** Kills every child still running (SIGTERM, then SIGKILL after a grace period). */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stop(c)));
}

export function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      children.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resident and peak resident memory of a live process, in MiB (Linux /proc; NaN elsewhere). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

/** Runs the CLI to completion; resolves stdout, rejects with stderr. */
export function cli(args: readonly string[], stdin?: string, timeoutMs = 900_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [CLI, ...args], { timeout: timeoutMs, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      err ? reject(new Error(`celebrity-api ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

/**
 * Extra environment for our server's process only (not the baseline's, not wrk's), from
 * BENCH_SERVER_ENV="NAME=value NAME=value": to compare, say, glibc tunables on the server alone.
 */
export const SERVER_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  ...Object.fromEntries((process.env.BENCH_SERVER_ENV ?? '').split(/\s+/).filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
};

/** The core every measured server runs on; wrk runs on LOAD_CORE (wrk.ts), so neither steals from the other. */
export const SERVER_CORE = '0';

/** Pins every thread of `pid` (and those it starts later) to SERVER_CORE; a no-op where taskset is missing. */
export function pinServer(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    execFileSync('taskset', ['-a', '-cp', SERVER_CORE, String(pid)], { stdio: 'ignore' });
  } catch {
    process.stderr.write('[bench] taskset not available: servers and wrk share cores, ratios are noisier\n');
  }
}

export interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  /** Spawn to the `listening on` line, in ms. */
  readonly bootMs: number;
}

/** `serve` on port 0; resolves once it prints its first `listening on` line. */
export function startOurs(data: string, state: string, plain: boolean, timeoutMs: number): Promise<Running> {
  const args = [CLI, 'serve', '--data', data, '--state', state, '--port', '0', '--log-level', 'error'];
  if (plain) args.push('--insecure-http');
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: SERVER_ENV });
  children.add(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      void stop(child);
      reject(new Error(`serve did not listen within ${timeoutMs} ms\n${err}`));
    }, timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        pinServer(child.pid);
        resolve({ child, url: m[1]!.replace('localhost', '127.0.0.1'), bootMs: performance.now() - t0 });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}\n${err.slice(-4000)}`));
    });
  });
}

export interface Baseline {
  readonly child: ChildProcess;
  readonly url: string;
  /** Registers the fixed answer for `path`, with `headers` (flat [name, value, ...]) besides Content-Type and Content-Length. */
  set(path: string, status: number, body: Buffer, headers?: readonly string[]): Promise<void>;
}

export function startBaseline(tls: { cert: string; key: string } | null): Promise<Baseline> {
  const child = fork(fileURLToPath(new URL('./baseline.ts', import.meta.url)), tls ? [tls.cert, tls.key] : [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const pending = new Map<string, () => void>();
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`baseline exited ${code}`)));
    child.on('message', (m: { url?: string; ok?: string }) => {
      if (m.ok !== undefined) pending.get(m.ok)?.();
      if (m.url !== undefined) {
        pinServer(child.pid);
        resolve({
          child,
          url: m.url,
          set: (path, status, body, headers = []) =>
            new Promise<void>((done) => {
              pending.set(path, done);
              child.send({ path, status, body: body.toString('base64'), headers });
            }),
        });
      }
    });
  });
}

/**
 * json-server 0.17, installed with npm into the work directory (once) and run with node directly, so
 * that the process measured and stopped is json-server itself; null when it does not install or start.
 */
export async function startJsonServer(work: string, db: string, timeoutMs: number): Promise<Running | null> {
  const prefix = `${work}/json-server-0.17`;
  const bin = `${prefix}/node_modules/json-server/lib/cli/bin.js`;
  if (!existsSync(bin)) {
    const installed = await new Promise<boolean>((resolve) =>
      execFile('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', 'json-server@0.17'], { timeout: timeoutMs }, (err) => resolve(!err)),
    );
    if (!installed || !existsSync(bin)) return null;
  }
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, '--port', String(port), '--host', '127.0.0.1', '--quiet', db], { stdio: ['ignore', 'ignore', 'ignore'] });
  children.add(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && child.exitCode === null) {
    await new Promise((r) => setTimeout(r, 500));
    const ok = await fetchOnce(`${url}/db`, {}, 'HEAD').then((r) => r.status > 0, () => false);
    if (ok) {
      pinServer(child.pid);
      return { child, url, bootMs: performance.now() - t0 };
    }
  }
  await stop(child);
  return null;
}

/** One request, keep-alive off; self-signed certificates accepted (127.0.0.1 only); the body as sent (never decompressed). */
export function fetchOnce(url: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: Buffer; encoding: string | undefined; rawHeaders: string[] }> {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method, headers, rejectUnauthorized: false, agent: false, timeout: 30_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), encoding: res.headers['content-encoding'], rawHeaders: res.rawHeaders }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
