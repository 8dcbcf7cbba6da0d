// `npm run build`'s bundles for the package (dist/): the CLI, the library and the worker thread entries
// load Node's builtins with require(), as the checkout's bundle does (bin/dev-bundle.mjs says why);
// the client bundle has no builtins (it runs in browsers too) and gets neither the plugin nor the banner.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { builtinsByRequire, REQUIRE_BANNER } from './dev-bundle.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../dist/types', import.meta.url), { recursive: true, force: true });
const common = { absWorkingDir: root, bundle: true, platform: 'node', format: 'esm', target: 'node20', external: ['redis'], outdir: 'dist', logLevel: 'warning' };
await esbuild.build({ ...common, entryPoints: { cli: 'src/cli/main.ts', index: 'src/index.ts', worker: 'src/threads/worker.ts', 'build-thread': 'src/data/build-thread.ts' }, plugins: [builtinsByRequire], banner: { js: REQUIRE_BANNER } });
await esbuild.build({ ...common, entryPoints: { client: 'src/client/index.ts' } });
