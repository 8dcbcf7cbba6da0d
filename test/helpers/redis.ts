// A real redis-server for the Redis store's tests: its own loopback port and temporary directory,
// no persistence unless asked, stopped (and the directory removed) when the test is over.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { EVENTUALLY_MS } from './deadlines.ts';

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Sends one command (inline protocol) and resolves with the raw reply. */
  command(...args: string[]): Promise<string>;
  /** SIGKILL: the server is gone at once, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (what was persisted, if anything, comes back). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the socket stays open but nothing answers (a hung server, a partition). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A port that was free a moment ago (the kernel's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServerOptions {
  /** Extra redis-server arguments, e.g. ['--appendonly', 'yes']. Default: no persistence at all. */
  readonly args?: readonly string[];
  /** A cluster node: its bus port is picked too (it defaults to port + 10000, which may be taken). */
  readonly clusterBus?: boolean;
}

/** How many times a first start picks new ports after `Address already in use`. */
const BIND_ATTEMPTS = 5;

/**
 * Runs `start` with fresh ports until one binds. A port the kernel handed out a moment ago can be
 * taken before the server binds it: outgoing connections (another test's load) get their ports from
 * the same range. Seen at a load of 10: a cluster node's start failed and its suite with it.
 */
async function withFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= BIND_ATTEMPTS || !/Address already in use/.test((err as Error).message)) throw err;
    }
  }
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'celebrity-redis-'));
  let port = 0;
  let args: string[] = [];
  let child: ChildProcess | null = null;

  async function start(): Promise<void> {
    const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start in ${EVENTUALLY_MS} ms:\n${out}`)), EVENTUALLY_MS);
      proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      });
    });
    proc.stdout!.resume();
    child = proc;
  }

  // The ports of a killed server, held until it starts again (see holdPorts).
  let held: Server[] = [];
  const release = async () => {
    const h = held;
    held = [];
    await Promise.all(h.map((server) => new Promise((resolve) => server.close(resolve))));
  };

  async function kill(): Promise<void> {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await exited;
    held = await holdPorts(ports);
  }

  let ports: number[] = [];
  await withFreshPorts(async () => {
    port = await freePort();
    const busPort = options.clusterBus ? await freePort() : 0;
    ports = busPort === 0 ? [port] : [port, busPort];
    const bus = options.clusterBus ? ['--cluster-port', String(busPort)] : [];
    args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0', ...bus, ...(options.args ?? [])];
    await start(); // restart() later runs it again on these same ports
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    command: (...a) => rawCommand(port, a),
    kill,
    async restart() {
      await release();
      await start();
    },
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async stop() {
      await kill();
      await release();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Listens on the ports of a server just killed, closing every connection at once (as a dead server's
 * port refuses them), until it is started again. Without it another test file's redis-server could
 * start on a freed port (the kernel hands out ports from one range): the clients, the sentinels and
 * the replica of the killed one would then reconnect to a different, empty Redis that says it is a
 * primary, and a Sentinel set would follow it instead of failing over. A port taken meanwhile stays
 * as it is.
 */
async function holdPorts(ports: readonly number[]): Promise<Server[]> {
  const held = await Promise.all(
    ports.map(
      (port) =>
        new Promise<Server | null>((resolve) => {
          const server = createServer((socket) => socket.destroy());
          server.once('error', () => resolve(null));
          server.listen(port, '127.0.0.1', () => resolve(server));
          server.unref();
        }),
    ),
  );
  return held.filter((server) => server !== null);
}

/** One command over a fresh connection, in RESP; resolves with the reply's text as Redis sent it. */
function rawCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.setTimeout(5000, () => socket.destroy(new Error(`redis ${args[0]}: no reply in 5 s`)));
    socket.on('data', (s: string) => {
      reply += s;
      if (reply.endsWith('\r\n')) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(reply));
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}

/** A Redis Cluster of real processes: masters with slots, each with its replicas (for failovers). */
export interface RedisCluster {
  /** redis+cluster://host:port,... naming every master, as an operator would. */
  readonly url: string;
  readonly nodes: readonly RedisServer[];
  /** The masters now, as the cluster says (a failover changes them). */
  masters(): Promise<RedisServer[]>;
  /** FLUSHALL on every master (their replicas follow). */
  flush(): Promise<void>;
  /** The node that holds `key` as master now. */
  masterOf(key: string): Promise<RedisServer>;
  stop(): Promise<void>;
}

/**
 * `masters` masters and `replicas` replicas per master, joined with `redis-cli --cluster create`, ready
 * when every node says cluster_state:ok and every replica is in sync. cluster-node-timeout is 1000 ms
 * so that a failover takes seconds in the tests, not the default 15.
 */
export async function startCluster(options: { masters?: number; replicas?: number } = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 0;
  const count = masters * (1 + replicas);
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startRedis({ clusterBus: true, args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000'] })),
  );
  const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    // One node that failed to start: stop the others, or their pipes keep the test's process alive.
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    const created = await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes']);
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.out}`);
    await waitFor(EVENTUALLY_MS, async () => {
      const infos = await Promise.all(nodes.map((n) => n.command('CLUSTER', 'INFO')));
      if (!infos.every((i) => i.includes('cluster_state:ok'))) return false;
      const roles = await Promise.all(nodes.map((n) => n.command('INFO', 'replication')));
      return roles.filter((r) => r.includes('role:slave')).every((r) => r.includes('master_link_status:up') && !r.includes('master_sync_in_progress:1'));
    }, 'the cluster to be ok with every replica in sync');
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
  const byPort = new Map(nodes.map((n) => [n.port, n]));
  const masterList = async (): Promise<RedisServer[]> => {
    for (const n of nodes) {
      // A killed node refuses the connection: ask the next one.
      const reply = await n.command('CLUSTER', 'NODES').catch(() => '');
      if (!reply.startsWith('$')) continue;
      return reply
        .split('\n')
        .filter((l) => / master /.test(l.replace(/myself,/, '')) && !/fail/.test(l) && l.split(' ').length > 8)
        .map((l) => byPort.get(Number(l.split(' ')[1]!.split(':')[1]!.split('@')[0]))!)
        .filter((n) => n !== undefined);
    }
    throw new Error('no cluster node answers');
  };
  const cluster: RedisCluster = {
    url: `redis+cluster://${nodes.slice(0, masters).map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    nodes,
    masters: masterList,
    async flush() {
      for (const m of await masterList()) await m.command('FLUSHALL');
    },
    async masterOf(key) {
      // The master that answers a command on the key without MOVED holds its slot.
      for (const m of await masterList()) if (!(await m.command('EXISTS', key)).startsWith('-MOVED')) return m;
      throw new Error(`no master holds ${key}`);
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  return cluster;
}

/** A primary, its replica and three sentinels watching it (quorum 2), down-after-milliseconds 1000. */
export interface SentinelSet {
  /** redis+sentinel://host:port,.../mymaster naming every sentinel. */
  readonly url: string;
  readonly name: string;
  readonly servers: readonly RedisServer[];
  readonly sentinels: readonly RedisServer[];
  /** The primary now, as the sentinels say (a failover changes it). */
  primary(): Promise<RedisServer>;
  /** Until every sentinel knows the replica and the other sentinels: a failover can then be agreed. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSentinelSet(name = 'mymaster'): Promise<SentinelSet> {
  const primary = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const servers = [primary, replica];
  const started = await Promise.allSettled([0, 1, 2].map(() => startSentinel(name, primary.port)));
  const sentinels = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    // Stop what started, or its pipes keep the test's process alive after the failure.
    await Promise.all([...sentinels, ...servers].map((s) => s.stop()));
    throw failed.reason;
  }
  const byPort = new Map(servers.map((s) => [s.port, s]));
  const set: SentinelSet = {
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${name}`,
    name,
    servers,
    sentinels,
    async primary() {
      const reply = await sentinels[0]!.command('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
      const port = Number(reply.split('\r\n')[4]);
      return byPort.get(port)!;
    },
    async ready() {
      await waitFor(EVENTUALLY_MS, async () => {
        const replies = await Promise.all(sentinels.map((s) => s.command('SENTINEL', 'MASTER', name)));
        // RESP2 field-value pairs, the values as bulk strings.
        return replies.every((r) => r.includes('num-slaves\r\n$1\r\n1\r\n') && r.includes('num-other-sentinels\r\n$1\r\n2\r\n'));
      }, 'the sentinels to know the replica and each other');
      // The replica now: after a failover the first primary may be the replica. A demoted primary
      // that stayed up is made a replica by Sentinel only after four of its 2 s hello periods and
      // an INFO (every 10 s): 8-13 s of waiting per failover. It is told at once here, as Sentinel
      // would tell it (the same REPLICAOF), and the wait is for it to be in sync with the primary.
      await waitFor(EVENTUALLY_MS, async () => {
        const now = await set.primary();
        const replica = servers.find((s) => s !== now)!;
        const info = await replica.command('INFO', 'replication');
        if (!info.includes(`master_port:${now.port}\r\n`)) await replica.command('REPLICAOF', '127.0.0.1', String(now.port));
        return info.includes(`master_port:${now.port}\r\n`) && info.includes('master_link_status:up');
      }, 'the replica to be in sync');
    },
    async stop() {
      await Promise.all([...sentinels, ...servers].map((s) => s.stop()));
    },
  };
  return set;
}

/** One redis-sentinel, its config file in its own directory (Sentinel rewrites it). */
function startSentinel(name: string, primaryPort: number): Promise<RedisServer> {
  return withFreshPorts(() => startSentinelOnce(name, primaryPort));
}

async function startSentinelOnce(name: string, primaryPort: number): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'celebrity-sentinel-'));
  const port = await freePort();
  const conf = join(dir, 'sentinel.conf');
  await writeFile(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 10000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  );
  const proc = spawn('redis-sentinel', [conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-sentinel did not start in ${EVENTUALLY_MS} ms:\n${out}`)), EVENTUALLY_MS);
    proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      if (out.includes('+monitor master')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-sentinel exited with ${code}:\n${out}`));
    });
  });
  proc.stdout!.resume();
  const kill = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    command: (...a) => rawCommand(port, a),
    kill,
    restart: () => Promise.reject(new Error('a sentinel is not restarted in these tests')),
    pause: () => proc.kill('SIGSTOP'),
    resume: () => proc.kill('SIGCONT'),
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` every 50 ms until it is true; fails naming `what` after `ms`. */
async function waitFor(ms: number, check: () => Promise<boolean>, what: string): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function run(command: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => resolve({ code, out }));
  });
}
