// src/threads/platform.ts: which Node versions and platforms share a port between threads, and what
// `--threads N|auto` resolves to on each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_THREADS, refusal, sharesPorts, threadCount } from '../../src/threads/platform.ts';

const PORT_SHARING: [string, NodeJS.Platform, boolean][] = [
  ['20.20.2', 'linux', false],
  ['22.11.0', 'linux', false],
  ['22.12.0', 'linux', true],
  ['23.0.0', 'linux', false],
  ['23.1.0', 'linux', true],
  ['24.0.0', 'linux', true],
  ['26.10.0', 'linux', true],
  ['26.10.0', 'darwin', false],
  ['26.10.0', 'win32', false],
];
for (const [version, platform, expected] of PORT_SHARING) {
  test(`Node ${version} on ${platform} -> ${expected ? 'shares a port' : 'cannot share a port'}`, () => {
    assert.equal(sharesPorts(version, platform), expected);
  });
}

test('the refusal is one line naming the version and platform needed and those running', () => {
  const line = refusal('20.20.2', 'linux');
  assert.equal(line, '--threads above 1 needs Node 22.12 or later (23.1 on the 23 line) on Linux: this is Node 20.20.2 on linux');
  assert.doesNotMatch(line, /\n/);
});

const COUNTS: [string, Parameters<typeof threadCount>, ReturnType<typeof threadCount>][] = [
  ['1, no sharing -> 1', [1, 8, false], { count: 1, fellBack: false }],
  ['1, sharing -> 1', [1, 8, true], { count: 1, fellBack: false }],
  ['4, sharing -> 4', [4, 2, true], { count: 4, fellBack: false }],
  ['auto on 8 cores, sharing -> 8', ['auto', 8, true], { count: 8, fellBack: false }],
  ['auto on 8 cores, no sharing -> 1, fell back', ['auto', 8, false], { count: 1, fellBack: true }],
  ['auto on 1 core, no sharing -> 1, nothing lost', ['auto', 1, false], { count: 1, fellBack: false }],
  [`auto on 1000 cores -> ${MAX_THREADS}`, ['auto', 1000, true], { count: MAX_THREADS, fellBack: false }],
];
for (const [name, args, expected] of COUNTS) {
  test(`threadCount: ${name}`, () => assert.deepEqual(threadCount(...args), expected));
}

test('threadCount: 2 where ports cannot be shared -> the refusal', () => {
  assert.deepEqual(threadCount(2, 8, false), { error: refusal() });
});
