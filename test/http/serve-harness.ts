// Shared by the black-box HTTP tests: temp data and state, an account with a key, a `serve` child
// process read from its `listening on` lines, and a small HTTP client that returns status, headers and body.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openGate } from '../../src/quota/gate.ts';
import type { Plan } from '../../src/quota/plans.ts';
import { fixture, type Fixture } from '../helpers/fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/celebrity-api', import.meta.url));

export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `celebrity-${prefix}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes one JSON file per collection, as `data/` holds them. */
export async function writeData(dir: string, data: Fixture = fixture()): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, records] of Object.entries(data)) await writeFile(join(dir, `${name}.json`), JSON.stringify(records));
}

/** Creates an account in `state` and returns its key (the gate is opened and closed again). */
export async function createKey(state: string, email: string, plan: Plan = 'pro'): Promise<string> {
  const gate = await openGate({ state, scrypt: { N: 1024, r: 8, p: 1 } });
  try {
    return (await gate.accounts.create({ email, plan, password: 'correct horse battery' })).key;
  } finally {
    await gate.close();
  }
}

export interface ServeChild {
  readonly child: ChildProcess;
  readonly urls: string[];
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr holds `text` (a log line), or rejects after `ms`. */
  waitForLog(text: string, ms?: number): Promise<void>;
}

// A failed test must not leave a server behind: whatever is still running dies with the test process.
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `celebrity-api serve` and resolves once `count` `listening on` lines are out. */
export async function spawnServe(args: string[], count = 1, timeoutMs = 15_000): Promise<ServeChild> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const urls = await new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in ${timeoutMs} ms:\n${err}`)), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const found = [...out.matchAll(/^listening on (\S+)$/gm)].map((m) => m[1]!);
      if (found.length >= count) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exited.then(({ code }) => reject(new Error(`serve exited with ${code} before listening:\n${err}`)));
  });
  const waitForLog = (text: string, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const look = () => {
        if (err.includes(text)) return resolve();
        if (Date.now() - started > ms) return reject(new Error(`no log line with ${JSON.stringify(text)} in ${ms} ms:\n${err}`));
        setTimeout(look, 20);
      };
      look();
    });
  return { child, urls, stdout: () => out, stderr: () => err, exited, waitForLog };
}

/** Runs a CLI command to completion and returns its exit code and output. */
export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface RequestOptions {
  readonly headers?: Record<string, string>;
  readonly method?: string;
  readonly agent?: http.Agent | false;
  /** PEM of the CA to pin for https URLs. */
  readonly ca?: string | Buffer;
}

/** One request; `path` is sent exactly as given (no normalisation of `..`). */
export function request(base: string, path: string, o: RequestOptions = {}): Promise<Reply> {
  const url = new URL(base);
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      { host: url.hostname, port: url.port, path, method: o.method ?? 'GET', headers: o.headers ?? {}, agent: o.agent ?? false, ...(o.ca ? { ca: o.ca } : {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${path} in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** Polls `check` every 50 ms until it returns true, or fails after `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 8000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what} not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
