// `serve --threads N|auto` (CONTRACT 10) as a user runs it. Which tests run depends on the Node
// running them: where a port cannot be shared between threads (Node before 22.12, or not Linux), the
// refusal; where it can, the threads themselves. `.ci/run` runs the suite on Node 20 and 26, so both
// sets run there, each as ordinary tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../src/index.ts';
import { refusal, sharesPorts } from '../../src/threads/platform.ts';
import { tempDir } from '../helpers/serve-harness.ts';
import { spawnListening } from '../helpers/serve-process.ts';

const BIN = fileURLToPath(new URL('../../bin/celebrity-api', import.meta.url));

function runServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    // 'close', not 'exit': the exit may come before the last of stderr has been read (the line judged).
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

test('serve --threads=0 -> exit 2 naming the rule', async () => {
  const { code, stderr } = await runServe(['--insecure-http', '--port', '0', '--threads=0']);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^celebrity-api serve: --threads: must be a whole number from 1 to 256 or auto, got "0"\n/);
});

if (!sharesPorts()) {
  const line = `celebrity-api serve: ${refusal()}\n`;

  test(`Node ${process.versions.node} on ${process.platform}: serve --threads 2 -> exit 2, one line naming the version and platform needed`, async () => {
    const { code, stderr } = await runServe(['--insecure-http', '--port', '0', '--threads', '2']);
    assert.equal(code, 2);
    assert.equal(stderr.split('\n')[0] + '\n', line);
    assert.match(line, /Node 22\.12 or later .* on Linux: this is Node \d+\.\d+\.\d+ on \w+/);
  });

  test(`Node ${process.versions.node}: CELEBRITY_API_THREADS=2 -> the same refusal`, async () => {
    const { code, stderr } = await runServe(['--insecure-http', '--port', '0'], { CELEBRITY_API_THREADS: '2' });
    assert.equal(code, 2);
    assert.equal(stderr.split('\n')[0] + '\n', line);
  });

  test(`Node ${process.versions.node}: startServer({ threads: 2 }) -> rejects with the same line; { threads: 1 } serves`, async () => {
    await assert.rejects(startServer({ threads: 2 }), { message: refusal() });
    const one = await startServer({ threads: 1 });
    assert.equal((await fetch(`${one.url}/healthz`)).status, 200);
    await one.close();
  });

  test(`Node ${process.versions.node}: serve --threads auto -> serves on 1 thread, and says why when there are more cores`, async () => {
    const tmp = await tempDir('threads-auto');
    const serve = await spawnListening(process.execPath, [BIN, 'serve', '--insecure-http', '--port', '0', '--state', join(tmp.dir, 'state'), '--threads', 'auto']);
    try {
      const res = await fetch(`${serve.url}/healthz`);
      assert.equal(res.status, 200);
      assert.equal(serve.stderr().includes('--threads auto: 1 thread'), availableParallelism() > 1, serve.stderr());
    } finally {
      assert.equal(await serve.stop(), 0);
      await tmp.remove();
    }
  });
}

if (sharesPorts()) {
  test(`Node ${process.versions.node}: serve --threads 2 run from another directory -> both threads start and answer (CONTRACT 6: any directory)`, async () => {
    const tmp = await tempDir('threads-cwd');
    // The working directory has no node_modules: the threads must find their loader from the code, not from it.
    const serve = await spawnListening(process.execPath, [BIN, 'serve', '--insecure-http', '--port', '0', '--state', join(tmp.dir, 'state'), '--threads', '2'], { cwd: tmp.dir });
    try {
      for (let i = 0; i < 4; i++) assert.equal((await fetch(`${serve.url}/healthz`)).status, 200);
      assert.doesNotMatch(serve.stderr(), /thread failed/);
    } finally {
      assert.equal(await serve.stop(), 0);
      await tmp.remove();
    }
  });
}
