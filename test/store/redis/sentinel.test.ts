// The Redis store on a Sentinel-managed primary with one replica and three sentinels (issue 22): the
// store contract, and the primary SIGKILLed under load. One set of processes for the whole file.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { keyDigest } from '../../../src/access/key-format.ts';
import { startService } from '../../../src/service.ts';
import { ACCOUNT_KEYS } from '../../../src/store/redis/keys.ts';
import { openRedisStore } from '../../../src/store/redis/redis-store.ts';
import type { Store } from '../../../src/store/types.ts';
import { fixture } from '../../helpers/fixture.ts';
import { loadClient } from '../../helpers/load.ts';
import { startSentinelSet, type SentinelSet } from '../../helpers/redis.ts';
import { captureLog, EVENTUALLY_MS, FAST_SCRYPT, within } from '../../helpers/state.ts';
import { storeSuite } from '../store.case.ts';
import { operatorCommands } from './cli.case.ts';
import { assertOneLine, describeLogs, failoverUnderLoad } from './failover.case.ts';

const LIST = '/api/v1/celebrities?limit=1';

let set: SentinelSet;
before(async () => {
  set = await startSentinelSet();
});
after(() => set?.stop());

const open = (): Promise<Store> => openRedisStore({ url: set.url, state: 'memory', role: 'server', scrypt: FAST_SCRYPT });

storeSuite('redis sentinel', {
  async open() {
    await (await set.primary()).command('FLUSHALL');
    return open();
  },
  peer: () => open(),
});

test('accounts, keys, usage and state export/import on the Sentinel set', async () => {
  await (await set.primary()).command('FLUSHALL');
  await operatorCommands(set.url);
});

test('a manual failover (the old primary alive, made a replica): serving moves to the new primary by itself', async () => {
  await set.ready();
  const service = await startService({ data: fixture(), state: 'memory', tls: false, redisUrl: set.url });
  const client = loadClient([service.listeners[0]!.url]);
  const store = await openRedisStore({ url: set.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  try {
    const { key } = await store.accounts.create({ email: 'manual@example.com', plan: 'pro', password: 'pw' });
    await within(EVENTUALLY_MS, () => service.gate.store.lookupKey(keyDigest(key)) !== undefined);
    const before = await set.primary();
    const after = set.servers.find((s) => s !== before)!;
    assert.equal((await client.get(0, LIST, key)).status, 200);
    assert.match(await set.sentinels[0]!.command('SENTINEL', 'FAILOVER', set.name), /^\+OK/);
    // The old primary answers READONLY once demoted, and no sentinel event need follow: the server
    // looks at the sentinels again by itself and serves from the new primary.
    const seen: Record<number, number> = {};
    await within(EVENTUALLY_MS, async () => {
      const { status } = await client.get(0, LIST, key);
      seen[status] = (seen[status] ?? 0) + 1;
      const { body } = await client.get(0, '/healthz');
      return status === 200 && body.store.node === `127.0.0.1:${after.port}` && (await set.primary()) === after;
    });
    assert.deepEqual(Object.keys(seen).filter((s) => s !== '200' && s !== '503'), [], `only 200 and 503: ${JSON.stringify(seen)}`);
    const { body } = await client.get(0, '/healthz');
    assert.deepEqual(body, { status: 'ok', store: { mode: 'sentinel', node: `127.0.0.1:${after.port}` } });
  } finally {
    client.close();
    await store.close();
    await service.close(0);
  }
});

test('the primary SIGKILLed under load: 503s in the gap, serving again once the sentinels promote the replica', async (t) => {
  await set.ready(); // the sentinels know the replica and each other: they can agree on a failover
  const logs = [captureLog(), captureLog()];
  const services = await Promise.all(logs.map((log) => startService({ data: fixture(), state: 'memory', tls: false, redisUrl: set.url, log })));
  const client = loadClient(services.map((s) => s.listeners[0]!.url));
  const store = await openRedisStore({ url: set.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  try {
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await store.accounts.create({ email: `s${i}@example.com`, plan: 'free', password: 'pw' })).key);
    await within(EVENTUALLY_MS, () => services.every((s) => keys.every((k) => s.gate.store.lookupKey(keyDigest(k)) !== undefined)));
    const primary = await set.primary();
    const other = set.servers.find((s) => s !== primary)!;
    // The accounts are on the replica before the kill. A write Redis has not replicated yet is lost in
    // a failover (the README's bound); at a load of 11 the replica once lacked all three, the promoted
    // node then counted their quotas from 0 and served beyond them. That loss is not what this test is
    // about (replica.test.ts covers a node that lacks accounts), so it waits for replication here.
    await within(EVENTUALLY_MS, async () => (await other.command('GET', ACCOUNT_KEYS.version)) === (await primary.command('GET', ACCOUNT_KEYS.version)));
    // /healthz names the mode and the primary that answered last (to this loopback client).
    const bodies = async () => (await Promise.all(services.map((_, i) => client.get(i, '/healthz')))).map((r) => JSON.stringify(r.body));
    const says = (port: number) => JSON.stringify({ status: 'ok', store: { mode: 'sentinel', node: `127.0.0.1:${port}` } });
    await within(EVENTUALLY_MS, async () => (await bodies()).every((b) => b === says(primary.port)));
    const logged = logs.map((l) => l.lines.length);
    let replication: string[] = [];
    const figures = await failoverUnderLoad({
      client,
      keys,
      kill: async () => {
        // How far behind the replica is at the kill, for a failure's message (what it lacks is lost).
        replication = await Promise.all([primary, other].map((n) => n.command('INFO', 'replication').catch((err: Error) => err.message)));
        await primary.kill();
      },
      // Promoted: the replica accepts writes (as on the cluster). Clients learn of it later, once the
      // sentinels name it: Sentinel confirms a promotion by INFO, once a second during a failover.
      promoted: async () => void (await within(30_000, async () => (await other.command('ROLE')).includes('master'))),
      announced: async () => void (await within(30_000, async () => (await set.sentinels[0]!.command('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', set.name)).includes(`\r\n${other.port}\r\n`))),
      servers: async () => {
        const holds = await Promise.all([other.command('GET', ACCOUNT_KEYS.version), other.command('HLEN', ACCOUNT_KEYS.records)]).catch((err: Error) => [err.message]);
        return `${describeLogs(logs)}\nat the kill, INFO replication of the primary, then the replica:\n${replication.join('\n')}\nthe promoted node now holds version, accounts: ${JSON.stringify(holds)}`;
      },
    });
    // The figures go to the README (`npm run bench:failover` repeats this); how soon serving resumes
    // is a timing, not asserted here: it waits on Sentinel's own once-a-second steps.
    t.diagnostic(`sentinel failover: ${JSON.stringify(figures)}`);
    // What follows waits on each instance: a failure says what each one logged last.
    try {
      await within(EVENTUALLY_MS, () => logs.every((l) => l.lines.filter((line) => line.includes('Redis failover')).length === 1));
      const health = async () => (await Promise.all(services.map((_, i) => client.get(i, '/healthz')))).map((r) => r.status);
      await within(EVENTUALLY_MS, async () => (await health()).every((h) => h === 200));
      // Then the promoted node, in /healthz as in the log line.
      await within(EVENTUALLY_MS, async () => (await bodies()).every((b) => b === says(other.port)));
      for (const l of logs) assert.match(l.lines.find((line) => line.includes('Redis failover'))!, new RegExp(`"to":"127\\.0\\.0\\.1:${other.port}"`), 'the line names the new primary');
      assertOneLine(logs.map((l, i) => l.lines.slice(logged[i])));
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${describeLogs(logs)}`, { cause: err });
    }
  } finally {
    client.close();
    await store.close();
    await Promise.all(services.map((s) => s.close(0)));
  }
});

test('a server opened while a failover is under way connects once the sentinels name the new primary', async () => {
  // The primary the last test killed comes back as a replica of the new one. Whatever that test left
  // (it may have failed mid-way), the sentinels name a primary that answers, and the server that does
  // not answer is started again.
  const answers = (s: (typeof set.servers)[number]) => s.command('PING').then((r) => r.startsWith('+PONG'), () => false);
  await within(EVENTUALLY_MS, async () => answers(await set.primary()));
  const primary = await set.primary();
  const other = set.servers.find((s) => s !== primary)!;
  if (!(await answers(other))) await other.restart();
  await other.command('REPLICAOF', '127.0.0.1', String(primary.port));
  await set.ready();
  await primary.kill();
  // No usable primary now: the sentinels flag it down, then fail over.
  await within(EVENTUALLY_MS, async () => /flags\r\n\$\d+\r\n[^\r]*s_down/.test(await set.sentinels[0]!.command('SENTINEL', 'MASTER', set.name)));
  const store = await openRedisStore({ url: set.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT, connectTimeoutMs: 30_000 });
  try {
    await store.accounts.create({ email: 'late@example.com', plan: 'free', password: 'pw' });
    assert.equal(store.status().deployment?.node, `127.0.0.1:${other.port}`);
  } finally {
    await store.close();
  }
});

test('one sentinel of three down: the servers keep serving and stay healthy, with no outage logged', async () => {
  // A set of its own: the sentinel killed here is the first the URL names, which node-redis asks
  // first on each of its looks at the sentinels (once a second); each look fails on it, then asks the next.
  const own = await startSentinelSet('lonely');
  const log = captureLog();
  const service = await startService({ data: fixture(), state: 'memory', tls: false, redisUrl: own.url, log });
  const client = loadClient([service.listeners[0]!.url]);
  const store = await openRedisStore({ url: own.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  try {
    const { key } = await store.accounts.create({ email: 'lonely@example.com', plan: 'pro', password: 'pw' });
    await within(EVENTUALLY_MS, () => service.gate.store.lookupKey(keyDigest(key)) !== undefined);
    await own.sentinels[0]!.kill();
    // Before: every failed look marked Redis as not answering: /healthz 503 until the next call
    // answered, and "Redis not answering" 5 s on, with the primary up all along.
    const statuses: number[] = [];
    for (const until = Date.now() + 7000; Date.now() < until; ) {
      statuses.push((await client.get(0, '/healthz')).status, (await client.get(0, LIST, key)).status);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A call that waited past the link's answer timeout is the machine's load, not the sentinel (a
    // train at load 8 logged one "Redis answering again ... no answer within 1000 ms" with every probe
    // 200; at loads 10-20 such a call also answered the probes of that moment 503); the bug this
    // guards against logged the failed looks at the killed sentinel, and its 503s came with no such line.
    const slow = (l: string) => l.includes('"msg":"Redis answering again"') && /"error":"no answer within \d+ ms"/.test(l);
    const timedOut = log.lines.some(slow);
    assert.deepEqual([...new Set(statuses)].filter((s) => s !== 503 || !timedOut), [200], `every probe answered 200 (503 only while a call had timed out): ${JSON.stringify(statuses)}`);
    const said = log.lines.filter((l) => !l.includes('"msg":"request"') && (l.includes('"level":"warn"') || l.includes('"level":"error"')) && !slow(l));
    assert.deepEqual(said, [], 'nothing to warn about');
  } finally {
    client.close();
    await store.close();
    await service.close(0);
    await own.stop();
  }
});
