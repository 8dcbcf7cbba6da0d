// The README's TypeScript examples run as written: each fenced `ts` block of the sections below is
// saved as a test file, with the package name pointed at the sources, and run with node --test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECTIONS = ['### Make it fail on purpose', '### Call it from TypeScript'];

/** The first ```ts block after `heading`. */
function example(readme: string, heading: string): string {
  const at = readme.indexOf(`\n${heading}\n`);
  assert.ok(at !== -1, `README has no '${heading}'`);
  const open = readme.indexOf('```ts\n', at);
  return readme.slice(open + 6, readme.indexOf('```\n', open + 6));
}

let dir: string;
let readme: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'celebrity-readme-'));
  readme = await readFile(join(ROOT, 'README.md'), 'utf8');
});
after(() => rm(dir, { recursive: true, force: true }));

for (const heading of SECTIONS) {
  test(`README '${heading.replace(/^#+ /, '')}' runs as written`, async () => {
    const code = example(readme, heading)
      .replaceAll("from 'celebrity-api/client'", `from '${join(ROOT, 'src/client/index.ts')}'`)
      .replaceAll("from 'celebrity-api'", `from '${join(ROOT, 'src/index.ts')}'`);
    const file = join(dir, `${heading.replace(/\W+/g, '-')}.test.ts`);
    await writeFile(file, code);
    try {
      await promisify(execFile)(process.execPath, ['--import', 'tsx', '--test', file], { cwd: ROOT, timeout: 60_000 });
    } catch (err) {
      assert.fail(`the example failed:\n${(err as { stdout?: string }).stdout}`);
    }
  });
}
