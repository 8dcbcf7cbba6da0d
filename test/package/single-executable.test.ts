// The single executable (`npm run build:exe`): built here (postject is a dev dependency, so the tools
// are always present), copied alone into an empty directory, and run as a server would be.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fetchChecked } from '../helpers/openapi-validator.ts';
import { spawnListening } from '../helpers/serve-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let tmp: string;
let alone: string; // a directory with nothing but the executable: no node_modules, no data, no sources
let exe: string;
let env: NodeJS.ProcessEnv; // a private TMPDIR: where the executable unpacks its data, checked empty after

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'celebrity-sea-'));
  const build = join(tmp, 'build');
  execFileSync('npm', ['run', 'build:exe', '--silent', '--', '--out', build], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  alone = join(tmp, 'alone');
  await mkdir(alone);
  exe = join(alone, 'celebrity-api');
  await copyFile(join(build, 'celebrity-api'), exe);
  await rm(build, { recursive: true, force: true });
  env = { PATH: '/usr/bin:/bin', TMPDIR: join(tmp, 'tmp') };
  await mkdir(env.TMPDIR!);
});
after(() => rm(tmp, { recursive: true, force: true }));

const run = (args: string[], input?: string) =>
  execFileSync(exe, args, { cwd: alone, encoding: 'utf8', env, ...(input === undefined ? {} : { input }) });

test('the executable carries the data: data check and openapi work with nothing beside it', async () => {
  assert.deepEqual(await readdir(alone), ['celebrity-api']);
  const celebrities = JSON.parse(await readFile(join(ROOT, 'data/celebrities.json'), 'utf8')).length;
  assert.match(run(['data', 'check']), new RegExp(`: valid \\(${celebrities} celebrities, `));
  assert.equal(JSON.parse(run(['openapi'])).openapi, '3.1.0');
});

test('the executable serves: 401 without a key, 200 with a key made by its own accounts command', async () => {
  const state = join(alone, 'state');
  const server = await spawnListening(exe, ['serve', '--insecure-http', '--port', '0', '--state', state], { cwd: alone, env });
  try {
    assert.match((await readdir(env.TMPDIR!)).join(), /^celebrity-api-\w+$/); // its unpacked data, while it runs
    const refused = await fetchChecked(`${server.url}/api/v1/movies`);
    assert.equal(refused.status, 401);
    // Accounts made beside a running server take effect (CONTRACT 4: within 2 s); poll up to 30 s, so
    // that only a change that never arrives fails on a busy machine.
    const { key } = JSON.parse(run(['accounts', 'create', '--email', 'ops@example.com', '--plan', 'free', '--password-stdin', '--json', '--state', state], 'pw-for-ops\n'));
    let res = await fetchChecked(`${server.url}/api/v1/movies?limit=1`, { headers: { 'x-api-key': key } });
    for (let i = 0; i < 300 && res.status === 401; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await fetchChecked(`${server.url}/api/v1/movies?limit=1`, { headers: { 'x-api-key': key } });
    }
    assert.equal(res.status, 200);
    assert.equal(res.body.pagination.total, JSON.parse(await readFile(join(ROOT, 'data/movies.json'), 'utf8')).length);
  } finally {
    assert.equal(await server.stop(), 0, server.stderr());
  }
  // The data it unpacked for its run is removed when it exits.
  assert.deepEqual(await readdir(env.TMPDIR!), []);
});
