// node-redis's slot table on a Redis Cluster with holes: a topology look-up that found a slot range
// with no master (seen mid-failover in CI: every call for those slots then threw "Cannot destructure
// property 'master' of this.slots[...]", which is no MOVED, and nothing made node-redis look again:
// 503 for good). A real cluster is given such a range, the link is made to look it up, then the range
// gets its master back: the link asks node-redis to look again while it cannot route, and serves it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RedisLink } from '../../../src/store/redis/link.ts';
import { startCluster, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { captureLog, EVENTUALLY_MS, within } from '../../helpers/state.ts';

const SLOTS = 16384;

/** The slot ranges `node` holds as master, as it says itself (CLUSTER NODES, its "myself" line). */
async function ownRanges(node: RedisServer): Promise<[number, number][]> {
  const mine = (await node.command('CLUSTER', 'NODES')).split('\n').find((l) => l.includes('myself'))!;
  return mine
    .trim()
    .split(' ')
    .slice(8)
    .map((r) => r.split('-').map(Number))
    .map(([from, to]) => [from!, to ?? from!]);
}

const keySlot = async (node: RedisServer, key: string) => Number(/:(\d+)/.exec(await node.command('CLUSTER', 'KEYSLOT', key))![1]);

/** The slots every node says have a master (CLUSTER SLOTS), as one count per node. */
async function covered(nodes: readonly RedisServer[]): Promise<number[]> {
  return Promise.all(
    nodes.map(async (n) => {
      const reply = await n.command('CLUSTER', 'SLOTS');
      let count = 0;
      // Each range opens with its first and last slot: "*N\r\n:from\r\n:to\r\n".
      for (const m of reply.matchAll(/\*\d+\r\n:(\d+)\r\n:(\d+)\r\n/g)) count += Number(m[2]) - Number(m[1]) + 1;
      return count;
    }),
  );
}

test('a slot range with no master when node-redis looked the topology up: served again once a master holds it', async () => {
  const cluster = await startCluster({ masters: 3 });
  const log = captureLog();
  let link: RedisLink | null = null;
  try {
    // Each node serves its own slots while others have none (by default a node refuses every keyed
    // command then), and a master left with no slot stays a master (by default it becomes a replica
    // of the one that took its last slot, and could never take the range back).
    for (const n of cluster.nodes) assert.match(await n.command('CONFIG', 'SET', 'cluster-require-full-coverage', 'no', 'cluster-allow-replica-migration', 'no'), /OK/);
    const [first] = cluster.nodes;
    // `moved`: the one slot of master A handed to master B, for a MOVED that makes node-redis look again.
    const moved = 'slots-test:moved';
    const movedSlot = await keySlot(first!, moved);
    const a = await cluster.masterOf(moved);
    const b = cluster.nodes.find((n) => n !== a)!;
    const [[from, to]] = (await ownRanges(a)) as [[number, number]];
    // `lost`: a key in the rest of A's range, which will have no master for a while.
    let lost = '';
    for (let i = 0; lost === ''; i++) {
      const slot = await keySlot(first!, `slots-test:${i}`);
      if (slot >= from && slot <= to && slot !== movedSlot) lost = `slots-test:${i}`;
    }
    const rest = [
      [from, movedSlot - 1],
      [movedSlot + 1, to],
    ].filter(([f, t]) => f! <= t!);

    link = await RedisLink.open({ url: cluster.url, timeoutMs: 2000, connectTimeoutMs: 10_000, log });
    await link.command('report', ['GET', lost]); // routed: the table is whole

    // A's slots: the one of `moved` to B, the rest to no master, on every node (A first, so that it
    // no longer claims them in what it tells the others; B's epoch the highest, so that its claim wins).
    assert.match(await b.command('CLUSTER', 'BUMPEPOCH'), /BUMPED|STILL/);
    const bId = (await b.command('CLUSTER', 'MYID')).split('\r\n')[1]!;
    for (const n of [a, ...cluster.nodes.filter((n) => n !== a)]) {
      for (const [f, t] of rest) assert.match(await n.command('CLUSTER', 'DELSLOTSRANGE', String(f), String(t)), /OK/);
      assert.match(await n.command('CLUSTER', 'SETSLOT', String(movedSlot), 'NODE', bId), /OK/);
    }
    const meanwhile = SLOTS - (to - from); // every slot but the rest of A's
    await within(EVENTUALLY_MS, async () => (await covered(cluster.nodes)).every((c) => c === meanwhile));

    // A call on `moved` goes to A, which answers MOVED: node-redis looks the topology up again and
    // now has no node for the rest of A's slots.
    await link.command('report', ['GET', moved]);
    await assert.rejects(link.command('report', ['GET', lost]), /master/, 'node-redis cannot route the slots with no master');

    // The range gets its master back (A claims it; the others take its word, no one else claims it).
    for (const [f, t] of rest) assert.match(await a.command('CLUSTER', 'ADDSLOTSRANGE', String(f), String(t)), /OK/);
    await within(EVENTUALLY_MS, async () => (await covered(cluster.nodes)).every((c) => c === SLOTS));

    // Before: the table kept its holes for good, and every call for those slots failed.
    const served = link;
    await within(EVENTUALLY_MS, async () => (await served.command('report', ['GET', lost]), true));
    assert.ok(link.healthy, 'the link is healthy again');
  } finally {
    await link?.close();
    await cluster.stop();
  }
});

const nodeId = async (node: RedisServer) => (await node.command('CLUSTER', 'MYID')).split('\r\n')[1]!;

/** Gives `slot` to `owner` on every node of `nodes` (`owner` first, its epoch bumped so that its claim wins). */
async function giveSlot(nodes: readonly RedisServer[], slot: number, owner: RedisServer): Promise<void> {
  assert.match(await owner.command('CLUSTER', 'BUMPEPOCH'), /BUMPED|STILL/);
  const id = await nodeId(owner);
  for (const n of [owner, ...nodes.filter((n) => n !== owner)]) assert.match(await n.command('CLUSTER', 'SETSLOT', String(slot), 'NODE', id), /OK/);
  await within(EVENTUALLY_MS, async () => (await Promise.all(nodes.map((n) => n.command('CLUSTER', 'SLOTS')))).every((r) => slotOwnerPort(r, slot) === owner.port));
}

/** The port of the master of `slot` in a CLUSTER SLOTS reply (RESP as sent), 0 if none. */
function slotOwnerPort(reply: string, slot: number): number {
  for (const m of reply.matchAll(/\*\d+\r\n:(\d+)\r\n:(\d+)\r\n\*\d+\r\n\$\d+\r\n[^\r]*\r\n:(\d+)/g)) {
    if (Number(m[1]) <= slot && slot <= Number(m[2])) return Number(m[3]);
  }
  return 0;
}

test('a look-up that names a master node-redis never met, which is down: served again once the slot is elsewhere', async () => {
  const cluster = await startCluster({ masters: 3 });
  let extra: RedisServer | null = null;
  const log = captureLog();
  let link: RedisLink | null = null;
  try {
    for (const n of cluster.nodes) assert.match(await n.command('CONFIG', 'SET', 'cluster-require-full-coverage', 'no'), /OK/);
    const key = 'slots-test:down';
    const [first] = cluster.nodes;
    const slot = await keySlot(first!, key);
    const a = await cluster.masterOf(key);
    link = await RedisLink.open({ url: cluster.url, timeoutMs: 2000, connectTimeoutMs: 10_000, log });
    await link.command('report', ['GET', key]);

    // D joins after node-redis looked the topology up (it never met it), takes the key's slot, and is killed.
    extra = await startRedis({ clusterBus: true, args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000'] });
    const d = extra;
    const bus = /127\.0\.0\.1:\d+@(\d+) myself/.exec(await a.command('CLUSTER', 'NODES'))![1]!;
    assert.match(await d.command('CLUSTER', 'MEET', '127.0.0.1', String(a.port), bus), /OK/);
    const dId = await nodeId(d);
    await within(EVENTUALLY_MS, async () => (await Promise.all(cluster.nodes.map((n) => n.command('CLUSTER', 'NODES')))).every((r) => r.includes(`${dId} `)));
    await giveSlot([...cluster.nodes, d], slot, d);
    await d.kill();

    // The call goes to A, which answers MOVED: node-redis looks the topology up, meets D there and
    // waits for a connection to it before the look-up is over (a connection tried again for good).
    await assert.rejects(link.command('report', ['GET', key]), /did not answer|Redis/);

    // The slot back on A (as a replica promoted in D's place would take it).
    await giveSlot(cluster.nodes, slot, a);

    // Before: every later look-up waited on that one, which waited on D: the slot stayed D's for good.
    const served = link;
    await within(EVENTUALLY_MS, async () => (await served.command('report', ['GET', key]), true));
    assert.ok(link.healthy, 'the link is healthy again');
  } finally {
    await link?.close();
    await extra?.stop();
    await cluster.stop();
  }
});
