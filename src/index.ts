// The embedding API (`import { startServer } from 'celebrity-api'`): a real server on a free port with
// accounts, usage and the clock in the caller's hands, so a client's test suite can reach every answer.
import { randomBytes } from 'node:crypto';
import type { AccountService, AccountSummary, IssuedKey, KeySummary } from './access/types.ts';
import { BUNDLED_DATA } from './config.ts';
import type { DataInput } from './data/load.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import type { DashboardOptions } from './dashboard/options.ts';
import type { Logger } from './log.ts';
import type { Plan } from './access/plans.ts';
import type { UsageService } from './quota/usage-service.ts';
import type { FaultRule } from './http/faults.ts';
import { startService, type Service } from './service.ts';
import type { Durability } from './store/types.ts';
import { canonicalEmail } from './access/account-ops.ts';
import { threadCount } from './threads/platform.ts';

export { AccountError, type AccountErrorCode, type AccountSummary, type IssuedKey, type KeySummary } from './access/types.ts';
export { DataError, type DataInput } from './data/load.ts';
export { PLANS, PLAN_QUOTAS, type Plan } from './access/plans.ts';
export type { DailyUsage, UsageReport, UsageService } from './quota/usage-service.ts';
export type { Logger } from './log.ts';
export type { Durability } from './store/types.ts';
export type { SignupMode } from './config.ts';
export type { DashboardOptions } from './dashboard/options.ts';
export { COLLECTIONS, type CollectionName } from './resources/types.ts';
export { FaultRuleError, type FaultRule } from './http/faults.ts';

export interface StartServerOptions {
  /** A data directory, or arrays per collection validated exactly like the files. Default: the bundled sample data. */
  readonly data?: DataInput;
  /** A state directory (accounts, usage log, certificate), or 'memory' (the default): nothing on disk. */
  readonly state?: string;
  /** false (the default, what a test suite wants): plain HTTP; 'self-signed' needs a state directory; or PEM cert and key. */
  readonly tls?: false | 'self-signed' | { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Milliseconds since the epoch, for quota months, daily counters and `age`. Default Date.now; `clock` on the result moves it. */
  readonly clock?: () => number;
  /** Monthly quota per plan, overriding SPEC 8's; null is unlimited. */
  readonly plans?: Partial<Record<Plan, number | null>>;
  /** Default: silent. */
  readonly log?: Logger;
  /**
   * Keep accounts, keys and counters in Redis (CONTRACT 9), shared with every server on it; needs the
   * optional package `redis`. `state` then holds only this server's usage log ('memory': none).
   */
  readonly redisUrl?: string;
  /**
   * With a state directory: which 200s wait for their usage record to be on disk. 'auto' (default):
   * plans with a finite quota; 'strict': all; 'interval': none (written once a second).
   */
  readonly usageDurability?: Durability;
  /** Faults on purpose, from the first request: latency, a 500 or 503, a dropped connection (see FaultRule). */
  readonly faults?: readonly FaultRule[];
  /**
   * The customer dashboard at `${url}/dashboard`: `signup` 'open' lets anyone make a free account
   * ('closed', the default, shows only the login); `operatorEmail` is where `Request upgrade` mails.
   */
  readonly dashboard?: DashboardOptions;
  /**
   * Threads answering on the port, from one copy of the data (CONTRACT 10): a number, or 'auto' for
   * one per core. Default 1. Above 1 needs Node 22.12 or later on Linux (else startServer rejects
   * naming them); the threads follow `clock` within a quarter second (at once after `clock.set`,
   * `advance` or `reset`), and `faults.injected` stays 0.
   */
  readonly threads?: number | 'auto';
}

/** The faults in force, changed during a test. */
export interface FaultControl {
  /** Replaces the rules: seeded rates and `times` start over; [] turns faults off. Throws FaultRuleError on a bad rule and keeps the old ones. */
  set(rules: readonly FaultRule[]): void;
  /** No faults from the next request on. */
  clear(): void;
  /** Requests that got a fault since the rules were last set. */
  readonly injected: number;
}

/** The time the server sees: the given clock, unless pinned with set() or shifted with advance(). */
export interface ServerClock {
  now(): number;
  /** Pins the time (ms, Date or ISO string) until the next set() or reset(). */
  set(time: number | Date | string): void;
  /** Moves the time forward (or back, with a negative value) by `ms`. */
  advance(ms: number): void;
  /** Back to the clock of the options (or Date.now). */
  reset(): void;
}

/** Account actions; a password the server was given or made at create() is remembered for the others. */
export interface EmbeddedAccounts {
  /** Creates the account and its first key. Default plan: free; default password: a random one. */
  create(input: { readonly email: string; readonly plan?: Plan; readonly password?: string }): Promise<IssuedKey>;
  setPlan(email: string, plan: Plan): Promise<AccountSummary>;
  /** A new key for an account whose key was revoked. */
  createKey(email: string, password?: string): Promise<IssuedKey>;
  /** Replaces the active key; the old one gets 401 at once. */
  rotate(email: string, password?: string): Promise<IssuedKey>;
  reveal(email: string, password?: string): Promise<IssuedKey>;
  /** The key gets 401 from the next request on. */
  revoke(email: string): Promise<KeySummary>;
  list(): Promise<AccountSummary[]>;
}

export interface RunningServer {
  /** Base URL, e.g. http://127.0.0.1:39123; paths start with /api/v1. */
  readonly url: string;
  /** SHA-256 fingerprint of a self-signed certificate, else null. */
  readonly fingerprint: string | null;
  readonly accounts: EmbeddedAccounts;
  /** get(email): used, total, remaining, resetsOn, daily; set(email, n) puts the month's count at n. */
  readonly usage: UsageService;
  readonly clock: ServerClock;
  readonly faults: FaultControl;
  /** Validates and swaps in new data (or re-reads the same source); rejects with DataError and keeps the old. */
  reload(data?: DataInput): Promise<void>;
  /** Finishes in-flight requests, flushes the usage log and frees the port. */
  close(): Promise<void>;
}

function toMs(time: number | Date | string): number {
  const ms = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : time.getTime();
  if (!Number.isFinite(ms)) throw new TypeError(`clock: not a time: ${String(time)}`);
  return ms;
}

/** `moved` runs after each change: threads take the new time at once, for the very next request. */
function controllableClock(source: () => number, moved: () => void): ServerClock {
  let pinned: number | null = null;
  let offset = 0;
  return {
    now: () => pinned ?? source() + offset,
    set(time) {
      pinned = toMs(time);
      moved();
    },
    advance(ms) {
      if (!Number.isFinite(ms)) throw new TypeError(`clock.advance: not a number of ms: ${ms}`);
      if (pinned === null) offset += ms;
      else pinned += ms;
      moved();
    },
    reset() {
      pinned = null;
      offset = 0;
      moved();
    },
  };
}

function embeddedAccounts(service: AccountService): EmbeddedAccounts {
  const passwords = new Map<string, string>();
  const norm = canonicalEmail;
  const password = (email: string, given: string | undefined): string => {
    const known = given ?? passwords.get(norm(email));
    if (known === undefined) throw new TypeError(`accounts: no password for ${norm(email)}: pass the one it was created with`);
    return known;
  };
  return {
    async create({ email, plan = 'free', password: given }) {
      const pw = given ?? randomBytes(18).toString('base64url');
      const issued = await service.create({ email, plan, password: pw });
      passwords.set(norm(email), pw);
      return issued;
    },
    // async: a missing password rejects like every other failure, never throws synchronously
    setPlan: async (email, plan) => service.setPlan(email, plan),
    createKey: async (email, pw) => service.createKey(email, password(email, pw)),
    rotate: async (email, pw) => service.rotateKey(email, password(email, pw)),
    reveal: async (email, pw) => service.revealKey(email, password(email, pw)),
    revoke: async (email) => service.revokeKey(email),
    list: async () => service.list(),
  };
}

/** Starts the API in this process. Defaults suit a test suite: plain HTTP, port 0, accounts in memory. */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  let service: Service | null = null;
  const clock = controllableClock(options.clock ?? Date.now, () => service?.pool?.followClock());
  const threads = threadCount(options.threads ?? 1);
  if ('error' in threads) throw new Error(threads.error);
  service = await startService({
    data: options.data ?? BUNDLED_DATA,
    state: options.state ?? 'memory',
    tls: options.tls ?? false,
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    clock: clock.now,
    ...(options.plans ? { plans: options.plans } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.usageDurability ? { durability: options.usageDurability } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.dashboard ? { dashboard: options.dashboard } : {}),
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
    threads: threads.count,
  });
  return {
    url: service.listeners[0]!.url,
    fingerprint: service.fingerprint,
    accounts: embeddedAccounts(service.gate.accounts),
    usage: service.gate.usage,
    clock,
    faults: {
      set: (rules) => service.setFaults(rules),
      clear: () => service.setFaults([]),
      get injected() {
        return service.faults?.injected ?? 0;
      },
    },
    async reload(data) {
      await service.reload(data);
    },
    close: () => service.close(),
  };
}

/** The OpenAPI 3.1 document the server serves at /api/v1/openapi.json, as a fresh object. */
export function openapiDocument(): Record<string, unknown> {
  return buildOpenApiDocument();
}
