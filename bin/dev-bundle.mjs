// In a checkout, bin/celebrity-api runs the CLI from a bundle of src/ kept fresh here, not from the
// sources through tsx: tsx's loader hooks cost about a second of CPU on every start (0.85 of the
// 1.36 s CPU of a 10k restart), the bundle loads as one module. It stays "edit src, run again":
// every start compares the identity (size, mtime, ctime, inode) of each file the bundle was built
// from, as esbuild's metafile lists them, with what it recorded at the build (about 140 stat calls,
// a few ms), and builds again (0.3-1 s, once) when any differs or is gone. ctime is set by the
// kernel on every write and cannot be put back by a tool (touch, cp -p, tar, git all leave it
// new), so an edited file never passes for the one built; a file written within RACY_MS before a
// build is recorded as unknown, so the next start builds again (an edit in the same clock tick
// after the build would otherwise keep the same times and size). Without esbuild, or when the
// build fails (a syntax error), the caller runs the sources through tsx as before, which reports
// the error as it always did. `npm ci` builds it once (package.json "prepare"); the packed tarball
// has no sources and runs dist/ (bin/celebrity-api), so nothing here ships.
//
// Layout: .dev-bundle/cli.js, worker.js and build-thread.js (src/threads/pool.ts and
// src/data/build-split.ts start them from beside the CLI's bundle), one level under the root as
// dist/ is (src/config.ts finds ../data from it), and inputs.json, the record of what they were
// built from. Files are written to temporary names and renamed, the threads' entries first and
// inputs.json last: a start that runs at the same time as a build sees whole files, and
// inputs.json never vouches for a bundle not yet in place.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, '.dev-bundle');
const MANIFEST = join(OUT, 'inputs.json');
/** Files not in esbuild's metafile that change what it makes: this builder, its config, esbuild itself. */
const ALSO = ['bin/dev-bundle.mjs', 'tsconfig.json', 'node_modules/esbuild/package.json'];
/** A file written this recently before a build may be written again within one timestamp tick. */
const RACY_MS = 100;
/** Whole-second timestamps (ext3, HFS+, some network file systems) need a wider margin. */
const RACY_COARSE_MS = 2000;
/** Where the boot cache's code fingerprint is read from under tsx (src/data/boot-cache-format.ts). */
const PRINT_DIRS = ['src/data', 'src/resources'];

/** A file's identity: a difference in any part means it may have changed. */
function identity(rel) {
  try {
    const s = statSync(join(ROOT, rel), { bigint: true });
    return `${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.ino}`;
  } catch {
    return null;
  }
}

/** The bundle's URL when every file it was built from is as recorded; else null. */
function fresh() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
  for (const [rel, id] of manifest.files) if (id === null || identity(rel) !== id) return null;
  return pathToFileURL(join(OUT, 'cli.js')).href;
}

/**
 * The boot cache's code fingerprint, taken here from the same sources the bundle is built from and
 * compiled into it, so that a bundle, like tsx, invalidates the boot cache only when the code that
 * builds it changes (hashing the bundle would make every edit anywhere a full rebuild of the data).
 */
function codePrint() {
  const hash = createHash('sha256');
  for (const dir of PRINT_DIRS) {
    for (const name of readdirSync(join(ROOT, dir)).filter((n) => n.endsWith('.ts')).sort()) {
      hash.update(`${dir}/${name}\0`).update(readFileSync(join(ROOT, dir, name)));
    }
  }
  return hash.digest('hex');
}

function writeAtomically(path, contents) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/**
 * Node's builtins are loaded with require(), not imported as ES modules: an import runs every
 * getter of the builtin's exports to give it named exports, and some load a lot on first use. On
 * Node 22 and later `node:http`'s load undici (for WebSocket, MessageEvent: 60-80 ms of CPU) and
 * `node:crypto`'s set up WebCrypto (about 45 ms), in the main thread and again in each worker.
 */
export const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (a) => (a.namespace === 'builtin' ? { path: a.path, external: true } : { path: a.path, namespace: 'builtin' }));
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (a) => ({ contents: `module.exports = require(${JSON.stringify(a.path)});`, loader: 'js' }));
  },
};

/** What the builtins' require() calls use (an ES module has no require of its own). */
export const REQUIRE_BANNER = "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);";

/** esbuild's options for the CLI's and the worker's bundles of the checkout at `root`. */
export function bundleOptions(root, outdir, print) {
  return {
    absWorkingDir: root,
    entryPoints: { cli: 'src/cli/main.ts', worker: 'src/threads/worker.ts', 'build-thread': 'src/data/build-thread.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['redis'],
    outdir,
    sourcemap: 'linked',
    sourcesContent: false, // stack traces need lines, not the text: a third of the map to read at each start
    define: { CELEBRITY_API_CODE_PRINT: JSON.stringify(print) },
    plugins: [builtinsByRequire],
    banner: { js: REQUIRE_BANNER },
  };
}

/** Every file under `dir` (relative to the root), recursively. */
function walk(dir) {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`]));
}

/** Recorded as unknown (build again next time) when written so recently that a rewrite could keep its times. */
function settled(id, started) {
  if (id === null) return null;
  const ctimeNs = BigInt(id.split(':')[2]); // the last change of any kind (a write, or times set back)
  const racyMs = ctimeNs % 1_000_000_000n === 0n ? RACY_COARSE_MS : RACY_MS; // whole seconds: a coarse file system
  return Number(ctimeNs / 1_000_000n) < started - racyMs ? id : null;
}

/** Builds the bundle; its URL, or null (no esbuild, a build error, or files changing under it). */
async function build(warn) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    warn('esbuild is not installed: running the sources through tsx');
    return null;
  }
  // Identities before the build: a file that changes while esbuild reads it differs after.
  const started = Date.now();
  const before = new Map([...walk('src'), ...ALSO].map((rel) => [rel, identity(rel)]));
  let result;
  try {
    result = await esbuild.build({ ...bundleOptions(ROOT, OUT, codePrint()), write: false, metafile: true, logLevel: 'silent' });
  } catch {
    return null; // tsx runs the sources and reports the error the way it always has
  }
  const files = [];
  // Inputs of other namespaces (`builtin:node:fs`, from builtinsByRequire) are no files.
  const inputs = Object.keys(result.metafile.inputs).filter((rel) => !rel.startsWith('builtin:'));
  for (const rel of new Set([...inputs, ...ALSO, ...PRINT_DIRS.flatMap((d) => walk(d))])) {
    const id = identity(rel);
    if (before.has(rel) && before.get(rel) !== id) return null; // changed while building: the sources run this time
    files.push([rel, before.has(rel) ? settled(id, started) : null]); // outside src/: not known from before the build
  }
  mkdirSync(OUT, { recursive: true });
  const order = (f) => (/(worker|build-thread)\.js(\.map)?$/.test(f.path) ? 0 : 1);
  for (const f of [...result.outputFiles].sort((a, b) => order(a) - order(b))) writeAtomically(f.path, f.contents);
  for (const out of ['cli.js', 'worker.js', 'build-thread.js']) files.push([`.dev-bundle/${out}`, identity(`.dev-bundle/${out}`)]);
  writeAtomically(MANIFEST, JSON.stringify({ files }));
  return pathToFileURL(join(OUT, 'cli.js')).href;
}

/** The URL of the CLI's bundle, built first when stale; null: run the sources through tsx. */
export async function cliBundle(warn = (line) => process.stderr.write(`celebrity-api: ${line}\n`)) {
  return fresh() ?? (await build(warn));
}

// `npm ci` runs this (package.json "prepare"): build now, so the first start is fast. Never fails
// the install: a start would build, or fall back to tsx, anyway.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = await cliBundle().catch(() => null);
  process.stderr.write(url === null ? 'celebrity-api: no bundle built; bin/celebrity-api will run the sources through tsx\n' : '');
}
