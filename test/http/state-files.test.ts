// The state directory as an operator finds it (issue 15, items 5 and 7): owner-only whoever creates
// it, and damaged or missing files named at start rather than accepted in silence.
import assert from 'node:assert/strict';
import { chmod, readFile, rm, stat, truncate, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { COLLECTIONS } from '../../src/resources/types.ts';
import { startService } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { createKey, tempDir, writeData } from '../helpers/serve-harness.ts';
import { runCli, spawnServe } from '../helpers/serve-process.ts';
import { captureLog } from '../helpers/state.ts';

const NOW = Date.parse('2026-11-23T10:00:00.000Z');
const mode = async (path: string) => (await stat(path)).mode & 0o777;
/** The boot cache: one file per collection. */
const CACHE_FILES = COLLECTIONS.map((c) => `cache/${c}.bin`);

/**
 * Data files written within 100 ms of the load are "racy" (boot-cache-format.ts): a same-size rewrite
 * in the same timestamp tick could go unseen, so no boot cache is written for them. serve starts fast
 * enough (the dev bundle) to load within that window: two CI runs found no cache/ after it. These
 * tests check the cache's modes, so their data is older than that.
 */
async function writeSettledData(dir: string): Promise<void> {
  await writeData(dir);
  await sleep(250);
}

describe('state directory', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => (tmp = await tempDir('state-files')));
  after(() => tmp.remove());

  it('serve on a new --state, then accounts create -> every folder 0700, every file 0600', async () => {
    const state = join(tmp.dir, 'fresh', 'state');
    const data = join(tmp.dir, 'data');
    await writeSettledData(data);
    const server = await spawnServe(['--port', '0', '--state', state, '--data', data]);
    assert.equal(await server.stop(), 0);
    await createKey(state, 'mode@example.com', 'free');
    for (const dir of ['', 'cache', 'tls', 'usage']) assert.equal(await mode(join(state, dir)), 0o700, `${dir || 'state'}/ is ${(await mode(join(state, dir))).toString(8)}`);
    for (const file of ['accounts.json', 'tls/key.pem', 'tls/cert.pem', ...CACHE_FILES]) assert.equal(await mode(join(state, file)), 0o600, file);
  });

  it('accounts create on a new --state, then serve and one request -> the same modes, the usage log 0600 too', async () => {
    const state = join(tmp.dir, 'cli-first', 'state');
    const data = join(tmp.dir, 'cli-first', 'data');
    await writeSettledData(data);
    const key = await createKey(state, 'first@example.com', 'free');
    assert.equal(await mode(state), 0o700, 'the command made the folder owner-only');
    const server = await spawnServe(['--insecure-http', '--port', '0', '--state', state, '--data', data]);
    assert.equal((await fetch(`${server.url}/api/v1/news?limit=1`, { headers: { 'x-api-key': key } })).status, 200);
    assert.equal(await server.stop(), 0);
    const month = new Date().toISOString().slice(0, 7);
    for (const dir of ['', 'cache', 'usage']) assert.equal(await mode(join(state, dir)), 0o700, `${dir || 'state'}/`);
    for (const file of ['accounts.json', ...CACHE_FILES, `usage/usage-${month}.jsonl`]) assert.equal(await mode(join(state, file)), 0o600, file);
  });

  it('an accounts.json or a state folder readable by others -> a warning naming it', async () => {
    const state = join(tmp.dir, 'open');
    await createKey(state, 'open@example.com');
    await chmod(join(state, 'accounts.json'), 0o644);
    await chmod(state, 0o755);
    const log = captureLog();
    const service = await startService({ data: fixture(), state, tls: false, port: 0, log, clock: () => NOW });
    await service.close();
    const warnings = log.lines.filter((l) => l.includes('readable by other users'));
    assert.ok(warnings.some((l) => l.includes(join(state, 'accounts.json')) && l.includes('0644')), log.lines.join('\n'));
    assert.ok(warnings.some((l) => l.includes(`"path":"${state}"`) && l.includes('0755')), log.lines.join('\n'));
  });
});

describe('damaged state at start', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => (tmp = await tempDir('damaged')));
  after(() => tmp.remove());

  /** A state with a free account that made 3 requests this month; returns its paths. */
  async function used(name: string) {
    const state = join(tmp.dir, name);
    const key = await createKey(state, 'd@example.com', 'free');
    const service = await startService({ data: fixture(), state, tls: false, port: 0, clock: () => NOW });
    for (let i = 0; i < 3; i++) await (await fetch(`${service.listeners[0]!.url}/api/v1/news`, { headers: { 'x-api-key': key } })).text();
    await service.close();
    return { state, accounts: join(state, 'accounts.json'), usage: join(state, 'usage', 'usage-2026-11.jsonl') };
  }

  async function start(state: string) {
    const log = captureLog();
    const service = await startService({ data: fixture(), state, tls: false, port: 0, log, clock: () => NOW });
    await service.close();
    return log.lines;
  }

  it('an emptied usage log -> a warning naming the file', async () => {
    const s = await used('emptied');
    await truncate(s.usage, 0);
    const lines = await start(s.state);
    assert.ok(lines.some((l) => l.includes('usage log file is empty') && l.includes(s.usage)), lines.join('\n'));
  });

  it('a deleted accounts.json beside a usage log that names accounts -> an error naming accounts.json and the log line', async () => {
    const s = await used('deleted');
    await rm(s.accounts);
    const lines = await start(s.state);
    const line = lines.find((l) => l.includes('accounts.json is missing'));
    assert.ok(line && line.includes('"level":"error"') && line.includes(s.accounts) && line.includes(`${s.usage}:1`), lines.join('\n'));
  });

  it('a line counting 1,000,004 on a free plan -> a warning naming file and line', async () => {
    const s = await used('impossible');
    const id = JSON.parse(await readFile(s.accounts, 'utf8')).accounts[0].id;
    const lines = (await readFile(s.usage, 'utf8')).split('\n').filter(Boolean).length;
    await appendFile(s.usage, JSON.stringify({ a: id, d: '2026-11-23', s: 1_000_004, r: 0 }) + '\n');
    const log = await start(s.state);
    const warning = log.find((l) => l.includes("past its plan's quota"));
    assert.ok(warning && warning.includes(`${s.usage}:${lines + 1}`) && warning.includes('"quota":100'), log.join('\n'));
  });

  it('a key digest that is not hex -> serve refuses to start, naming the file and the field', async () => {
    const s = await used('digest');
    const store = JSON.parse(await readFile(s.accounts, 'utf8'));
    store.accounts[0].key.digest = 'not-a-digest';
    await writeFile(s.accounts, JSON.stringify(store));
    const data = join(tmp.dir, 'data');
    await writeData(data);
    const r = await runCli(['serve', '--insecure-http', '--port', '0', '--state', s.state, '--data', data]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`${s.accounts.replace(/[/.]/g, '\\$&')}: accounts\\[0\\]\\.key\\.digest: not a SHA-256 hex digest`));
  });
});
