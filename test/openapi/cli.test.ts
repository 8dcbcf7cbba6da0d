// `celebrity-api openapi`: prints the document, writes it with --out, answers --help, and fails with
// the exit codes of CONTRACT 6; in-process through the dispatcher, plus one run of the real bin.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.ts';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';

async function cli(args: string[], cwd = process.cwd()) {
  let out = '';
  let err = '';
  const io = {
    stdin: Readable.from([]),
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: {},
    cwd,
  };
  const code = await main(['openapi', ...args], io);
  return { code, out, err };
}

test('openapi -> the document on stdout, indented, exit 0', async () => {
  const r = await cli([]);
  assert.equal(r.code, 0);
  assert.deepEqual(JSON.parse(r.out), buildOpenApiDocument());
  assert.match(r.out, /^\{\n {2}"openapi": "3\.1\.0",/);
  assert.equal(r.err, '');
});

test('openapi --out FILE -> the same document in the file, relative to the working directory', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'celebrity-openapi-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const r = await cli(['--out', 'api.json', '--state', 'ignored'], dir);
  assert.equal(r.code, 0);
  assert.match(r.out, /^wrote .*api\.json\n$/);
  assert.deepEqual(JSON.parse(await readFile(join(dir, 'api.json'), 'utf8')), buildOpenApiDocument());
});

test('openapi: --help -> 0; bad flags and arguments -> 2; an unwritable file -> 1', async () => {
  const help = await cli(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage: celebrity-api openapi \[--out FILE\]/);
  for (const args of [['--bogus'], ['extra'], ['--out', '']]) {
    const r = await cli(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, /Run 'celebrity-api openapi --help'/);
  }
  const r = await cli(['--out', '/nonexistent-dir/x/api.json']);
  assert.equal(r.code, 1);
  assert.match(r.err, /cannot write .*ENOENT/);
  assert.match((await cli([])).out, /"x-api-key"/);
});

test('the top-level help lists the openapi command; the real bin prints the document', async () => {
  let out = '';
  const io = { stdin: Readable.from([]), stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: {}, cwd: process.cwd() };
  assert.equal(await main(['--help'], io), 0);
  assert.match(out, /\n {2}openapi {2,}/);
  const bin = fileURLToPath(new URL('../../bin/celebrity-api', import.meta.url));
  const printed = execFileSync(process.execPath, [bin, 'openapi'], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(printed), buildOpenApiDocument());
});
