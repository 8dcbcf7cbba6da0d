// src/data/gc.ts growYoungAtOnce, set by a server's first request (src/http/server.ts): from then on V8
// grows a young generation to its largest in one step, where by doubling a server's young generation
// stayed at 1-2 MB under load (a scavenge every ~250 requests). Each case runs in a process of its own
// (test/helpers/fixtures/young-growth.ts): V8's flags are the process's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const FIXTURE = fileURLToPath(new URL('../helpers/fixtures/young-growth.ts', import.meta.url));

async function sizes(mode: 'request' | 'none'): Promise<{ before: number; sizes: number[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', FIXTURE, mode], { timeout: 60_000 });
  return JSON.parse(stdout) as { before: number; sizes: number[] };
}

test('a server that answered a request -> request-like garbage grows the young generation to its largest within 10,000 steps; one that answered none -> by doubling, still small', async () => {
  const [asked, idle] = await Promise.all([sizes('request'), sizes('none')]);
  // Both start small (releaseMemory; on a busy machine Node 20's shrinkYoung may leave 4-8 MB): from
  // there, doubling after as many bytes survived as its size cannot reach 24 MB in these steps.
  assert.ok(asked.before <= 8 && idle.before <= 8, `both start small: ${JSON.stringify({ asked, idle })}`);
  assert.ok(asked.sizes.at(-1)! >= 24, `after a request: ${JSON.stringify(asked)}`);
  assert.ok(idle.sizes.at(-1)! <= 16, `without one: ${JSON.stringify(idle)}`);
});
