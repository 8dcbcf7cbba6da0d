// The shape of the tree (STYLE, README "Layout"): rooms stand on floors and a room imports only rooms
// on a lower floor. This walks every relative import under src/ and names each arrow that points up
// or sideways, so a shared word put in the wrong room fails here instead of in a review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The floors, top first: the one table the README's Layout section copies. A room is a folder or a file directly under src/. */
export const FLOORS: readonly (readonly string[])[] = [
  ['sea'],
  ['cli', 'index.ts'],
  ['service.ts'],
  ['threads'],
  ['dashboard'],
  ['http'],
  ['config.ts'],
  ['query', 'store', 'generate'],
  ['data', 'quota', 'client'],
  ['resources', 'access', 'tls', 'errors.ts', 'log.ts', 'random.ts'],
];

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

const floorOf = new Map<string, number>();
FLOORS.forEach((rooms, i) => rooms.forEach((room) => floorOf.set(room, FLOORS.length - 1 - i)));

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

// Static imports and re-exports (`from '...'`), side-effect imports and dynamic import('...').
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

const roomOf = (path: string): string => relative(SRC, path).split(/[\\/]/)[0]!;

/** Every arrow between two rooms of src/ that does not point down, as "from -> to". */
export function upwardImports(): string[] {
  const wrong: string[] = [];
  for (const file of sources(SRC)) {
    const from = roomOf(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1]!);
      const to = roomOf(target);
      if (to === from) continue;
      const a = floorOf.get(from);
      const b = floorOf.get(to);
      if (a === undefined || b === undefined) {
        wrong.push(`${relative(SRC, file)} -> ${relative(SRC, target)} (a room with no floor: add it to FLOORS)`);
      } else if (b >= a) {
        wrong.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
  }
  return wrong;
}

test('every room of src/ has a floor', () => {
  const missing = readdirSync(SRC).filter((room) => !floorOf.has(room));
  assert.deepEqual(missing, []);
});

test('every import between rooms points down', () => {
  assert.deepEqual(upwardImports(), []);
});

test("the README's Layout floors are this table", () => {
  const readme = readFileSync(resolve(SRC, '../README.md'), 'utf8');
  const floors = [...readme.matchAll(/^floor (\d+) +(.*)$/gm)].map((m) => [Number(m[1]), [...m[2]!.matchAll(/src\/([\w.-]+?)\/?(?=\s|$)/g)].map((r) => r[1])] as const);
  assert.deepEqual(floors, FLOORS.map((rooms, i) => [FLOORS.length - 1 - i, [...rooms]]));
});

test('import forms: static, re-export, dynamic, side effect, multi-line -> all found', () => {
  const sample = `import { a } from '../x.ts';\nexport type { B } from './y.ts';\nconst m = await import('../z.ts');\nimport '../side.ts';\nimport {\n  c,\n} from '../w.ts';`;
  assert.deepEqual([...sample.matchAll(IMPORT)].map((m) => m[1]), ['../x.ts', './y.ts', '../z.ts', '../side.ts', '../w.ts']);
});
