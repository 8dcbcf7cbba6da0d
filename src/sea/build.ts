// `npm run build:exe [-- --out DIR]`: builds the single executable (Node SEA): one CommonJS bundle of
// the CLI, the data files as SEA assets, injected with postject into a copy of this node binary.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { RESOURCE_LIST } from '../resources/index.ts';

/** The fuse string Node looks for to know a blob was injected (Node's SEA documentation). */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function buildExecutable(outDir: string): Promise<string> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const main = join(outDir, 'main.cjs');
  // Node 20 runs only CommonJS as a SEA's main script. import.meta.url (src/config.ts) has no CJS
  // equivalent: it becomes a global that src/sea/unpack-data.ts sets before config.ts runs.
  await build({
    entryPoints: [join(ROOT, 'src/sea/entry.ts')],
    outfile: main,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // The Redis store's client is an optional package, loaded only with --redis-url: the executable
    // stays file-only and says so when asked for Redis.
    external: ['redis'],
    define: { 'import.meta.url': 'globalThis.__celebrityApiModuleUrl' },
    logLevel: 'warning',
  });
  const dataDir = join(ROOT, 'data');
  // Exactly the files the executable unpacks (src/sea/unpack-data.ts): one per collection.
  const assets = Object.fromEntries(RESOURCE_LIST.map((def) => [def.file, join(dataDir, def.file)]));
  const blob = join(outDir, 'sea-prep.blob');
  const config = join(outDir, 'sea-config.json');
  writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, assets }, null, 2));
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' });
  const exe = join(outDir, process.platform === 'win32' ? 'celebrity-api.exe' : 'celebrity-api');
  copyFileSync(process.execPath, exe);
  chmodSync(exe, 0o755);
  const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js');
  const macho = process.platform === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : [];
  execFileSync(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE, ...macho], { stdio: 'inherit' });
  if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', exe], { stdio: 'inherit' });
  return exe;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const exe = await buildExecutable(resolve(values.out ?? join(ROOT, 'dist/sea')));
  process.stdout.write(`built ${exe}\n`);
}
