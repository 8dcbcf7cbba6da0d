// The three shapes a --redis-url can name, behind one face for link.ts: one Redis (createClient), a
// Redis Cluster (createCluster: node-redis routes each command by its key's slot and follows MOVED
// and failovers) and a Sentinel-managed primary (createSentinel: node-redis asks the sentinels which
// node is the primary, again on their events, on a lost connection and every second). No slot
// routing or failover logic of our own: on a cluster, only a nudge to node-redis to look the topology
// up again while it cannot route (topologyRepair).
import type { RedisClusterOptions, RedisClusterType, RedisScripts, RedisSentinelOptions, RedisSentinelType } from 'redis';
import type { ScriptName } from './scripts.ts';
import { nodeAddress, type RedisMode, type RedisTarget } from './url.ts';

export interface DeploymentOptions {
  readonly target: RedisTarget;
  /** The scripts as node-redis's defineScript made them (with their SHA1). */
  readonly scripts: RedisScripts;
  /** Bounds the wait before a command is written (node-redis's own timeout). */
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Delay before the next reconnect attempt; an Error gives up (only while opening). */
  readonly reconnect: (retries: number, cause: Error) => number | Error;
}

export interface DeploymentEvents {
  /** A connection failed or was lost (node-redis reports every attempt while one is down). */
  error(err: Error): void;
  /** A connection is ready again after a loss, or the topology moved: catch up, load the scripts. */
  ready(): void;
  /** Subscribing again after a failover failed (retried until it holds); `null`: it holds again. */
  subscription(err: Error | null): void;
  /** The client's own background work failed (a look at the sentinels): not a sign that Redis stopped answering. */
  background(err: Error): void;
}

/** What link.ts needs of node-redis, whichever the deployment. */
export interface Deployment {
  readonly mode: RedisMode;
  readonly isReady: boolean;
  connect(): Promise<void>;
  /** A command whose key (args[1]) picks the node on a cluster; the primary otherwise. */
  command(args: readonly string[]): Promise<unknown>;
  script(name: ScriptName, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** SCRIPT LOAD of `sources` on every primary (a promoted replica has no script cache of its own). */
  loadScripts(sources: readonly string[]): Promise<void>;
  /** The channel of account changes: sharded pub/sub on a cluster (scripts.ts publishes to match). */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** host:port of every primary now, sorted: a change between two looks is a failover. */
  primaries(): string[];
  /** host:port of the primary that holds `key` (the last one asked for), as far as the client knows (a cluster looks it up). */
  nodeFor(key: string): string | Promise<string>;
  /** A call failed or a connection reported an error (link.ts): a cluster checks that it can still route. */
  failed(): void;
  close(): Promise<void>;
  destroy(): void;
}

type Redis = typeof import('redis');
type MultiTarget = Exclude<RedisTarget, { mode: 'single' }>;
type Scripted = Record<ScriptName, (keys: readonly string[], args: readonly string[]) => Promise<unknown>>;

/** The options every node connection takes: fail at once while down, bounded waits, our reconnects. */
function nodeOptions(o: DeploymentOptions, tls: boolean) {
  return {
    // A request must never wait for a connection that may not come back: fail at once, answer 503.
    disableOfflineQueue: true,
    socket: { tls, connectTimeout: Math.min(o.connectTimeoutMs, 5000), reconnectStrategy: o.reconnect },
  };
}

export function createDeployment(redis: Redis, o: DeploymentOptions, on: DeploymentEvents): Deployment {
  const t = o.target;
  if (t.mode === 'single') return single(redis, o, t.url, on);
  const credentials = { ...(t.username !== undefined ? { username: t.username } : {}), ...(t.password !== undefined ? { password: t.password } : {}) };
  return t.mode === 'cluster' ? cluster(redis, o, t, credentials, on) : sentinel(redis, o, t, credentials, on);
}

function single(redis: Redis, o: DeploymentOptions, url: string, on: DeploymentEvents): Deployment {
  const base = nodeOptions(o, url.startsWith('rediss:'));
  const client = redis.createClient({ url, scripts: o.scripts, commandOptions: { timeout: o.timeoutMs }, ...base, socket: { ...base.socket, tls: undefined } } as never);
  const subscriber = client.duplicate();
  // hostname, not host: host carries the port already (it read 127.0.0.1:6379:6379).
  const { hostname, port } = new URL(url);
  const address = `${hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'}:${port || 6379}`;
  let ready = false;
  for (const c of [client, subscriber]) c.on('error', (err: Error) => on.error(err));
  client.on('ready', () => (ready ? on.ready() : (ready = true)));
  subscriber.on('ready', () => ready && on.ready());
  const scripted = client as unknown as Scripted;
  let subscribing: Promise<unknown> | null = null;
  return {
    mode: 'single',
    get isReady() {
      return client.isReady;
    },
    async connect() {
      await client.connect();
    },
    command: (args) => client.sendCommand(args as string[]),
    script: (name, keys, args) => scripted[name](keys, args),
    loadScripts: async (sources) => void (await Promise.all(sources.map((s) => client.sendCommand(['SCRIPT', 'LOAD', s])))),
    // The second connection opens on the first subscribe: a server's main thread follows the
    // account changes; a command and each of a server's threads (src/threads/redis-gate.ts) never do.
    async subscribe(channel, listener) {
      subscribing ??= subscriber.connect();
      await subscribing;
      await subscriber.subscribe(channel, listener);
    },
    primaries: () => [address],
    nodeFor: () => address,
    failed: () => undefined,
    close: async () => void (await Promise.allSettled([client.close(), subscriber.close()])),
    destroy() {
      client.destroy();
      subscriber.destroy();
    },
  };
}

function cluster(redis: Redis, o: DeploymentOptions, t: MultiTarget, credentials: object, on: DeploymentEvents): Deployment {
  const base = nodeOptions(o, t.tls);
  const c = redis.createCluster({
    rootNodes: t.nodes.map((n) => ({ socket: { host: n.host, port: n.port } })),
    defaults: { ...credentials, ...base },
    scripts: o.scripts,
    commandOptions: { timeout: o.timeoutMs },
    // A master that stops answering is looked up again in the cluster's own view once its connection
    // has failed for this long (node-redis's default is 5 s): the promoted replica is found at the
    // next reconnect attempt after the promotion, not seconds later.
    topologyRefreshOnReconnectionAttemptStrategy: 100,
  } as RedisClusterOptions) as unknown as RedisClusterType;
  let ready = false;
  c.on('node-error', (err: Error) => on.error(err));
  c.on('error', (err: Error) => on.error(err));
  c.on('node-ready', () => ready && on.ready());
  const scripted = c as unknown as Scripted;
  const primaries = () => c.masters.map((m) => `${m.host}:${m.port}`).sort();
  const repair = topologyRepair(c, base.socket.connectTimeout, on);
  const resubscribe = resubscriber(c, on, repair.failed);
  return {
    mode: 'cluster',
    get isReady() {
      return c.isReady;
    },
    async connect() {
      await c.connect();
      ready = true;
    },
    // Read or write, every command goes to the slot's master: a replica may lag behind it.
    command: (args) => c.sendCommand(args[1], false, args as string[]),
    script: (name, keys, args) => scripted[name](keys, args),
    async loadScripts(sources) {
      await Promise.all(
        c.masters.map(async (m) => {
          const node = await c.nodeClient(m);
          await Promise.all(sources.map((s) => node.sendCommand(['SCRIPT', 'LOAD', s])));
        }),
      );
    },
    subscribe: async (channel, listener) => {
      await c.sSubscribe(channel, listener).catch((err: unknown) => {
        repair.failed();
        throw err;
      });
      resubscribe.add(channel, listener);
    },
    primaries,
    async nodeFor(key) {
      const node = await c.getNodeClientForKey(key);
      const socket = node.options?.socket as { host?: string; port?: number } | undefined;
      return socket?.host ? `${socket.host}:${socket.port}` : '';
    },
    failed: repair.failed,
    close: () => {
      resubscribe.stop();
      repair.stop();
      return c.close();
    },
    destroy: () => {
      resubscribe.stop();
      repair.stop();
      c.destroy();
    },
  };
}

/** The slot table node-redis's cluster routes by (RedisCluster._slots, cluster-slots.js), as far as it is used here. */
interface SlotTable {
  /** A shard per slot; a slot no master held when the topology was last looked up is empty. */
  readonly slots: readonly unknown[];
  /** Looks the topology up again (CLUSTER SLOTS from a known node); one at a time, callers share it. */
  rediscover(): Promise<void>;
  /** Every node of the topology by host:port: its connection, and the promise of its first connect while that is under way. */
  readonly nodeByAddress: Map<string, { client?: { readonly isReady: boolean; destroy(): void }; connectPromise?: Promise<unknown> }>;
}

/** While the cluster client cannot route, node-redis is asked to look the topology up again this often. */
const REDISCOVER_MS = 250;

/**
 * node-redis looks the topology up again only on a MOVED and while a connection to a node it had is
 * being made again. A look-up made mid-failover left a slot range with no master in its table (CI,
 * Redis 7.0.15, 2 trains of 4, once all three servers at once; where the holes come from, Redis's
 * reply or node-redis, is not pinned down: CLUSTER SLOTS polled every few ms through failovers never
 * showed one). In a slot table with holes every call for those slots throws a TypeError
 * ("Cannot destructure property 'master' of this.slots[...]") before anything is sent, so no MOVED
 * ever comes, and the failed master's connection, no longer in the topology, was closed: nothing
 * made it look again, 503 for good. So after a failure (a call, a connection, a re-subscription):
 * at once if the table has holes, then every REDISCOVER_MS while it has holes or calls keep failing,
 * ask it to look again; done once the table is whole and no failure came in the last REDISCOVER_MS.
 * A failover adds a few look-ups to those node-redis makes itself (a look-up under way is shared).
 *
 * And a look-up that meets a node it did not know connects to it and waits for that connection
 * before it is over; to a node that is down (a stale view naming the failed master again after a
 * look-up dropped it) the connection is tried again for good, so that look-up never ends, and every
 * later one shares it: the slot stayed the dead node's, 503 for good (slots.test.ts). A look-up
 * still under way after `stuckMs` (as long as one connection attempt may take) is waiting on such a
 * node: the first connections under way are closed, which ends it (the node is connected again,
 * lazily, if a call needs it).
 */
function topologyRepair(c: RedisClusterType, stuckMs: number, on: DeploymentEvents) {
  const table = (c as unknown as { _slots?: Partial<SlotTable> })._slots;
  // Only if node-redis still works this way: with another, the repair is left out, not guessed at.
  if (!table || !Array.isArray(table.slots) || typeof table.rediscover !== 'function' || !(table.nodeByAddress instanceof Map)) return { failed: () => undefined, stop: () => undefined };
  const slots = table as SlotTable;
  // The array is replaced at each look-up (cluster-slots.js #resetSlots): read it each time. A hole reads as undefined.
  const holes = () => slots.slots.length < 16384 || slots.slots.includes(undefined);
  let timer: NodeJS.Timeout | null = null;
  let lastFailure = 0;
  let looking = 0; // since when (ms), while a look-up asked for here is under way
  let stopped = false;
  const lookAgain = () => {
    if (looking !== 0) return unstick();
    looking = Date.now();
    slots
      .rediscover()
      .catch((err: Error) => on.background(err))
      .finally(() => (looking = 0));
  };
  const unstick = () => {
    if (Date.now() - looking < stuckMs) return;
    for (const node of slots.nodeByAddress.values()) {
      if (node.connectPromise && node.client && !node.client.isReady) node.client.destroy();
    }
  };
  const end = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  const tick = () => {
    if (stopped) return end();
    const failing = Date.now() - lastFailure < REDISCOVER_MS;
    if (holes() || failing) lookAgain();
    else end();
  };
  return {
    failed() {
      if (stopped) return;
      lastFailure = Date.now();
      if (timer) return;
      timer = setInterval(tick, REDISCOVER_MS);
      timer.unref();
      if (holes()) lookAgain();
    },
    stop() {
      stopped = true;
      end();
    },
  };
}

/** What node-redis's cluster emits with the listeners of a pub/sub connection to a node that left the topology (cluster-slots.js). */
const RESUBSCRIBE_EVENT = '__resubscribeListeners';
/** A failed re-subscription is tried again this often until it holds (the 500 ms version poll covers the changes meanwhile). */
const RESUBSCRIBE_RETRY_MS = 250;

/**
 * node-redis re-subscribes the channels of a master that failed over with promises no one awaits
 * (RedisCluster.resubscribeAllPubSubListeners calls sSubscribe and drops the promise): one that failed
 * (the promoted replica refusing it, a connection the next topology refresh reset) was an unhandled
 * rejection, which ends a Node process, and every instance meets the same failover at once. So the
 * cluster's own handler is replaced by this one: it subscribes this server's channels again itself,
 * reports a failure and tries again until the subscription holds. A lost message only costs the poll.
 */
function resubscriber(c: RedisClusterType, on: DeploymentEvents, failed: () => void) {
  const channels = new Map<string, (message: string) => void>();
  const retrying = new Set<string>();
  let stopped = false;
  const again = (channel: string) => {
    const listener = channels.get(channel);
    if (stopped || !listener || retrying.has(channel)) return;
    retrying.add(channel);
    c.sSubscribe(channel, listener).then(
      () => {
        retrying.delete(channel);
        on.subscription(null);
      },
      (err: Error) => {
        on.subscription(err);
        failed();
        setTimeout(() => {
          retrying.delete(channel);
          again(channel);
        }, RESUBSCRIBE_RETRY_MS).unref();
      },
    );
  };
  const all = () => {
    for (const channel of channels.keys()) again(channel);
  };
  // Only if node-redis still works this way: a version that no longer emits it needs no takeover.
  if (c.listenerCount(RESUBSCRIBE_EVENT) > 0) {
    c.removeAllListeners(RESUBSCRIBE_EVENT);
    c.on(RESUBSCRIBE_EVENT, all);
  }
  // A sharded channel whose slot moved is followed by node-redis, which reports a failure only as this event.
  c.on('sharded-channel-moved-error', all);
  return {
    add: (channel: string, listener: (message: string) => void) => void channels.set(channel, listener),
    stop: () => void (stopped = true),
  };
}

function sentinel(redis: Redis, o: DeploymentOptions, t: MultiTarget, credentials: object, on: DeploymentEvents): Deployment {
  const base = nodeOptions(o, t.tls);
  const make = () => {
    const made = redis.createSentinel({
      name: t.name,
      sentinelRootNodes: t.nodes.map((n) => ({ host: n.host, port: n.port })),
      nodeClientOptions: { ...credentials, ...base },
      // The sentinels are asked without the data nodes' credentials (they have their own, if any).
      sentinelClientOptions: { socket: { tls: t.tls, connectTimeout: base.socket.connectTimeout } },
      scripts: o.scripts,
      commandOptions: { timeout: o.timeoutMs },
      // No command is resent after a failure (a reservation counted twice fails closed, but a give-back
      // resent would hand out a unit twice), and, the reason for 0 and not 1: node-redis sleeps a
      // whole second after a look-up that finds no usable primary before it may look again, unless it
      // may not retry at all. Right after a switch the sentinels name the new primary as
      // "disconnected" for most of a second (until they reconnect to it), which node-redis refuses;
      // the sleep then cost up to a second of 503s after that (serving resumed 0.4-1.3 s after the
      // sentinels named the primary usable; 0.03-0.4 s without it, bench:failover). With
      // 0, each failed look-up ends at once, and the next call, the 500 ms version poll or a sentinel
      // event looks again: serving resumes as soon as a sentinel names the primary usable.
      maxCommandRediscovers: 0,
      // Without a retry, a primary demoted while alive (a manual failover) answers READONLY and
      // node-redis looks again only on a sentinel event: this look every second bounds that (one
      // short sentinel connection a second per server).
      scanInterval: 1000,
      // Every command on one connection to the primary, written in the order sent, as with one Redis:
      // a give-back then lands before the reservations sent after it. node-redis's default leases a
      // pooled connection per call, which reorders calls sent together and serializes them.
      reserveClient: true,
    } as RedisSentinelOptions) as unknown as RedisSentinelType;
    // What RedisSentinel emits as 'error' is its own background work: the look at the sentinels every
    // second (a sentinel down among three fails it every time), and its pub/sub connections, one of
    // which, made to the old primary while the sentinels still named it, keeps trying that address
    // after a failover (a node-redis leak: a connection attempt a second). Taken as Redis not
    // answering, they sent /healthz to 503 every second, wrote "Redis not answering" with every primary
    // up, and kept a failover from ever being over (its line needs a second without failures). A call
    // that fails says so itself (link.ts); these are only logged, at debug. (RedisSentinel does not
    // forward its node clients' 'client-error' events.)
    made.on('error', (err: unknown) => on.background(err instanceof Error ? err : new Error(String(err))));
    made.on('ready', () => ready && on.ready());
    return made;
  };
  let ready = false;
  let s = make();
  // Each call carries our deadline as an abort signal: node-redis holds a call while it looks for a
  // new primary and would write it there after the request was answered 503 (a unit spent without
  // a 200). Aborted, a call not yet written is never written; one written is answered as before.
  const bounded = () => s.withCommandOptions({ abortSignal: AbortSignal.timeout(o.timeoutMs) }) as unknown as RedisSentinelType & Scripted;
  const primary = () => {
    const m = s.getMasterNode();
    return m ? nodeAddress(m) : '';
  };
  return {
    mode: 'sentinel',
    get isReady() {
      return s.isReady;
    },
    async connect() {
      // Without retries node-redis gives up at the first look-up that finds no usable primary (a
      // failover under way, a sentinel restarting), and a client that gave up cannot connect again:
      // a new one every quarter second, until connectTimeoutMs.
      const started = Date.now();
      for (;;) {
        try {
          await s.connect();
          break;
        } catch (err) {
          if (Date.now() - started > o.connectTimeoutMs) throw err;
          await new Promise((r) => setTimeout(r, 250));
          s = make();
        }
      }
      ready = true;
    },
    command: (args) => bounded().sendCommand(false, args as string[]),
    script: (name, keys, args) => bounded()[name](keys, args),
    loadScripts: async (sources) => void (await Promise.all(sources.map((src) => s.sendCommand(false, ['SCRIPT', 'LOAD', src])))),
    subscribe: async (channel, listener) => void (await s.subscribe(channel, listener)),
    primaries: () => [primary()],
    nodeFor: () => primary(),
    failed: () => undefined,
    close: () => s.close(),
    // Only ever a client given up on (open failed): how its teardown ends is of no interest, but it must not reject unobserved.
    destroy: () => void s.destroy().catch(() => undefined),
  };
}
