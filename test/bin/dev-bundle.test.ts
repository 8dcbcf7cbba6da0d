// bin/celebrity-api in a checkout runs a bundle of src/ (bin/dev-bundle.mjs), and what runs is always
// the sources as they are now: an edit, even one that keeps the file's size and puts its mtime back,
// is built before it runs; a source that does not build never lets the old bundle run. Each case works
// on a copy of the checkout (bin, src, tsconfig, package.json, node_modules linked), never on this one.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnListening } from '../helpers/serve-process.ts';
import { EVENTUALLY_MS } from '../helpers/state.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let copy: string;

before(async () => {
  copy = await mkdtemp(join(tmpdir(), 'celebrity-dev-bundle-'));
  for (const p of ['bin', 'src', 'tsconfig.json', 'package.json']) await cp(join(ROOT, p), join(copy, p), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  // Older than the builder's racy margin, so the first build records every file as settled.
  await new Promise((r) => setTimeout(r, 300));
});
after(() => rm(copy, { recursive: true, force: true }));

function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(copy, 'bin/celebrity-api'), ...args], { env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const MAIN = () => join(copy, 'src/cli/main.ts');
const bundleId = async () => {
  const s = await stat(join(copy, '.dev-bundle/cli.js'), { bigint: true });
  return `${s.ino}:${s.ctimeNs}`;
};

/** Puts `marker` in the first line of the CLI's help text (same length for every marker). */
async function mark(marker: string): Promise<void> {
  const text = await readFile(MAIN(), 'utf8');
  const next = text.replace(/const HELP = `Usage: celebrity-api (?:\[[A-Z0-9-]+\] )?/, `const HELP = \`Usage: celebrity-api [${marker}] `);
  assert.notEqual(next, text);
  await writeFile(MAIN(), next);
}

test('a checkout runs the bundle, built once and then reused while no source changes', async () => {
  const first = await run(['--help']);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^Usage: celebrity-api <command>/);
  const built = await bundleId();
  const again = await run(['--help']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(await bundleId(), built, 'nothing changed: the bundle must not be built again');
});

test('an edited source is what runs, even when its size and mtime are put back as they were', async () => {
  await mark('EDIT-1');
  let out = await run(['--help']);
  assert.match(out.stdout, /^Usage: celebrity-api \[EDIT-1\] <command>/);
  await new Promise((r) => setTimeout(r, 300)); // past the racy margin: this build trusts the recorded identity
  await run(['--help']);
  const was = await stat(MAIN(), { bigint: true });
  const times = join(copy, 'times');
  execFileSync('touch', ['-r', MAIN(), times]); // its times to the nanosecond (fs.utimes takes milliseconds)
  // Same size, and the mtime set back: only the ctime (and with an editor's rename, the inode) tells.
  await mark('EDIT-2');
  execFileSync('touch', ['-r', times, MAIN()]);
  const now = await stat(MAIN(), { bigint: true });
  assert.deepEqual([now.size, now.mtimeNs], [was.size, was.mtimeNs]);
  out = await run(['--help']);
  assert.match(out.stdout, /^Usage: celebrity-api \[EDIT-2\] <command>/);
});

test('a source that does not build never runs the old bundle: the sources run through tsx and fail as they would', async () => {
  await writeFile(MAIN(), (await readFile(MAIN(), 'utf8')) + '\nexport const broken = ;\n');
  const out = await run(['--help']);
  assert.notEqual(out.code, 0);
  assert.doesNotMatch(out.stdout, /Usage: celebrity-api/);
  assert.match(out.stderr, /main\.ts/);
});

test('CELEBRITY_API_TSX=1 runs the sources through tsx, no bundle', async () => {
  await rm(join(copy, 'src/cli/main.ts'));
  await cp(join(ROOT, 'src/cli/main.ts'), MAIN());
  await rm(join(copy, '.dev-bundle'), { recursive: true, force: true });
  const out = await run(['--help'], { ...process.env, CELEBRITY_API_TSX: '1' });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^Usage: celebrity-api <command>/);
  await assert.rejects(stat(join(copy, '.dev-bundle/cli.js')));
});

test('one boot cache for the sources through tsx and for the bundle: each reads what the other wrote', async () => {
  const state = join(copy, 'state');
  const serve = async (env: NodeJS.ProcessEnv, wait: string) => {
    const args = [join(copy, 'bin/celebrity-api'), 'serve', '--insecure-http', '--port', '0', '--state', state, '--data', join(ROOT, 'data')];
    const server = await spawnListening(process.execPath, args, { env });
    try {
      await server.waitForLog(wait, EVENTUALLY_MS);
    } finally {
      await server.stop();
    }
  };
  const tsx = { ...process.env, CELEBRITY_API_TSX: '1' };
  await serve(tsx, 'boot cache written');
  await serve(process.env, 'data loaded from the boot cache');
  await rm(join(state, 'cache'), { recursive: true });
  await serve(process.env, 'boot cache written');
  await serve(tsx, 'data loaded from the boot cache');
});
