// `celebrity-api serve`: runs the server until SIGTERM/SIGINT; SIGHUP reloads the data and the
// operator's certificate (CONTRACT 5, 6).
import type { IncomingMessage } from 'node:http';
import { ConfigError, DEFAULTS, resolveServeConfig } from '../config.ts';
import { DataError } from '../data/load.ts';
import { createReloader, watchData } from '../data/watch.ts';
import { createAccessLog } from '../http/access-log.ts';
import { listenAdmin } from '../http/admin.ts';
import { FaultRuleError, parseFaultSpec, type FaultRule } from '../http/faults.ts';
import { closeListeners } from '../http/server.ts';
import type { Observer } from '../http/app.ts';
import { fromLoopback, Metrics } from '../http/metrics.ts';
import { batchedWriter, createLogger } from '../log.ts';
import { readTlsFiles, startService, type Service } from '../service.ts';
import { refusal, threadCount } from '../threads/platform.ts';
import { CommandError, EXIT, noPositionals, parseFlags, UsageError, type CommandGroup } from './io.ts';
import { setServeFlags } from './v8-flags.ts';

const HELP = `Usage: celebrity-api serve [options]

Serves the API over HTTPS. Without --tls-cert/--tls-key a self-signed certificate for localhost is
created in the state directory on first start; its SHA-256 fingerprint is printed.

Options:
  --data DIR          data directory, one JSON file per collection (default: the bundled sample data)
  --state DIR         accounts, usage log and certificate (default ./state; env CELEBRITY_API_STATE)
  --host H            address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
  --port N            port of the main listener (default 8443, or 8080 with --insecure-http; 0 = any free)
  --tls-cert F        PEM certificate chain       --tls-key F   PEM private key
  --http-port N       also listen on plain HTTP: /api/ gets 403, everything else a 308 to HTTPS
  --insecure-http     serve plain HTTP only (local tests and embedding; keys travel in clear)
  --trust-proxy       behind a TLS-terminating proxy: X-Forwarded-Proto: https counts as HTTPS
  --watch             reload the data when its files change (SIGHUP always reloads)
  --cors-origin O     send Access-Control-Allow-Origin: O
  --admin-port N      serve /healthz and /metrics on this plain-HTTP port (else /metrics answers
                      loopback clients only, on the main port)
  --redis-url URL     keep accounts, keys, sessions and quota counters in Redis, shared by every
                      instance on it (env CELEBRITY_API_REDIS_URL); --state then holds this
                      instance's certificate, boot cache and usage log (one directory per instance);
                      redis://host:port, redis+cluster://host:port,host:port... (a cluster) or
                      redis+sentinel://host:port,.../name (a Sentinel set); rediss... for TLS
  --log-format F      json (default) or text          --log-level L   debug, info (default), warn, error
  --usage-durability M  strict: every 200 is sent only once its usage record is on disk (committed
                      in groups of a few ms), so a crash never loses a served request from the count;
                      interval: usage is written once a second, faster, and a crash loses at most
                      that second. Default: strict for plans with a finite quota, interval for
                      unlimited ones (env CELEBRITY_API_USAGE_DURABILITY)
  --fault SPEC        misbehave on purpose, for testing clients (repeatable; never on otherwise).
                      SPEC is comma-separated: one or more of status=500|503 (instead of the
                      answer; 503 carries Retry-After), latency=MS (before the answer), drop (close
                      the connection, no answer); then optionally path=/p (that path and below),
                      rate=R (0 to 1, drawn from seed=S: the same requests each run), times=N (the
                      next N matching requests only). The first rule that fires applies. Examples:
                        --fault status=503,rate=0.2,seed=7    --fault latency=300,path=/api/v1/movies
                        --fault drop,times=3
  --signup MODE       the dashboard at /dashboard: open (anyone may create a free account) or
                      closed (default: accounts come from \`accounts create\`; env CELEBRITY_API_SIGNUP)
  --operator-email E  where the dashboard's Request upgrade mails; upgrade requests are logged too
                      (env CELEBRITY_API_OPERATOR_EMAIL)
  --threads N|auto    threads answering on the port, from one copy of the data (default 1; auto:
                      one per core; env CELEBRITY_API_THREADS). Above 1 needs Node 22.12 or later
                      on Linux (the port is shared with SO_REUSEPORT)

Once ready it prints one line per listener, HTTPS first: listening on <url>
Signals: SIGTERM/SIGINT drain and exit 0 (a second one exits at once); SIGHUP reloads the data
and re-reads --tls-cert and --tls-key (a pair that would not work is logged and the old one kept).
`;

const OPTIONS = {
  data: { type: 'string' }, state: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' },
  'tls-cert': { type: 'string' }, 'tls-key': { type: 'string' }, 'http-port': { type: 'string' },
  'insecure-http': { type: 'boolean' }, 'trust-proxy': { type: 'boolean' }, watch: { type: 'boolean' },
  'cors-origin': { type: 'string' }, 'admin-port': { type: 'string' }, 'redis-url': { type: 'string' }, 'log-format': { type: 'string' },
  'log-level': { type: 'string' }, 'usage-durability': { type: 'string' }, fault: { type: 'string', multiple: true },
  signup: { type: 'string' }, 'operator-email': { type: 'string' }, threads: { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;

/** A repeat of the first stop signal this soon is npm start forwarding a Ctrl-C the process already had. */
const DUPLICATE_MS = 1000;

export const serve: CommandGroup = async (args, io) => {
  const { values, positionals } = parseFlags(args, OPTIONS);
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT.OK;
  }
  noPositionals(positionals, 0);
  let config;
  try {
    const { fault: _repeatable, ...flags } = values; // --fault is parsed below, rule by rule
    config = resolveServeConfig(flags, io.env, io.cwd);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const threads = threadCount(config.threads);
  if ('error' in threads) throw new UsageError(threads.error);
  let faults: FaultRule[];
  try {
    faults = (values.fault ?? []).map(parseFaultSpec);
  } catch (err) {
    if (err instanceof FaultRuleError) throw new UsageError(err.message);
    throw err;
  }
  // Before the data loads and any worker thread starts (the flags are the whole process's).
  setServeFlags();
  const logOut = batchedWriter((chunk) => io.stderr.write(chunk));
  process.once('exit', logOut.flush);
  const log = createLogger({ level: config.logLevel, format: config.logFormat, write: logOut.write });
  if (config.insecureHttp) log.warn('--insecure-http: serving plain HTTP, API keys travel in clear; use it only on a trusted machine');
  if (threads.fellBack) log.warn('--threads auto: 1 thread', { reason: refusal() });
  if (faults.length > 0) log.warn('--fault: misbehaving on purpose; never use this in production', { faults: values.fault });
  let service: Service | null = null;
  const metrics = new Metrics({
    clock: Date.now,
    draining: () => service?.draining ?? false,
    store: () => service?.gate.status() ?? null,
    compressed: () => service?.compressed ?? null,
    keptPages: () => service?.keptPages ?? null,
  });
  const accessLog = createAccessLog(log, config.trustProxy);
  const observe: Observer = (req, route, status, requestId, startMs) => {
    metrics.observe(route, status, startMs);
    accessLog(req, status, requestId, startMs);
  };
  // With --admin-port, /metrics lives there only; otherwise the main port answers loopback clients.
  const render = () => metrics.render() + (service?.threadMetrics() ?? '');
  const mainMetrics = config.adminPort === null ? (req: IncomingMessage) => (fromLoopback(req) ? render() : null) : () => null;
  try {
    service = await startService({
      data: config.data,
      state: config.state,
      tls: config.insecureHttp ? false : config.tlsCert && config.tlsKey ? await readTlsFiles(config.tlsCert, config.tlsKey) : 'self-signed',
      host: config.host,
      port: config.port,
      httpPort: config.httpPort,
      trustProxy: config.trustProxy,
      corsOrigin: config.corsOrigin,
      redisUrl: config.redisUrl,
      log,
      durability: config.usageDurability,
      metrics: mainMetrics,
      observe,
      // The access log reads an answer's request only to log it: every answer at info, else 5xx only.
      observeDetail: log.enabled?.('info') === false ? 'errors' : 'all',
      faults,
      dashboard: { signup: config.signup, operatorEmail: config.operatorEmail },
      threads: threads.count,
    });
  } catch (err) {
    if (err instanceof DataError) throw new CommandError(err.message);
    throw err;
  }
  const running = service;
  // Last resort for a promise no one awaited that rejected (node-redis re-subscribing after a cluster
  // failover was one: store/redis/deployment.ts now handles it where it starts). Node's default ends
  // the process, and every instance meets the same Redis failover at the same moment: all would end
  // together. A rejected background task leaves no request half-done, unlike a thrown exception
  // (those still end the process), so it is logged at error level with its stack, as the bug it is,
  // and serving goes on.
  const unhandled = (reason: unknown) => log.error('unhandled promise rejection (a bug: please report it); serving on', { error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) });
  process.on('unhandledRejection', unhandled);
  // In a function of its own: a local of this one would hold the first snapshot until the process
  // ends (it waits below for a signal), and with it every collection a reload replaced.
  const announce = () => {
    const live = running.snapshot();
    metrics.dataLoaded(live.version, Date.parse(live.loadedAt));
    log.info('data loaded', { version: live.version, data: config.data });
  };
  announce();
  let admin = null;
  if (config.adminPort !== null) {
    try {
      admin = await listenAdmin({ host: config.host, port: config.adminPort, metrics: render, draining: () => running.draining, health: () => running.health() });
    } catch (err) {
      await running.close(0);
      throw new CommandError(`admin port: ${(err as Error).message}`);
    }
  }
  const reload = createReloader(running, log, (ok, snapshot) => {
    metrics.reloaded(ok);
    if (ok) metrics.dataLoaded(snapshot.version, Date.parse(snapshot.loadedAt));
  });
  const watcher = config.watch ? watchData(config.data, () => void reload('watch'), { debounceMs: DEFAULTS.watchDebounceMs, log }) : null;
  const adminListener = admin;
  // A renewed certificate (Let's Encrypt every 60-90 days) serves without a restart; a pair that
  // would not work (unreadable, mismatched, expired) is refused and the old one keeps serving.
  const reloadCertificate = async (cert: string, key: string) => {
    try {
      const info = running.setCertificate(await readTlsFiles(cert, key));
      log.info('certificate reloaded', { cert, fingerprint: info.fingerprint, validTo: info.validTo });
    } catch (err) {
      log.error('certificate not reloaded: the old one keeps serving', { cert, key, error: (err as Error).message });
    }
  };
  const stopped = new Promise<number>((resolve) => {
    const onHup = () => {
      void reload('SIGHUP');
      if (config.tlsCert !== null && config.tlsKey !== null) void reloadCertificate(config.tlsCert, config.tlsKey);
    };
    const stop = (signal: NodeJS.Signals) => {
      log.info('shutting down', { signal, deadlineMs: DEFAULTS.shutdownDeadlineMs });
      // A second SIGTERM/SIGINT ends the process at once, as an impatient operator expects. Under
      // `npm start` a Ctrl-C reaches both npm and this process (the terminal signals the whole
      // process group) and npm forwards its copy: the same signal again within DUPLICATE_MS is
      // that copy, not a second request. A SIGHUP (a closing terminal) never ends it.
      const first = Date.now();
      const again = (next: NodeJS.Signals) => {
        if (next === signal && Date.now() - first < DUPLICATE_MS) return;
        process.off('SIGTERM', again);
        process.off('SIGINT', again);
        logOut.flush(); // a death by signal runs no 'exit' listener: the batched lines would be lost
        process.kill(process.pid, next);
      };
      // The new listeners go on before the old ones come off: a signal that loses its last listener,
      // even for a moment, is no longer watched by Node, and its default action (death) applies.
      // npm's copy of a Ctrl-C arriving in that moment killed the process without its log lines.
      process.on('SIGTERM', again);
      process.on('SIGINT', again);
      process.on('SIGHUP', () => log.warn('SIGHUP ignored: shutting down'));
      process.off('SIGHUP', onHup);
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      watcher?.close();
      running
        .close()
        .then(async () => {
          if (adminListener) await closeListeners([adminListener], 0);
          log.info('stopped', { signal });
          return EXIT.OK;
        })
        .catch((err: unknown) => {
          log.error('shutdown failed', { error: String(err) });
          return EXIT.FAILED;
        })
        .then(resolve);
    };
    process.on('SIGTERM', stop); // not once(): it would come off before stop() puts the next ones on
    process.on('SIGINT', stop);
    process.on('SIGHUP', onHup);
  });
  // Only now is the server ready: a script that signals as soon as it reads these lines is heard.
  if (running.fingerprint) io.stdout.write(`certificate ${config.state}/tls/cert.pem SHA-256 fingerprint ${running.fingerprint}\n`);
  for (const l of running.listeners) io.stdout.write(`listening on ${l.url}\n`);
  if (admin) io.stdout.write(`admin listening on ${admin.url}\n`);
  const code = await stopped;
  process.off('unhandledRejection', unhandled);
  process.off('exit', logOut.flush);
  logOut.flush();
  return code;
};
