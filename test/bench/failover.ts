// `npm run bench:failover` (issue 22): failovers under load, repeated, on fresh Redis processes each
// time, for the README's failover table. Per run: kill to promotion (the replica accepts writes),
// promotion to the sentinels naming it (Sentinel), promotion to the first 200 served again, requests
// answered 503 and 200s beyond the quota (writes lost with the old primary). The load is the
// failover tests' own (test/store/redis/failover.case.ts): two servers in this process, 30 requests
// at a time over three free accounts on the primary that dies.
//   npm run bench:failover -- [--runs 5] [--mode sentinel|cluster|both] [--durability strict|interval]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { keyDigest } from '../../src/access/key-format.ts';
import { CalendarCache } from '../../src/quota/month.ts';
import { startService, type Service } from '../../src/service.ts';
import { monthKey } from '../../src/store/redis/keys.ts';
import { openRedisStore } from '../../src/store/redis/redis-store.ts';
import type { Store } from '../../src/store/types.ts';
import { fixture } from '../helpers/fixture.ts';
import { loadClient } from '../helpers/load.ts';
import { startCluster, startSentinelSet, type RedisServer } from '../helpers/redis.ts';
import { FAST_SCRYPT, within } from '../helpers/state.ts';
import { failoverUnderLoad, type FailoverFigures } from '../store/redis/failover.case.ts';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'both' },
  },
});
const log = (line: string) => process.stderr.write(`[bench:failover] ${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

interface Run {
  readonly urls: string[];
  readonly services: Service[];
  readonly store: Store;
}

async function serving(url: string): Promise<Run> {
  const services = await Promise.all([0, 1].map(() => startService({ data: fixture(), state: 'memory', tls: false, redisUrl: url })));
  const store = await openRedisStore({ url, state: 'memory', role: 'command', scrypt: FAST_SCRYPT });
  return { urls: services.map((s) => s.listeners[0]!.url), services, store };
}

async function known(run: Run, keys: string[]): Promise<void> {
  await within(20_000, () => run.services.every((s) => keys.every((k) => s.gate.store.lookupKey(keyDigest(k)) !== undefined)));
}

async function sentinelRun(n: number): Promise<FailoverFigures> {
  const set = await startSentinelSet();
  await set.ready();
  const run = await serving(set.url);
  const client = loadClient(run.urls);
  try {
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await run.store.accounts.create({ email: `s${n}-${i}@example.com`, plan: 'free', password: 'pw' })).key);
    await known(run, keys);
    const primary = await set.primary();
    const other = set.servers.find((s) => s !== primary)!;
    return await failoverUnderLoad({
      client,
      keys,
      kill: () => primary.kill(),
      promoted: async () => void (await within(30_000, async () => (await other.command('ROLE')).includes('master'))),
      // Announced as a client can use it: the sentinel asked first names the new primary, and no longer
      // flags it "disconnected" (it reconnects to it after the switch; node-redis refuses it till then).
      announced: async () =>
        void (await within(30_000, async () => {
          const master = await set.sentinels[0]!.command('SENTINEL', 'MASTER', set.name);
          return master.includes(`port\r\n$${String(other.port).length}\r\n${other.port}\r\n`) && /flags\r\n\$6\r\nmaster\r\n/.test(master);
        })),
    });
  } finally {
    client.close();
    await run.store.close();
    await Promise.all(run.services.map((s) => s.close(0)));
    await set.stop();
  }
}

async function clusterRun(n: number): Promise<FailoverFigures> {
  const cluster = await startCluster({ masters: 3, replicas: 1 });
  const run = await serving(cluster.url);
  const client = loadClient(run.urls);
  try {
    const month = new CalendarCache(Date.now()).moment(Date.now()).month.key;
    const keys: string[] = [];
    let victim: RedisServer | null = null;
    for (let i = 0; keys.length < 3; i++) {
      const email = `c${n}-${i}@example.com`;
      const { key } = await run.store.accounts.create({ email, plan: 'free', password: 'pw' });
      const master = await cluster.masterOf(monthKey((await run.store.accounts.find(email))!.id, month));
      victim ??= master;
      if (master === victim) keys.push(key);
    }
    await known(run, keys);
    const v = victim!;
    const replica = (await Promise.all(cluster.nodes.map(async (node) => ((await node.command('INFO', 'replication').catch(() => '')).includes(`master_port:${v.port}\r\n`) ? node : null)))).find((node) => node !== null)!;
    return await failoverUnderLoad({
      client,
      keys,
      kill: () => v.kill(),
      promoted: async () => void (await within(30_000, async () => (await replica.command('ROLE')).includes('master'))),
    });
  } finally {
    client.close();
    await run.store.close();
    await Promise.all(run.services.map((s) => s.close(0)));
    await cluster.stop();
  }
}

const range = (xs: number[]) => (Math.min(...xs) === Math.max(...xs) ? `${Math.min(...xs)}` : `${Math.min(...xs)}-${Math.max(...xs)}`);
const modes = flags.mode === 'both' ? ['cluster', 'sentinel'] : [flags.mode!];
const runs = Number(flags.runs);
for (const mode of modes) {
  const all: FailoverFigures[] = [];
  for (let n = 0; n < runs; n++) {
    const before = load();
    const f = mode === 'sentinel' ? await sentinelRun(n) : await clusterRun(n);
    all.push(f);
    log(
      `${mode} ${n + 1}/${runs}: kill to promotion ${f.promotedAfterMs} ms, usable in Sentinel's answer +${f.announcedAfterMs} ms, serving again +${f.servingAgainAfterMs} ms ` +
        `(${f.servingAgainAfterMs - f.announcedAfterMs} ms after Sentinel's answer), 503s ${f.refused}, beyond quota ${f.beyondQuota} (load ${before})`,
    );
  }
  const col = (k: keyof FailoverFigures) => range(all.map((f) => f[k] as number));
  console.log(
    `${mode} (${runs} runs, load ${load()}): kill to promotion ${col('promotedAfterMs')} ms; promotion to usable in Sentinel's answer ${col('announcedAfterMs')} ms; ` +
      `promotion to serving again ${col('servingAgainAfterMs')} ms (after Sentinel's answer: ${range(all.map((f) => f.servingAgainAfterMs - f.announcedAfterMs))} ms); ` +
      `503s ${col('refused')}; 200s beyond the quota ${col('beyondQuota')}`,
  );
}
process.exit(0);
