// Server configuration: defaults with their units, validated once with a message per bad field,
// then frozen and passed down (STYLE habit 5). Flags win over environment variables.
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { LOG_LEVELS, type LogLevel } from './log.ts';
import type { Durability } from './store/types.ts';
import { parseRedisUrl, RedisUrlError } from './store/redis/url.ts';

/** The sample data shipped with the package, so `serve` works from any directory. */
export const BUNDLED_DATA = fileURLToPath(new URL('../data', import.meta.url));

/** Who may create an account on the dashboard (`--signup`): 'open' anyone, 'closed' the operator only. */
export const SIGNUP_MODES = ['open', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

export const LOG_FORMATS = ['json', 'text'] as const;

export const DEFAULTS = {
  host: '127.0.0.1', // loopback unless told otherwise: exposing a server is a decision
  httpsPort: 8443,
  insecurePort: 8080,
  headersTimeoutMs: 10_000, // a client has 10 s to send its headers (slowloris guard)
  requestTimeoutMs: 30_000, // and 30 s for the whole request
  keepAliveTimeoutMs: 5_000, // idle keep-alive sockets are closed after 5 s
  connectionsCheckingIntervalMs: 1_000, // Node checks the two timeouts above only this often
  maxHeaderSize: 16_384, // bytes; larger headers get a 431
  maxRequestsPerSocket: 10_000, // then the socket is closed, spreading long-lived clients
  maxConnections: 10_000, // beyond this, new sockets are dropped rather than starving the others
  tlsHandshakeTimeoutMs: 10_000,
  shutdownDeadlineMs: 10_000, // graceful shutdown gives in-flight requests this long
  watchDebounceMs: 300, // --watch waits for edits to settle this long before reloading
} as const;

export interface ServeConfig {
  readonly data: string;
  readonly state: string;
  readonly host: string;
  /** Port of the main listener (HTTPS, or plain HTTP with insecureHttp); 0 picks a free one. */
  readonly port: number;
  readonly tlsCert: string | null;
  readonly tlsKey: string | null;
  readonly insecureHttp: boolean;
  /** Port of the plain-HTTP listener that refuses /api/ and redirects the rest (CONTRACT 5), or null. */
  readonly httpPort: number | null;
  readonly trustProxy: boolean;
  readonly watch: boolean;
  readonly corsOrigin: string | null;
  readonly adminPort: number | null;
  /** The shared store of many instances (CONTRACT 9), or null for the state directory. */
  readonly redisUrl: string | null;
  readonly logFormat: (typeof LOG_FORMATS)[number];
  readonly logLevel: LogLevel;
  /** Which 200s wait for their usage record to be on disk (CONTRACT 4): 'auto' = strict for finite quotas. */
  readonly usageDurability: Durability;
  /** Dashboard sign-up (CONTRACT 8): 'open' lets anyone make a free account. */
  readonly signup: SignupMode;
  /** Where the dashboard's `Request upgrade` mails, or null. */
  readonly operatorEmail: string | null;
  /** `--threads N|auto` (CONTRACT 10): threads answering on the main port; src/threads/ resolves 'auto'. */
  readonly threads: number | 'auto';
}

/** What `--usage-durability` accepts; without it, 'auto' (strict for plans with a finite quota). */
export const USAGE_DURABILITY_FLAGS = ['strict', 'interval'] as const;

export type ServeFlags = Partial<Record<string, string | boolean | undefined>>;

export class ConfigError extends Error {}

function port(name: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new ConfigError(`${name}: must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
  return Number(value);
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name}: must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

function durability(value: string | undefined): Durability {
  return value === undefined ? 'auto' : oneOf('--usage-durability', value, USAGE_DURABILITY_FLAGS);
}

/** A plain address only: it becomes a mailto: link on the dashboard. */
function operatorEmail(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!/^[^\s@<>"?&]+@[^\s@<>"?&]+\.[^\s@<>"?&.]+$/.test(value)) throw new ConfigError(`--operator-email: must be an email address, got ${JSON.stringify(value)}`);
  return value;
}

/** `--threads`: a whole number from 1 to 256, or `auto` (one per core). */
function threads(value: string | undefined): number | 'auto' {
  if (value === undefined) return 1;
  if (value === 'auto') return 'auto';
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 256) throw new ConfigError(`--threads: must be a whole number from 1 to 256 or auto, got ${JSON.stringify(value)}`);
  return Number(value);
}

const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * `--redis-url`, else $CELEBRITY_API_REDIS_URL (CONTRACT 9): one Redis (redis://, rediss://), a
 * cluster (redis+cluster://) or a Sentinel-managed primary (redis+sentinel://), or null.
 */
export function resolveRedisUrl(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string | null {
  const value = flag ?? env.CELEBRITY_API_REDIS_URL;
  if (value === undefined || value === '') return null;
  try {
    parseRedisUrl(value);
  } catch (err) {
    if (err instanceof RedisUrlError) throw new ConfigError(`--redis-url: ${err.message}`);
    throw err;
  }
  return value;
}

export function resolveServeConfig(flags: ServeFlags, env: Readonly<Record<string, string | undefined>>, cwd: string): ServeConfig {
  const insecureHttp = flags['insecure-http'] === true;
  const tlsCert = str(flags['tls-cert']) ?? env.CELEBRITY_API_TLS_CERT ?? null;
  const tlsKey = str(flags['tls-key']) ?? env.CELEBRITY_API_TLS_KEY ?? null;
  if ((tlsCert === null) !== (tlsKey === null)) throw new ConfigError('--tls-cert and --tls-key go together');
  if (insecureHttp && tlsCert !== null) throw new ConfigError('--insecure-http cannot be combined with --tls-cert');
  const httpPort = port('--http-port', str(flags['http-port']) ?? env.CELEBRITY_API_HTTP_PORT);
  if (insecureHttp && httpPort !== null) throw new ConfigError('--http-port is for the redirecting listener beside HTTPS; with --insecure-http use --port');
  const mainPort = port('--port', str(flags.port) ?? env.CELEBRITY_API_PORT) ?? (insecureHttp ? DEFAULTS.insecurePort : DEFAULTS.httpsPort);
  const data = str(flags.data) ?? env.CELEBRITY_API_DATA;
  return Object.freeze({
    data: data === undefined ? BUNDLED_DATA : resolve(cwd, data),
    state: resolve(cwd, str(flags.state) ?? env.CELEBRITY_API_STATE ?? 'state'),
    host: str(flags.host) ?? env.CELEBRITY_API_HOST ?? DEFAULTS.host,
    port: mainPort,
    tlsCert: tlsCert === null ? null : resolve(cwd, tlsCert),
    tlsKey: tlsKey === null ? null : resolve(cwd, tlsKey),
    insecureHttp,
    httpPort,
    trustProxy: flags['trust-proxy'] === true,
    watch: flags.watch === true,
    corsOrigin: str(flags['cors-origin']) ?? null,
    adminPort: port('--admin-port', str(flags['admin-port'])),
    redisUrl: resolveRedisUrl(str(flags['redis-url']), env),
    logFormat: oneOf('--log-format', str(flags['log-format']) ?? 'json', LOG_FORMATS),
    logLevel: oneOf('--log-level', str(flags['log-level']) ?? 'info', LOG_LEVELS),
    usageDurability: durability(str(flags['usage-durability']) ?? env.CELEBRITY_API_USAGE_DURABILITY),
    signup: oneOf('--signup', str(flags.signup) ?? env.CELEBRITY_API_SIGNUP ?? 'closed', SIGNUP_MODES),
    operatorEmail: operatorEmail(str(flags['operator-email']) ?? env.CELEBRITY_API_OPERATOR_EMAIL),
    threads: threads(str(flags.threads) ?? env.CELEBRITY_API_THREADS),
  });
}
