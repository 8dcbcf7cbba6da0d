// .ci/prerequisites, the step `npm test` runs first (issue 23): with redis-server, redis-sentinel or
// chromium missing it installs them as root with apt-get, else it stops at once with one line naming
// the command. Run with a PATH of stand-ins, so nothing is installed or hidden on this machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const STEP = join(ROOT, '.ci/prerequisites');
const BASH = '/bin/bash';
const ALL = ['redis-server', 'redis-sentinel', 'chromium'];

interface Machine {
  readonly bin: string;
  /** What the stand-in apt-get was asked, one call a line. */
  readonly aptCalls: () => string[];
}

/**
 * A PATH with only these stand-ins: the named commands, `id` answering `uid`, and when `apt` an
 * apt-get that records its arguments and "installs" what it is given by adding stand-ins.
 */
function machine(t: { after(fn: () => void): void }, present: readonly string[], uid: number, apt: boolean): Machine {
  const bin = mkdtempSync(join(tmpdir(), 'prereq-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!${BASH}\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  for (const name of present) script(name, 'exit 0');
  script('id', `echo ${uid}`);
  const calls = join(bin, 'apt-calls');
  if (apt) {
    script('apt-get', `echo "$*" >> '${calls}'
[ "$1" = install ] || exit 0
for a in "$@"; do case "$a" in -*|install) ;; *) printf '#!${BASH}\\nexit 0\\n' > '${bin}'/"$a"; /bin/chmod +x '${bin}'/"$a";; esac; done`);
  }
  return { bin, aptCalls: () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []) };
}

function run(m: Machine, command = [STEP]) {
  const r = spawnSync(BASH, command, { env: { PATH: m.bin, HOME: m.bin }, encoding: 'utf8', cwd: ROOT });
  return { status: r.status, stderr: r.stderr.trim(), stdout: r.stdout.trim() };
}

test('all three present -> exit 0, nothing said, apt-get not called', (t) => {
  const m = machine(t, ALL, 0, true);
  assert.deepEqual(run(m), { status: 0, stderr: '', stdout: '' });
  assert.deepEqual(m.aptCalls(), []);
});

test('none present, root, apt-get -> installs the three, then exit 0', (t) => {
  const m = machine(t, [], 0, true);
  const r = run(m);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(m.aptCalls(), ['install -y --no-install-recommends redis-server redis-sentinel chromium']);
  for (const name of ALL) assert.ok(existsSync(join(m.bin, name)), name);
});

test('only chromium missing, root, apt-get -> installs chromium alone', (t) => {
  const m = machine(t, ['redis-server', 'redis-sentinel'], 0, true);
  assert.equal(run(m).status, 0);
  assert.deepEqual(m.aptCalls(), ['install -y --no-install-recommends chromium']);
});

test('none present, not root -> exit 1 at once, one line naming the sudo command; apt-get not called', (t) => {
  const m = machine(t, [], 1000, true);
  const r = run(m);
  assert.equal(r.status, 1);
  assert.deepEqual(r.stderr.split('\n'), ['npm test needs redis-server redis-sentinel chromium: run `sudo apt-get install -y --no-install-recommends redis-server redis-sentinel chromium` (Debian, Ubuntu), then npm test again']);
  assert.deepEqual(m.aptCalls(), []);
});

test('redis-server missing, root, no apt-get -> exit 1, one line naming the command', (t) => {
  const m = machine(t, ['redis-sentinel', 'chromium'], 0, false);
  const r = run(m);
  assert.equal(r.status, 1);
  assert.deepEqual(r.stderr.split('\n'), ['npm test needs redis-server: run `apt-get install -y --no-install-recommends redis-server` (Debian, Ubuntu), then npm test again']);
});

test('npm test runs the step before the suite: both binaries hidden -> the one line, the suite never starts', (t) => {
  const m = machine(t, ['redis-sentinel'], 1000, false);
  // `node` on this PATH is a stand-in that says so: npm itself runs on the real one.
  writeFileSync(join(m.bin, 'node'), `#!${BASH}\necho SUITE STARTED\n`);
  chmodSync(join(m.bin, 'node'), 0o755);
  for (const name of ['sh', 'bash']) symlinkSync(`/bin/${name}`, join(m.bin, name));
  const npm = process.env.npm_execpath ?? spawnSync(BASH, ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  const env = { PATH: m.bin, HOME: m.bin, npm_config_update_notifier: 'false' }; // no registry look-up from a test
  const r = spawnSync(process.execPath, [npm, 'test', '--silent'], { env, encoding: 'utf8', cwd: ROOT });
  assert.notEqual(r.status, 0);
  assert.doesNotMatch(r.stdout, /SUITE STARTED/);
  assert.match(r.stderr, /^npm test needs redis-server chromium: run `sudo apt-get install -y --no-install-recommends redis-server chromium`/m);
});
