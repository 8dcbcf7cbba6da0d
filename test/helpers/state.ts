// Test support shared by the access, quota and CLI tests: temp state dirs, a fake Io, cheap scrypt, a capturing logger.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { after as afterHook } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { Logger } from '../../src/log.ts';

/** 2^10: the same code path as production's 2^15, at a fraction of the time. */
export const FAST_SCRYPT = Object.freeze({ N: 1024, r: 8, p: 1 });

export async function tempState(after: typeof afterHook): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'celebrity-access-'));
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export interface FakeIo extends Io {
  out(): string;
  err(): string;
}

export function fakeIo(stdin = '', cwd = tmpdir()): FakeIo {
  let out = '';
  let err = '';
  return {
    stdin: Readable.from([stdin]),
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: {},
    cwd,
    out: () => out,
    err: () => err,
  };
}

export interface CapturedLog extends Logger {
  readonly lines: string[];
}

/** Keeps every log call as one JSON line, so tests can search them (for keys, for warnings). */
export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const emit = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    lines.push(JSON.stringify({ level, msg, ...fields }));
  };
  return { lines, debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export { EVENTUALLY_MS } from './deadlines.ts';

/**
 * Polls `probe` until it returns true or `ms` pass; resolves to the time it took, or rejects. A probe
 * that throws counts as "not yet" (a connection reset while a failover is under way: Sentinel ends
 * the promoted replica's client connections with CLIENT KILL, and a CI run failed on that reset), and
 * the last error is in the message if the deadline passes.
 */
export async function within(ms: number, probe: () => boolean | Promise<boolean>): Promise<number> {
  const start = Date.now();
  let last: unknown;
  for (;;) {
    try {
      if (await probe()) return Date.now() - start;
    } catch (err) {
      last = err;
    }
    if (Date.now() - start > ms) {
      throw new Error(`condition not met within ${ms} ms${last === undefined ? '' : `; the probe last threw: ${(last as Error).message ?? String(last)}`}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs a command line in-process as `bin/celebrity-api` would, through main's mapping of failures to exit codes. */
export async function runInProcess(argv: string[], stdin = '', cwd?: string): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIo(stdin, cwd);
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}
