// The connections to Redis: node-redis loaded only when a Redis URL is given, every call bounded by a
// deadline, reconnection for as long as the server runs, and each round trip counted for /metrics.
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../log.ts';
import { StoreUnavailableError, type StoreMetric } from '../types.ts';
import { SCRIPTS, type ScriptName } from './scripts.ts';

/** What a round trip was for: the label of its /metrics series. */
const OPS = ['reserve', 'settle', 'report', 'accounts', 'sync', 'sessions', 'throttle'] as const;
export type Op = (typeof OPS)[number];

/** The part of a node-redis client the store uses, typed here so that `redis` stays optional. */
export interface Connection {
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
  duplicate(): Connection;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'ready' | 'end', listener: () => void): unknown;
  sendCommand(args: readonly string[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
}
type Scripted = Connection & { readonly [K in ScriptName]: (keys: readonly string[], args: readonly string[]) => Promise<unknown> };

export interface LinkOptions {
  readonly url: string;
  /** Longest wait for any answer; past it the call fails with StoreUnavailableError (503). */
  readonly timeoutMs: number;
  /** How long opening waits for a first connection before it gives up (a server never starts blind). */
  readonly connectTimeoutMs: number;
  readonly log: Logger;
}

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

/** A URL for logs and errors: without the password. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable Redis URL)';
  }
}

export class RedisLink {
  private readonly stats = Object.fromEntries(OPS.map((op) => [op, { calls: 0, errors: 0, seconds: 0, max: 0 }])) as Record<Op, OpStats>;
  /** Whether the last call (or probe) got an answer: false sends /healthz and /api/v1 to 503. */
  private answering = true;
  private lastErrorLogMs = 0;
  private readonly reconnects = { count: 0 };

  private constructor(
    private readonly client: Scripted,
    private readonly subscriber: Connection,
    private readonly options: LinkOptions,
  ) {}

  /** Connects both connections (commands, and pub/sub) or fails with StoreUnavailableError. */
  static async open(options: LinkOptions): Promise<RedisLink> {
    const { createClient, defineScript } = await loadRedis();
    const scripts = Object.fromEntries(Object.entries(SCRIPTS).map(([name, s]) => [name, defineScript(s)]));
    let ready = false;
    const started = Date.now();
    const client = createClient({
      url: options.url,
      scripts,
      // A request must never wait for a connection that may not come back: fail at once, answer 503.
      disableOfflineQueue: true,
      // Bounds the wait before a command is written; RedisLink.call bounds the wait for its answer.
      commandOptions: { timeout: options.timeoutMs },
      socket: {
        connectTimeout: Math.min(options.connectTimeoutMs, 5000),
        // At start, give up after connectTimeoutMs (the command fails clearly); once running, retry
        // forever, quickly at first, at most every second, so serving resumes by itself.
        reconnectStrategy: (retries: number, cause: Error) =>
          !ready && Date.now() - started > options.connectTimeoutMs ? new Error(`cannot reach Redis at ${redactUrl(options.url)}: ${cause.message}`) : Math.min(50 * 2 ** retries, 1000),
      },
    } as Parameters<typeof createClient>[0]) as unknown as Scripted;
    const subscriber = client.duplicate();
    const link = new RedisLink(client, subscriber, options);
    for (const c of [client, subscriber]) c.on('error', (err) => link.connectionError(err));
    client.on('ready', () => {
      if (ready) {
        link.reconnects.count++;
        link.loadScripts().catch(() => {}); // a failure here only costs one NOSCRIPT round trip later
      }
      ready = true;
    });
    try {
      await client.connect();
      await subscriber.connect();
      await link.loadScripts();
    } catch (err) {
      client.destroy();
      subscriber.destroy();
      throw new StoreUnavailableError((err as Error).message, { cause: err });
    }
    options.log.info('connected to Redis', { url: redactUrl(options.url) });
    return link;
  }

  /**
   * One round trip, bounded by the timeout. node-redis's own timeout covers only the wait before a
   * command is written; a written one waits for its reply forever (replies come in order), so a hung
   * server (SIGSTOP, a partition) would hold every request. Any failure is a StoreUnavailableError.
   */
  call<T>(op: Op, run: (client: Scripted) => Promise<T>): Promise<T> {
    const stats = this.stats[op];
    stats.calls++;
    const started = performance.now();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        stats.errors++;
        this.answering = false;
        reject(new StoreUnavailableError(`Redis did not answer (${op}) within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      run(this.client).then(
        (value) => {
          clearTimeout(timer);
          const seconds = (performance.now() - started) / 1000;
          stats.seconds += seconds;
          if (seconds > stats.max) stats.max = seconds;
          this.answering = true;
          resolve(value);
        },
        (err: Error) => {
          clearTimeout(timer);
          stats.errors++;
          this.answering = false;
          reject(err instanceof StoreUnavailableError ? err : new StoreUnavailableError(`Redis (${op}): ${err.message}`, { cause: err }));
        },
      );
    });
  }

  /**
   * SCRIPT LOAD of every script, at connect and after each reconnect (the server may have restarted).
   * Without it a script's first call answers NOSCRIPT and is resent as EVAL, behind the commands sent
   * meanwhile: a give-back could then land after the next reservation of the same account.
   */
  private async loadScripts(): Promise<void> {
    await Promise.all(Object.values(SCRIPTS).map((s) => this.client.sendCommand(['SCRIPT', 'LOAD', s.SCRIPT])));
  }

  /** A script call: EVALSHA, and EVAL when the server does not know the script (see scripts.ts). */
  script(op: Op, name: ScriptName, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return this.call(op, (c) => c[name](keys, args));
  }

  command(op: Op, args: readonly string[]): Promise<unknown> {
    return this.call(op, (c) => c.sendCommand(args));
  }

  /** Subscribes on the pub/sub connection; node-redis subscribes again after every reconnect. */
  subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    return this.subscriber.subscribe(channel, listener);
  }

  /** Called when the command connection is ready again after a loss (the replica catches up). */
  onReady(listener: () => void): void {
    this.client.on('ready', listener);
    this.subscriber.on('ready', listener);
  }

  get healthy(): boolean {
    return this.client.isReady && this.answering;
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
    out.push({ name: 'celebrity_api_store_reconnects_total', type: 'counter', help: 'Times the connection to Redis was lost and made again.', value: this.reconnects.count });
    return out;
  }

  private connectionError(err: Error): void {
    this.answering = false;
    // While Redis is down node-redis reports every reconnect attempt: one line a second is enough.
    const now = Date.now();
    if (now - this.lastErrorLogMs < 1000) return;
    this.lastErrorLogMs = now;
    this.options.log.error('Redis connection error; answering 503 until it is back', { url: redactUrl(this.options.url), error: err.message });
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.client.close(), this.subscriber.close()]);
  }
}
