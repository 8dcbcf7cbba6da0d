// Every core on Redis (CONTRACT 9 and 10, issue 21), over real sockets with a real redis-server:
// 2 threads keep a free key's quota exact under 1,000 concurrent requests; a thread killed under load
// is replaced and the count stays exact; a key rotated (elsewhere) under load stops on every thread
// and the new one serves; a Sentinel or Cluster primary SIGKILLed under load gives the guarantees of
// the single-thread failover tests (test/store/redis/failover.case.ts). Node 22.12+ on Linux (Node 26
// in `.ci/run`), as test/threads/threads.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { keyDigest } from '../../src/access/key-format.ts';
import { CalendarCache } from '../../src/quota/month.ts';
import { startService } from '../../src/service.ts';
import { MessageChannel } from 'node:worker_threads';
import { openGate } from '../../src/quota/gate.ts';
import { RedisGate, RedisTable } from '../../src/threads/redis-gate.ts';
import { Bell } from '../../src/threads/ring.ts';
import { monthKey } from '../../src/store/redis/keys.ts';
import { openRedisStore } from '../../src/store/redis/redis-store.ts';
import type { Store, StoreStatus } from '../../src/store/types.ts';
import { sharesPorts } from '../../src/threads/platform.ts';
import { fixture } from '../helpers/fixture.ts';
import { startCluster, startRedis, startSentinelSet, type RedisServer } from '../helpers/redis.ts';
import { eventually } from '../helpers/serve-harness.ts';
import { loadClient } from '../helpers/load.ts';
import { captureLog, EVENTUALLY_MS, FAST_SCRYPT, within } from '../helpers/state.ts';
import { failoverUnderLoad } from '../store/redis/failover.case.ts';

/** One GET on its own connection (keep-alive off: the kernel spreads connections over the threads); status 0 when cut. */
function get(base: string, key: string, path = '/api/v1/movies?limit=1'): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(`${base}${path}`, { agent: false, headers: { 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
  });
}

async function burst(base: string, key: string, n: number): Promise<Record<number, number>> {
  const statuses = await Promise.all(Array.from({ length: n }, () => get(base, key)));
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

const RESERVES = 'celebrity_api_store_round_trips_total{op="reserve"}';
/** The value of one series (name with its labels) in a store status, summed. */
const series = (status: StoreStatus, name: string) =>
  status.metrics.filter((m) => `${m.name}${m.labels ? `{${m.labels}}` : ''}` === name).reduce((sum, m) => sum + m.value, 0);

/** Connections the redis-server has open (CLIENT LIST, one line each; this count's own included). */
async function connections(redis: RedisServer): Promise<number> {
  return (await redis.command('CLIENT', 'LIST')).split(' addr=').length - 1;
}

if (sharesPorts()) {
  describe('2 threads on Redis', () => {
    let redis: RedisServer;
    /** A second process's view of the same Redis (as the CLI or another instance): its changes reach the server through Redis. */
    let elsewhere: Store;
    before(async () => {
      redis = await startRedis();
      elsewhere = await openRedisStore({ url: redis.url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
    });
    after(async () => {
      await elsewhere.close();
      await redis.stop();
    });

    const start = (clock?: () => number) => startService({ data: fixture(), state: 'memory', tls: false, redisUrl: redis.url, threads: 2, ...(clock ? { clock } : {}) });
    /** The month's count as Redis holds it. */
    const used = async (email: string, now = Date.now()) => {
      const id = (await elsewhere.accounts.find(email))!.id;
      return (await elsewhere.quota.report(id, new CalendarCache(now).moment(now))).used;
    };

    it('a free key under 1,000 concurrent requests: exactly 100 served, 900 refused; the next month again exactly 100', async () => {
      let now = Date.parse('2026-11-10T12:00:00Z');
      const service = await start(() => now);
      try {
        const { key } = await service.gate.accounts.create({ email: 'free@example.com', plan: 'free', password: 'correct horse battery' });
        const url = service.listeners[0]!.url;
        assert.deepEqual(await burst(url, key, 1000), { 200: 100, 429: 900 });
        assert.equal(await used('free@example.com', now), 100);
        now = Date.parse('2026-12-02T00:00:00Z');
        // A clock function gives no word when it moves: the threads follow it every 250 ms, or now when
        // told (startServer's clock.set does this). Without it, a CI run served 88 (the first requests
        // of the burst still counted in November).
        service.pool!.followClock();
        assert.deepEqual(await burst(url, key, 1000), { 200: 100, 429: 900 });
        assert.equal(await used('free@example.com', now), 100);
        // Both threads took part, each on its own connection: the main thread's reserved nothing, the process's 2,000 times.
        assert.ok(service.pool!.answeredByThread().every((n) => n > 0), String(service.pool!.answeredByThread()));
        assert.equal(series(service.gate.store.status(), RESERVES), 0);
        await eventually(() => series(service.gate.status(), RESERVES) === 2000, EVENTUALLY_MS, 'the threads\' reserves in /metrics');
        // /healthz names the store for the process (to a loopback client). A connection that reported
        // an error with no call after it is down until its probe answers (link.ts): a train on a loaded
        // machine (load 13) saw a 503 here, once, right after the bursts.
        const healthz = () =>
          new Promise<string>((resolve, reject) =>
            http.get(`${url}/healthz`, (res) => {
              let body = '';
              res.setEncoding('utf8').on('data', (d: string) => (body += d));
              res.on('end', () => resolve(`${res.statusCode} ${body}`));
            }).on('error', reject),
          );
        let last = '';
        await eventually(async () => (last = await healthz()).startsWith('200 '), EVENTUALLY_MS, '/healthz 200');
        assert.match(last, new RegExp(`^200 .*"mode":"single".*"node":"127\\.0\\.0\\.1:${redis.port}"`));
      } finally {
        await service.close(0);
      }
    });

    it('a thread killed under load is replaced; the count stays exact (every 200 counted, nothing unsent counted); a free key then gets exactly 100', async () => {
      const service = await start();
      try {
        const { key } = await service.gate.accounts.create({ email: 'crash@example.com', plan: 'enterprise', password: 'correct horse battery' });
        const url = service.listeners[0]!.url;
        let ok = 0;
        let cut = 0;
        let stop = false;
        const loop = async () => {
          while (!stop) {
            const status = await get(url, key, '/api/v1/news?limit=1');
            if (status === 200) ok++;
            // A connection of the thread that died: closed, never answered; or a 503, a Redis answer
            // later than the 1 s deadline on a loaded machine, whose unit may stay counted (fail closed).
            else if (status === 0 || status === 503) cut++;
            else assert.fail(`status ${status}`);
          }
        };
        const loops = Array.from({ length: 20 }, loop);
        try {
          await eventually(() => ok > 200, EVENTUALLY_MS, 'load before the kill');
          await service.pool!.terminate(0);
          await eventually(() => service.pool!.restarts === 1, EVENTUALLY_MS, 'a new thread');
          const afterRestart = ok;
          await eventually(() => ok > afterRestart + 200, EVENTUALLY_MS, 'answers after the restart');
        } finally {
          stop = true;
          await Promise.all(loops);
        }
        const counted = await used('crash@example.com');
        assert.ok(counted >= ok, `counted ${counted} < 200s received ${ok}`);
        assert.ok(counted <= ok + cut, `counted ${counted}: more than received ${ok} + ${cut} cut`);
        const free = await service.gate.accounts.create({ email: 'after-crash@example.com', plan: 'free', password: 'correct horse battery' });
        assert.deepEqual(await burst(url, free.key, 1000), { 200: 100, 429: 900 });
        assert.equal(await used('after-crash@example.com'), 100);
      } finally {
        await service.close(0);
      }
    });

    it("past the first 512 accounts a thread knows (its ledger grows): a thread that dies with the 513th account's request unsettled gives its unit back", async () => {
      // The main thread's table and a thread's gate in this thread, over a real MessageChannel and a
      // real connection each, as shared-quota.test.ts does for the state directory.
      const store = await openRedisStore({ url: redis.url, state: 'memory', role: 'server', scrypt: FAST_SCRYPT });
      const gate = openGate({ store, clock: Date.now });
      const log = captureLog();
      const channel = new MessageChannel();
      const link = RedisTable.for(gate, Date.now, log)!.link(channel.port1, 0, new Bell());
      const thread = await RedisGate.open({ ...link.setup, port: channel.port2 }, Date.now, log);
      try {
        const keys = await Promise.all(Array.from({ length: 513 }, (_, i) => gate.accounts.create({ email: `ledger-${i}@example.com`, plan: 'free', password: 'correct horse battery' }).then((a) => a.key)));
        const admitted = async (key: string) => {
          const a = await thread.admit(key);
          assert.ok(a.ok, 'admitted');
          return a.ticket;
        };
        // Numbers 0-511, each asked of the main thread once and settled; the 513th then is number 512,
        // past the ledger's first 512 accounts.
        await Promise.all(keys.slice(0, 512).map(async (key) => thread.settle(await admitted(key), 200)));
        await admitted(keys[512]!); // reserved, never settled: the thread dies with it
        assert.equal(await used('ledger-512@example.com'), 1, 'reserved');
        link.release(); // as the pool does once the thread has exited
        await eventually(async () => (await used('ledger-512@example.com')) === 0, EVENTUALLY_MS, "the dead thread's unit given back");
        assert.equal(await used('ledger-0@example.com'), 1, 'a 200 it settled stays counted');
      } finally {
        await thread.close();
        channel.port2.close();
        await gate.close();
      }
    });

    it('a key rotated elsewhere under load: the old key stops on every thread and never serves again, the new one serves', async () => {
      const service = await start();
      const email = 'rotate@example.com';
      const password = 'correct horse battery';
      try {
        const { key } = await elsewhere.accounts.create({ email, plan: 'enterprise', password });
        const url = service.listeners[0]!.url;
        await eventually(async () => (await get(url, key)) === 200, EVENTUALLY_MS, 'the key known to the server');
        let rotated = false;
        let stop = false;
        let servedAfter401 = 0;
        let refused = 0;
        const loop = async () => {
          let seen401 = false;
          while (!stop) {
            const status = await get(url, key);
            if (status === 401) {
              seen401 = true;
              refused++;
            } else if (status === 200) {
              if (seen401) servedAfter401++;
            } else if (status !== 503) {
              assert.fail(`status ${status}`); // a 503: Redis later than its deadline on a loaded machine
            }
          }
        };
        const loops = Array.from({ length: 10 }, loop);
        let next: string;
        try {
          await new Promise((r) => setTimeout(r, 200));
          next = (await elsewhere.accounts.rotateKey(email, password)).key;
          rotated = true;
          await eventually(() => refused >= 50, EVENTUALLY_MS, 'the old key refused');
        } finally {
          stop = true;
          await Promise.all(loops);
        }
        assert.ok(rotated);
        assert.equal(servedAfter401, 0, 'the old key served again after a 401');
        // Every thread refuses the old key now, and serves the new one (fresh connections reach both).
        assert.deepEqual(await burst(url, key, 200), { 401: 200 });
        assert.deepEqual(await burst(url, next, 200), { 200: 200 });
        assert.ok(service.pool!.answeredByThread().every((n) => n > 0), String(service.pool!.answeredByThread()));
      } finally {
        await service.close(0);
      }
    });

    it('each thread has its own connection; a thread that dies closes it and its replacement opens one; close() closes them all', async () => {
      // Only the other process's connection and this count's own, once the last test's have closed.
      const before = 2;
      await eventually(async () => (await connections(redis)) === before, EVENTUALLY_MS, `${before} connections before the start`);
      const service = await start();
      try {
        const running = await connections(redis);
        // The main thread's two (commands, and the change channel it follows), and one per thread: a
        // thread follows no channel, so opens no second connection.
        assert.equal(running - before, 4, `${running - before} connections for a server of 2 threads`);
        await service.pool!.terminate(1);
        await eventually(() => service.pool!.restarts === 1, EVENTUALLY_MS, 'a new thread');
        await eventually(async () => (await connections(redis)) === running, EVENTUALLY_MS, `${running} connections again`);
      } finally {
        await service.close(0);
      }
      await eventually(async () => (await connections(redis)) === before, EVENTUALLY_MS, `back to ${before} connections`);
    });

    it('Redis hung: every thread answers 503, /healthz 503, each thread\'s connection down in the series; serving resumes by itself; one line for the threads', async () => {
      const log = captureLog();
      const service = await startService({ data: fixture(), state: 'memory', tls: false, redisUrl: redis.url, threads: 2, log });
      try {
        const { key } = await service.gate.accounts.create({ email: 'hung@example.com', plan: 'enterprise', password: 'correct horse battery' });
        const url = service.listeners[0]!.url;
        assert.deepEqual(await burst(url, key, 50), { 200: 50 });
        redis.pause();
        try {
          await eventually(async () => (await burst(url, key, 20))[503] === 20, EVENTUALLY_MS, 'every request 503');
          await eventually(() => service.health().status === 'unavailable', EVENTUALLY_MS, '/healthz 503');
          await eventually(() => series(service.gate.status(), 'celebrity_api_store_thread_up{thread="0"}') === 0 && series(service.gate.status(), 'celebrity_api_store_thread_up{thread="1"}') === 0, EVENTUALLY_MS, 'both threads down in the series');
          assert.ok(series(service.gate.status(), 'celebrity_api_store_thread_errors_total{thread="0"}') > 0);
        } finally {
          redis.resume();
        }
        await eventually(async () => (await burst(url, key, 20))[200] === 20, EVENTUALLY_MS, 'serving again');
        await eventually(() => series(service.gate.status(), 'celebrity_api_store_thread_up{thread="0"}') === 1 && series(service.gate.status(), 'celebrity_api_store_thread_up{thread="1"}') === 1, EVENTUALLY_MS, 'both threads up in the series');
        await eventually(() => service.health().status === 'ok', EVENTUALLY_MS, '/healthz 200');
        // Both threads lost Redis and have it back: one line for the threads, not one per thread. A
        // connection writes it at its first answer a second after its last failure (link.ts
        // QUIET_MS), so once one thread has, a burst a second later reaches both with that behind
        // them. (The main thread's own connection writes its line only if one of its calls, the
        // account poll, failed while Redis was stopped: not asserted.)
        const back = () => log.lines.map((l) => JSON.parse(l) as { msg: string; thread?: number }).filter((l) => l.msg === 'Redis answering again' && l.thread !== undefined);
        await eventually(async () => (await burst(url, key, 20), back().length > 0), EVENTUALLY_MS, 'a thread\'s line');
        await new Promise((r) => setTimeout(r, 1500));
        assert.deepEqual(await burst(url, key, 50), { 200: 50 });
        assert.equal(back().length, 1, JSON.stringify(back()));
      } finally {
        await service.close(0);
      }
    });
    it('Redis restarted while no request comes: /healthz goes back to 200 by itself, every thread\'s connection up', async () => {
      // A load balancer stops sending traffic to a server whose /healthz says 503: if only a
      // request's answer could clear a thread's lost connection, that server would never get traffic back.
      const service = await start();
      try {
        const { key } = await service.gate.accounts.create({ email: 'idle@example.com', plan: 'enterprise', password: 'correct horse battery' });
        const url = service.listeners[0]!.url;
        assert.deepEqual(await burst(url, key, 50), { 200: 50 });
        await redis.kill();
        try {
          await eventually(() => service.health().status === 'unavailable', EVENTUALLY_MS, '/healthz 503');
        } finally {
          await redis.restart();
        }
        await eventually(() => service.health().status === 'ok', EVENTUALLY_MS, '/healthz 200 with no request');
        const up = (t: number) => series(service.gate.status(), `celebrity_api_store_thread_up{thread="${t}"}`);
        assert.deepEqual([up(0), up(1)], [1, 1]);
      } finally {
        await service.close(0);
      }
    });
  });

  describe('2 threads on a Redis Cluster and on a Sentinel set', () => {
    /** A free key under 300 concurrent requests: exactly 100 served, by the threads' own connections; /healthz names the mode. */
    const exact = async (url: string, mode: string) => {
      const service = await startService({ data: fixture(), state: 'memory', tls: false, redisUrl: url, threads: 2 });
      try {
        const { key } = await service.gate.accounts.create({ email: `free-${mode}@example.com`, plan: 'free', password: 'correct horse battery' });
        assert.deepEqual(await burst(service.listeners[0]!.url, key, 300), { 200: 100, 429: 200 });
        assert.equal(series(service.gate.store.status(), RESERVES), 0);
        await eventually(() => series(service.gate.status(), RESERVES) === 300, EVENTUALLY_MS, 'the threads\' reserves in /metrics');
        assert.equal(service.health().status, 'ok');
        assert.equal(service.health().store?.mode, mode);
        assert.ok(service.pool!.answeredByThread().every((n) => n > 0), String(service.pool!.answeredByThread()));
      } finally {
        await service.close(0);
      }
    };

    it('a cluster of 3 masters: exactly 100 served', async () => {
      const cluster = await startCluster({ masters: 3 });
      try {
        await exact(cluster.url, 'cluster');
      } finally {
        await cluster.stop();
      }
    });

    it('a Sentinel-managed primary: exactly 100 served', async () => {
      const set = await startSentinelSet();
      try {
        await exact(set.url, 'sentinel');
      } finally {
        await set.stop();
      }
    });
  });

  describe('2 threads through a failover: the primary SIGKILLed under load', () => {
    /**
     * One server of 2 threads on `url`, three free accounts at half their quota whose counters live on
     * the primary `victim()` names, then failoverUnderLoad (30 clients on one keep-alive pool, so the
     * kernel spreads their connections over both threads): only 200, 429 and 503 while the primary
     * dies, serving again on every thread, nothing served beyond a quota, and one log line for the
     * threads' failover.
     */
    /** Holds `primary`'s writes (a paused reservation gets no answer, as at the kill) until `replica` has applied all it has. */
    const replicated = async (primary: RedisServer, replica: RedisServer) => {
      await primary.command('CLIENT', 'PAUSE', String(EVENTUALLY_MS), 'WRITE');
      const offset = (info: string, field: string) => Number(new RegExp(`${field}:(\\d+)`).exec(info)?.[1] ?? NaN);
      const at = offset(await primary.command('INFO', 'replication'), 'master_repl_offset');
      await within(EVENTUALLY_MS, async () => offset(await replica.command('INFO', 'replication'), 'slave_repl_offset') === at);
    };
    const failover = async (url: string, mode: string, kill: { victim(id: string): Promise<RedisServer>; replica(victim: RedisServer): RedisServer; chosen?(victim: RedisServer): Promise<void>; promoted(victim: RedisServer): Promise<void>; announced?(victim: RedisServer): Promise<void> }) => {
      const log = captureLog();
      const service = await startService({ data: fixture(), state: 'memory', tls: false, redisUrl: url, threads: 2, log });
      const client = loadClient([service.listeners[0]!.url]);
      const store = await openRedisStore({ url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
      try {
        const month = new CalendarCache(Date.now()).moment(Date.now()).month.key;
        let victim: RedisServer | undefined;
        const keys: string[] = [];
        for (let made = 0; keys.length < 3; made++) {
          assert.ok(made < 200, 'three accounts on one primary');
          const email = `${mode}-${made}@example.com`;
          const { key } = await store.accounts.create({ email, plan: 'free', password: 'pw' });
          const on = await kill.victim(monthKey((await store.accounts.find(email))!.id, month));
          victim ??= on;
          if (on === victim) keys.push(key);
        }
        await kill.chosen?.(victim!);
        await within(EVENTUALLY_MS, () => keys.every((k) => service.gate.store.lookupKey(keyDigest(k)) !== undefined));
        const logged = log.lines.length;
        // A reservation Redis answered and had not yet sent to the replica is lost with the primary and
        // served again (README "Counts lost in a failover": the bound is the replication lag). On a loaded
        // machine that lag is not always 0 (a train at load 8: 4 beyond the quota), and it is Redis's, not
        // what this test is about: the kill comes with nothing unreplicated (replicated()).
        const replica = kill.replica(victim!);
        const figures = await failoverUnderLoad({ client, keys, kill: async () => {
          await replicated(victim!, replica);
          await victim!.kill();
        }, promoted: () => kill.promoted(victim!), ...(kill.announced ? { announced: () => kill.announced!(victim!) } : {}) });
        // The kill found nothing acknowledged and unreplicated (replicated() above): every 200 beyond a
        // quota is one this server served uncounted.
        assert.equal(figures.beyondQuota, 0, `200s beyond the quota: ${JSON.stringify(figures)}`);
        assert.ok(service.pool!.answeredByThread().every((n) => n > 0), String(service.pool!.answeredByThread()));
        // Serving again on every thread: /healthz 200 (every thread's connection and the main
        // thread's), each thread's connection up in the series, and the threads' failover line
        // (once for both threads). A connection writes the line at its first answer a second after
        // its last failure (link.ts QUIET_MS), and a thread calls Redis only for a request: so a few
        // requests on fresh connections (spread over the threads; a used-up key's 429 is a call) each
        // time it looks, and once the line is written, a round 1.5 s later reaches both threads with
        // that behind them: the other thread's same line must not be written.
        const threadLines = () => log.lines.slice(logged).map((l) => JSON.parse(l) as { msg: string; thread?: number }).filter((l) => l.thread !== undefined && l.msg.startsWith('Redis failover'));
        const round = () => Promise.all(keys.map((k) => get(service.listeners[0]!.url, k, '/api/v1/celebrities?limit=1')));
        const up = (t: number) => series(service.gate.status(), `celebrity_api_store_thread_up{thread="${t}"}`) === 1;
        const state = () => JSON.stringify({ health: service.health(), up: [up(0), up(1)], lines: log.lines.slice(logged).filter((l) => !l.includes('"msg":"request"')) });
        try {
          await eventually(async () => (await round(), service.health().status === 'ok' && service.health().store?.mode === mode && up(0) && up(1) && threadLines().length > 0), EVENTUALLY_MS, 'serving again');
        } catch (err) {
          assert.fail(`${(err as Error).message}: ${state()}`);
        }
        await new Promise((r) => setTimeout(r, 1500));
        for (let i = 0; i < 4; i++) await round();
        assert.equal(threadLines().length, 1, JSON.stringify(threadLines()));
        return figures;
      } finally {
        client.close();
        await store.close();
        await service.close(0);
      }
    };

    it('a Sentinel-managed primary: only 200, 429 and 503, serving again, nothing beyond the quota', async (t) => {
      const set = await startSentinelSet();
      try {
        await set.ready();
        const figures = await failover(set.url, 'sentinel', {
          victim: () => set.primary(),
          replica: (victim) => set.servers.find((s) => s !== victim)!,
          promoted: async (victim) => void (await within(30_000, async () => (await set.servers.find((s) => s !== victim)!.command('ROLE')).includes('master'))),
          announced: async (victim) => {
            const other = set.servers.find((s) => s !== victim)!;
            await within(30_000, async () => (await set.sentinels[0]!.command('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', set.name)).includes(`\r\n${other.port}\r\n`));
          },
        });
        t.diagnostic(`sentinel failover, 2 threads: ${JSON.stringify(figures)}`);
      } finally {
        await set.stop();
      }
    });

    it('a Cluster master: only 200, 429 and 503, serving again, nothing beyond the quota', async (t) => {
      const cluster = await startCluster({ masters: 3, replicas: 1 });
      try {
        let replica: RedisServer | undefined;
        const figures = await failover(cluster.url, 'cluster', {
          victim: (key) => cluster.masterOf(key),
          replica: () => replica!,
          chosen: async (victim) => {
            replica = (await Promise.all(cluster.nodes.map(async (n) => ((await n.command('INFO', 'replication').catch(() => '')).includes(`master_port:${victim.port}\r\n`) ? n : null)))).find((n) => n !== null) ?? undefined;
            assert.ok(replica, 'the victim has a replica');
          },
          promoted: async () => void (await within(30_000, async () => (await replica!.command('ROLE')).includes('master'))),
        });
        t.diagnostic(`cluster failover, 2 threads: ${JSON.stringify(figures)}`);
      } finally {
        await cluster.stop();
      }
    });
  });
}
