// `redis` is an optional dependency (issue 10): without it installed, the file-only server runs as
// before, and --redis-url fails at once with a message that says what to install.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnListening } from '../../helpers/serve-process.ts';
import { tempState } from '../../helpers/state.ts';

const BIN = fileURLToPath(new URL('../../../bin/celebrity-api', import.meta.url));
const HIDE = ['--import', fileURLToPath(new URL('./fixtures/without-redis.mjs', import.meta.url))];

test('without the redis package: serve on files answers; --redis-url exits 1 naming the package', async () => {
  const state = await tempState(after);
  const server = await spawnListening(process.execPath, [...HIDE, BIN, 'serve', '--insecure-http', '--port', '0', '--state', join(state, 'files'), '--log-level', 'error'], { timeoutMs: 30_000 });
  try {
    const res = await fetch(`${server.url}/api/v1/celebrities`);
    assert.equal(res.status, 401);
  } finally {
    assert.equal(await server.stop(), 0, server.stderr());
  }
  const failed = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...HIDE, BIN, 'serve', '--insecure-http', '--port', '0', '--state', join(state, 'redis'), '--redis-url', 'redis://127.0.0.1:1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.once('close', (code) => resolve({ code, stderr })); // once stderr is all read (it may trail 'exit')
  });
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /optional package "redis".*npm install redis/);
});
