// The connections to Redis: node-redis loaded only when a Redis URL is given, every call bounded by a
// deadline, reconnection for as long as the server runs, and each round trip counted for /metrics.
// One Redis, a cluster or a Sentinel-managed primary alike (deployment.ts); a failover is a short
// run of failed calls (503s), then one log line naming the new primary.
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../log.ts';
import { StoreUnavailableError, type StoreMetric } from '../types.ts';
import { createDeployment, type Deployment } from './deployment.ts';
import { CHANGES_CHANNEL, SHARDED_CHANGES_CHANNEL } from './keys.ts';
import { scriptsFor, type ScriptName } from './scripts.ts';
import { describeTarget, parseRedisUrl, RedisUrlError, type RedisMode } from './url.ts';

/** What a round trip was for: the label of its /metrics series. */
const OPS = ['reserve', 'settle', 'report', 'accounts', 'sync', 'sessions', 'throttle'] as const;
export type Op = (typeof OPS)[number];

export interface LinkOptions {
  readonly url: string;
  /** Longest wait for any answer; past it the call fails with StoreUnavailableError (503). */
  readonly timeoutMs: number;
  /** How long opening waits for a first connection before it gives up (a server never starts blind). */
  readonly connectTimeoutMs: number;
  readonly log: Logger;
}

/** A loss shorter than this (a failover, a restart) is logged once, when it is over. */
const LOSS_LOG_MS = 5000;
/** Back once no call has failed for this long. */
const QUIET_MS = 1000;
/**
 * While calls fail, a probe this often: a connection no request uses (a thread's with no traffic, the
 * whole server's once a load balancer has stopped sending any on its 503) would otherwise stay down
 * until a request came, and /healthz say 503 for ever.
 */
const PROBE_MS = 500;
/** A re-subscription failing this long is a warning (before, retried quietly). */
const SUBSCRIBE_WARN_MS = 2000;

interface OpStats {
  calls: number;
  errors: number;
  seconds: number;
  max: number;
}

/** Loads node-redis, which is an optional dependency: a file-only server never needs it. */
async function loadRedis(): Promise<typeof import('redis')> {
  try {
    return await import('redis');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new StoreUnavailableError('--redis-url needs the optional package "redis" (node-redis), which is not installed: run `npm install redis` where celebrity-api is installed');
    }
    throw err;
  }
}

export class RedisLink {
  private readonly stats = Object.fromEntries(OPS.map((op) => [op, { calls: 0, errors: 0, seconds: 0, max: 0 }])) as Record<Op, OpStats>;
  /** Whether the last call (or probe) got an answer: false sends /healthz and /api/v1 to 503. */
  private answering = true;
  /** When calls started failing (ms), while they do: the loss is logged once, the return once. */
  private downSince = 0;
  private lastFailMs = 0;
  private firstError = '';
  private lossTimer: NodeJS.Timeout | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private reconnects = 0;
  /** Set by close(): no client of this link connects again after it (see the reconnect strategy). */
  private closed = false;
  private failovers = 0;
  /** The primaries when Redis last answered: a different set when it answers again is a failover. */
  private primaries: string[];
  /** The key of the last call, and the node that holds it as last looked up (for /metrics). */
  private lastKey = '';
  private lastNode = '';
  private readonly sources: string[];

  private constructor(
    private readonly redis: Deployment,
    private readonly options: LinkOptions,
    private readonly described: string,
    scripts: readonly string[],
  ) {
    this.sources = [...scripts];
    this.primaries = [];
  }

  /** Connects (commands, and pub/sub) or fails with StoreUnavailableError. */
  static async open(options: LinkOptions): Promise<RedisLink> {
    let target;
    try {
      target = parseRedisUrl(options.url);
    } catch (err) {
      if (err instanceof RedisUrlError) throw new StoreUnavailableError(`--redis-url: ${err.message}`);
      throw err;
    }
    const described = describeTarget(target);
    const redis = await loadRedis();
    const scripts = scriptsFor(target.mode === 'cluster');
    let opened = false;
    let gaveUp = false;
    const started = Date.now();
    let link: RedisLink | null = null;
    const deployment = createDeployment(
      redis,
      {
        target,
        scripts: Object.fromEntries(Object.entries(scripts).map(([name, s]) => [name, redis.defineScript(s as never)])) as never,
        timeoutMs: options.timeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
        // At start, give up after connectTimeoutMs (the command fails clearly); once running, retry
        // forever, quickly at first, at most every second (a quarter of a second on a cluster, where
        // each attempt on a lost master also looks the topology up again), so serving resumes by itself.
        // Once the link is closed (or failed to open), never: node-redis's Sentinel can still move a
        // pub/sub client to a new node after close() (a race in @redis/client 6.3.1's changeNode),
        // and that client would retry the dead primary every second and keep the process alive.
        reconnect: (retries, cause) =>
          gaveUp || link?.closed
            ? new Error(`Redis link to ${described} closed`)
            : !opened && Date.now() - started > options.connectTimeoutMs
              ? new Error(`cannot reach Redis at ${described}: ${cause.message}`)
              : Math.min(50 * 2 ** retries, target.mode === 'cluster' ? 250 : 1000),
      },
      {
        error: (err) => link?.connectionError(err),
        ready: () => {
          if (!link) return;
          link.reconnects++;
          link.loadScripts().catch(() => {}); // a failure here only costs one NOSCRIPT round trip later
          for (const l of link.readyListeners) l();
        },
        subscription: (err) => link?.subscription(err),
        background: (err) => options.log.debug('Redis client: background work failed', { error: err.message }),
      },
    );
    link = new RedisLink(deployment, options, described, Object.values(scripts).map((s) => s.SCRIPT));
    try {
      await deployment.connect();
      await link.loadScripts();
    } catch (err) {
      gaveUp = true;
      deployment.destroy();
      throw new StoreUnavailableError((err as Error).message, { cause: err });
    }
    opened = true;
    link.primaries = deployment.primaries();
    options.log.info('connected to Redis', { url: described, mode: target.mode, primaries: link.primaries.join(',') });
    return link;
  }

  private readonly readyListeners: (() => void)[] = [];

  /**
   * One round trip, bounded by the timeout. node-redis's own timeout covers only the wait before a
   * command is written; a written one waits for its reply forever (replies come in order), so a hung
   * server (SIGSTOP, a partition) would hold every request. Any failure is a StoreUnavailableError.
   */
  private call<T>(op: Op, key: string, run: () => Promise<T>): Promise<T> {
    const stats = this.stats[op];
    stats.calls++;
    this.lastKey = key;
    const started = performance.now();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        stats.errors++;
        this.failing();
        reject(new StoreUnavailableError(`Redis did not answer (${op}) within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      run().then(
        (value) => {
          clearTimeout(timer);
          const seconds = (performance.now() - started) / 1000;
          stats.seconds += seconds;
          if (seconds > stats.max) stats.max = seconds;
          this.answered();
          resolve(value);
        },
        (err: Error) => {
          clearTimeout(timer);
          stats.errors++;
          this.failing(err);
          reject(err instanceof StoreUnavailableError ? err : new StoreUnavailableError(`Redis (${op}): ${err.message}`, { cause: err }));
        },
      );
    });
  }

  /**
   * SCRIPT LOAD of every script on every primary, at connect and after each reconnect or failover
   * (the server may have restarted; a promoted replica has no scripts). Without it a script's first
   * call answers NOSCRIPT and is resent as EVAL, behind the commands sent meanwhile: a give-back
   * could then land after the next reservation of the same account.
   */
  private loadScripts(): Promise<void> {
    return this.redis.loadScripts(this.sources);
  }

  /** A script call: EVALSHA, and EVAL when the server does not know the script (see scripts.ts). */
  script(op: Op, name: ScriptName, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return this.call(op, keys[0] ?? '', () => this.redis.script(name, keys, args));
  }

  /** A command; its key is args[1] (on a cluster, the key picks the node). */
  command(op: Op, args: readonly string[]): Promise<unknown> {
    return this.call(op, args[1] ?? '', () => this.redis.command(args));
  }

  /** The channel account changes are published on: a sharded one on a cluster (keys.ts). */
  get changesChannel(): string {
    return this.redis.mode === 'cluster' ? SHARDED_CHANGES_CHANNEL : CHANGES_CHANNEL;
  }

  /** Subscribes to the change channel; node-redis subscribes again after every reconnect or failover. */
  subscribe(listener: (message: string) => void): Promise<void> {
    return this.redis.subscribe(this.changesChannel, listener);
  }

  /** Called when a connection is ready again after a loss, or moved to a new primary (the replica catches up). */
  onReady(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  get healthy(): boolean {
    return this.redis.isReady && this.answering;
  }

  get mode(): RedisMode {
    return this.redis.mode;
  }

  /**
   * host:port of the primary that holds the key of the last call: the node that answered last (or
   * failed to). Looked up after the fact, so that no request waits for it; '' until known.
   */
  lastAnswered(): string {
    // '' while no primary is known (a Sentinel failover): the last one that answered stays named.
    const node = this.redis.nodeFor(this.lastKey);
    if (typeof node === 'string') {
      if (node !== '') this.lastNode = node;
    } else {
      node.then(
        (found) => void (found !== '' && (this.lastNode = found)),
        () => {},
      );
    }
    return this.lastNode;
  }

  metrics(): StoreMetric[] {
    const out: StoreMetric[] = [];
    const series = (name: string, type: 'gauge' | 'counter', help: string, value: (s: OpStats) => number) => {
      for (const op of OPS) out.push({ name: `celebrity_api_store_${name}`, type, help, value: value(this.stats[op]), labels: `op="${op}"` });
    };
    series('round_trips_total', 'counter', 'Calls to Redis, by purpose (reserve: one per /api/v1 request with a valid key).', (s) => s.calls);
    series('errors_total', 'counter', 'Calls to Redis that failed or passed the timeout (the request got 503, or the settle was lost).', (s) => s.errors);
    series('round_trip_seconds_total', 'counter', 'Time spent waiting for Redis answers; divided by round trips, the mean latency.', (s) => s.seconds);
    series('round_trip_seconds_max', 'gauge', 'The slowest answer since start.', (s) => s.max);
    out.push({ name: 'celebrity_api_store_reconnects_total', type: 'counter', help: 'Times a connection to Redis was lost and made again, or moved to a new primary.', value: this.reconnects });
    out.push({ name: 'celebrity_api_store_subscribe_failures_total', type: 'counter', help: 'Failed attempts to subscribe to the account changes channel again after a failover (retried until it holds).', value: this.subscribeFailures });
    out.push({ name: 'celebrity_api_store_failovers_total', type: 'counter', help: 'Times Redis answered again from other primaries than before (a Sentinel or Cluster failover).', value: this.failovers });
    const node = this.lastAnswered();
    out.push({
      name: 'celebrity_api_store_info',
      type: 'gauge',
      help: 'The Redis deployment (mode: single, cluster, sentinel) and the primary that holds the key of the last call.',
      value: 1,
      labels: `mode="${this.redis.mode}",node="${escapeLabel(node)}"`,
    });
    return out;
  }

  /**
   * A call failed, or a connection reported an error: 503s until one answers. Logged once, and only
   * if it lasts (LOSS_LOG_MS): a failover that is over sooner is the one line answeringAgain writes.
   */
  private failing(err?: Error): void {
    this.answering = false;
    this.redis.failed(); // a cluster client that cannot route asks for the topology again (deployment.ts)
    this.probeWhileFailing();
    const now = Date.now();
    this.lastFailMs = now;
    if (this.downSince !== 0) return;
    this.downSince = now;
    this.firstError = err?.message ?? `no answer within ${this.options.timeoutMs} ms`;
    this.lossTimer = setTimeout(() => {
      this.lossTimer = null;
      this.options.log.error('Redis not answering; answering 503 until it is back', { url: this.described, mode: this.redis.mode, node: this.lastNode, seconds: (Date.now() - this.downSince) / 1000, error: this.firstError });
    }, LOSS_LOG_MS);
    this.lossTimer.unref();
  }

  /**
   * An answer. Back from a loss once no call has failed for QUIET_MS (on a cluster that lost one
   * master, calls to the others answer all along): then one line, naming the new primaries if they
   * changed, which is a failover.
   */
  private answered(): void {
    this.answering = true;
    if (this.downSince === 0) return;
    const now = Date.now();
    if (now - this.lastFailMs < QUIET_MS) return;
    const downMs = this.lastFailMs - this.downSince;
    this.downSince = 0;
    if (this.lossTimer) clearTimeout(this.lossTimer);
    this.lossTimer = null;
    const before = this.primaries;
    const after = this.redis.primaries();
    this.primaries = after;
    const fields = { mode: this.redis.mode, failingSeconds: downMs / 1000, error: this.firstError };
    if (after.join(',') !== before.join(',')) {
      this.failovers++;
      this.options.log.warn('Redis failover: serving again from a new primary', { ...fields, from: before.filter((p) => !after.includes(p)).join(','), to: after.filter((p) => !before.includes(p)).join(',') });
    } else {
      this.options.log.warn('Redis answering again', fields);
    }
  }

  /**
   * When subscribing again after a failover started failing (0: it holds). Quiet for SUBSCRIBE_WARN_MS
   * (the promoted node may not be ready: the failover stays one line), then one warning; one info line
   * once it holds again.
   */
  private subscribeFailingSince = 0;
  private subscribeWarned = false;
  private subscribeFailures = 0;

  private subscription(err: Error | null): void {
    const now = Date.now();
    if (err === null) {
      if (this.subscribeWarned) this.options.log.info('account changes channel: subscribed again', { seconds: (now - this.subscribeFailingSince) / 1000 });
      this.subscribeFailingSince = 0;
      this.subscribeWarned = false;
      return;
    }
    this.subscribeFailures++;
    if (this.subscribeFailingSince === 0) this.subscribeFailingSince = now;
    if (this.subscribeWarned || now - this.subscribeFailingSince < SUBSCRIBE_WARN_MS) return;
    this.subscribeWarned = true;
    this.options.log.warn('account changes channel: subscribing again after a failover keeps failing; retrying (the 500 ms version poll applies changes meanwhile)', { seconds: (now - this.subscribeFailingSince) / 1000, error: err.message });
  }

  /**
   * Until an answer: every PROBE_MS, one probe at a time, the node of the last call's key asked
   * whether it holds it (EXISTS: routed as that call was), or PING before any call. Its answer is an
   * answer like a call's (answered); its failure changes nothing, and is not counted as a call's.
   */
  private probeWhileFailing(): void {
    if (this.probeTimer !== null || this.closed) return;
    this.probeTimer = setInterval(() => {
      if (this.answering || this.closed) {
        clearInterval(this.probeTimer!);
        this.probeTimer = null;
        return;
      }
      if (this.probing || !this.redis.isReady) return;
      this.probing = true;
      const timer = setTimeout(() => (this.probing = false), this.options.timeoutMs);
      this.redis.command(this.lastKey === '' ? ['PING'] : ['EXISTS', this.lastKey]).then(
        () => {
          clearTimeout(timer);
          this.probing = false;
          if (!this.closed) this.answered();
        },
        () => {
          clearTimeout(timer);
          this.probing = false;
        },
      );
    }, PROBE_MS);
    this.probeTimer.unref();
  }

  private connectionError(err: Error): void {
    this.failing(err);
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.lossTimer) clearTimeout(this.lossTimer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    return this.redis.close();
  }
}

/** A Prometheus label value: backslash, quote and newline escaped. */
const escapeLabel = (s: string) => s.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
