// `npm start` stops when it is told to (issue 23): SIGTERM to npm (what Docker and process managers
// send) and a terminal's Ctrl-C (SIGINT to the whole process group) both drain the server, exit it
// and free its port; nothing is left running.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const NPM = process.env.npm_execpath ?? spawnSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();

/** True while any process of the group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for the group to end, at most past the server's 10 s drain deadline; false when it did not. */
async function groupEnds(pgid: number): Promise<boolean> {
  for (let i = 0; i < 300 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 50));
  return !groupAlive(pgid);
}

function refused(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), done(false)));
    socket.once('error', () => done(true));
  });
}

/** `npm start` in a process group of its own, as a shell runs it; resolves once it listens. */
async function npmStart(t: { after(fn: () => Promise<void> | void): void }) {
  const state = await mkdtemp(join(tmpdir(), 'npm-start-'));
  const child = spawn(process.execPath, [NPM, 'start', '--', '--port', '0', '--state', state, '--log-format', 'text'], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pgid = child.pid!;
  t.after(async () => {
    if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    await rm(state, { recursive: true, force: true });
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  // 'exit' can come before the last output is read (the server flushes its batched log as it exits,
  // and npm exits right after it): 'close' is once every process holding the pipes has ended and
  // the test has read them. Bounded, so that a process left behind fails on groupEnds, not a hang.
  const closed = new Promise<void>((done) => child.once('close', () => done()));
  const output = () => Promise.race([closed, new Promise((r) => setTimeout(r, 5_000))]);
  const port = await new Promise<number>((done, fail) => {
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /^listening on https:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
      if (m) done(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`npm start exited ${code} before listening:\n${out}\n${err}`)));
  });
  return { pgid, port, exited, output, log: () => out + err };
}

describe('npm start', () => {
  it('SIGTERM to npm -> the server drains and stops, npm exits, the port is free, no process left', async (t) => {
    const s = await npmStart(t);
    assert.equal(await refused(s.port), false);
    process.kill(s.pgid, 'SIGTERM');
    await s.exited;
    // The server is npm's child: npm returns once it has exited (within its 10 s drain deadline).
    assert.ok(await groupEnds(s.pgid), `a process of npm start is still running:\n${s.log()}`);
    await s.output();
    assert.match(s.log(), /stopped.*SIGTERM|SIGTERM.*stopped/);
    assert.equal(await refused(s.port), true);
  });

  it('Ctrl-C (SIGINT to the process group) -> one drain, not an abrupt exit; the port is free, no process left', async (t) => {
    const s = await npmStart(t);
    process.kill(-s.pgid, 'SIGINT');
    await s.exited;
    assert.ok(await groupEnds(s.pgid), `a process of npm start is still running:\n${s.log()}`);
    await s.output();
    assert.match(s.log(), /stopped.*SIGINT|SIGINT.*stopped/);
    assert.equal(await refused(s.port), true);
  });
});
