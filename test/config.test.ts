// src/config.ts: the values `serve` accepts, table-driven ("input -> expected").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, resolveServeConfig } from '../src/config.ts';

const THREADS: [string, Record<string, string>, Record<string, string>, number | 'auto'][] = [
  ['no flag -> 1', {}, {}, 1],
  ['--threads 4 -> 4', { threads: '4' }, {}, 4],
  ['--threads auto -> auto', { threads: 'auto' }, {}, 'auto'],
  ['CELEBRITY_API_THREADS=3 -> 3', {}, { CELEBRITY_API_THREADS: '3' }, 3],
  ['--threads 2 over CELEBRITY_API_THREADS=auto -> 2', { threads: '2' }, { CELEBRITY_API_THREADS: 'auto' }, 2],
  ['--threads 256 -> 256', { threads: '256' }, {}, 256],
];
for (const [name, flags, env, expected] of THREADS) {
  test(`threads: ${name}`, () => assert.equal(resolveServeConfig(flags, env, '/').threads, expected));
}

for (const bad of ['0', '-1', '1.5', '257', '0x2', 'two', '', ' 2']) {
  test(`threads: --threads ${JSON.stringify(bad)} -> ConfigError naming the rule`, () => {
    assert.throws(() => resolveServeConfig({ threads: bad }, {}, '/'), (err: unknown) => err instanceof ConfigError && err.message === `--threads: must be a whole number from 1 to 256 or auto, got ${JSON.stringify(bad)}`);
  });
}
