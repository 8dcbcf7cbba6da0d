// `serve`'s V8 flags (src/cli/v8-flags.ts): set only where the running V8 has them, so that no Node
// prints "unrecognized flag" and every Node that has the flag gets it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasExternalMemoryFlag } from '../../src/cli/v8-flags.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FLAG = '--external-memory-accounted-in-global-limit';

test('V8 version -> whether it has the flag (13.6 and later)', () => {
  const cases: [string, boolean][] = [
    ['11.3.244.8-node.33', false], // Node 20
    ['12.4.254.21-node.33', false], // Node 22
    ['13.5.212.10', false],
    ['13.6.233.10-node.28', true], // Node 24
    ['13.10.1', true],
    ['14.6.202.33-node.31', true], // Node 26
    ['15.0.1', true],
    ['', false],
  ];
  for (const [version, has] of cases) assert.equal(hasExternalMemoryFlag(version), has, version);
});

test("the running Node: the gate says what its V8 lists (node --v8-options)", () => {
  const listed = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout.includes(`${FLAG} `);
  assert.equal(hasExternalMemoryFlag(process.versions.v8), listed, `V8 ${process.versions.v8}`);
});

test('the running Node: setting serve\'s flags prints nothing (no "unrecognized flag")', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "const m = await import('./src/cli/v8-flags.ts'); m.setServeFlags(); console.log('set');"], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'set');
  assert.equal(r.stderr, '');
});
