// Inside the single executable: writes the data files it carries (SEA assets) to a private temporary
// directory and points the bundle's module URL there, so `BUNDLED_DATA` (../data) finds them.
// Imported first by src/sea/entry.ts: it must run before src/config.ts computes BUNDLED_DATA.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getAsset, isSea } from 'node:sea';
import { RESOURCE_LIST } from '../resources/index.ts';

/** What src/sea/build.ts defines `import.meta.url` as in the CommonJS bundle a SEA needs. */
declare global {
  var __celebrityApiModuleUrl: string | undefined;
}

if (isSea()) {
  // mkdtemp (mode 0700) rather than a shared, predictable path: nobody else can plant data there.
  const root = mkdtempSync(join(tmpdir(), 'celebrity-api-'));
  mkdirSync(join(root, 'data'));
  for (const def of RESOURCE_LIST) writeFileSync(join(root, 'data', def.file), new Uint8Array(getAsset(def.file)));
  globalThis.__celebrityApiModuleUrl = pathToFileURL(join(root, 'dist', 'cli.cjs')).href;
  process.on('exit', () => rmSync(root, { recursive: true, force: true }));
} else {
  // The CommonJS bundle has no data of its own beside it: it is only a step of the build.
  throw new Error('this bundle runs only inside the single executable that npm run build:exe makes');
}
