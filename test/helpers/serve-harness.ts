// Shared by the black-box HTTP tests: temp data and state, an account with a key, and a small HTTP
// client that returns status, headers and body. The `serve` child process is in serve-process.ts.
import http from 'node:http';
import https from 'node:https';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTUALLY_MS } from './deadlines.ts';
import { openFileGate } from './gate.ts';
import type { Plan } from '../../src/access/plans.ts';
import { fixture, type Fixture } from './fixture.ts';

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
  const gate = await openFileGate({ state, scrypt: { N: 1024, r: 8, p: 1 } });
  try {
    return (await gate.accounts.create({ email, plan, password: 'correct horse battery' })).key;
  } finally {
    await gate.close();
  }
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
    req.setTimeout(EVENTUALLY_MS, () => req.destroy(new Error(`no answer to ${path} in ${EVENTUALLY_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Polls `check` every 50 ms until it returns true, or fails after `ms` (a hang guard: see EVENTUALLY_MS). */
export async function eventually(check: () => Promise<boolean> | boolean, ms = EVENTUALLY_MS, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what} not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
