// The AccountService over the store file (or memory): locked read-modify-write, snapshot for the gate.
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { silentLogger, type Logger } from '../../log.ts';
import * as ops from '../../access/account-ops.ts';
import { acquireLock, LockBusyError } from './lock-file.ts';
import { DEFAULT_SCRYPT, MEMORY_SCRYPT, type ScryptParams } from '../../access/secrets.ts';
import { ensureStateDir, warnIfOpen } from '../state-dir.ts';
import { emptyStore, LOCK_FILE, NO_STAMP, readStore, sameStamp, STORE_FILE, writeStore, type Stamp } from './store-file.ts';
import { watchStoreFile } from './store-watch.ts';
import {
  AccountError,
  type AccountDetail,
  type AccountRecord,
  type AccountService,
  type AccountSummary,
  type AccountView,
  type IssuedKey,
  type KeySummary,
  type StoreData,
} from '../../access/types.ts';

export interface AccountStoreOptions {
  /** The state directory, or 'memory' for nothing on disk. */
  readonly state: string;
  readonly clock?: () => number;
  readonly scrypt?: ScryptParams;
  readonly log?: Logger;
  /** How long a command waits for another process's lock; default 10 s. */
  readonly lockTimeoutMs?: number;
}

export class AccountStore implements AccountService {
  readonly path: string | null;
  private readonly lockPath: string | null;
  private readonly ctx: ops.OpsContext;
  private readonly log: Logger;
  private readonly lockTimeoutMs: number;
  private data: StoreData = emptyStore();
  private stamp: Stamp = NO_STAMP;
  private generation = 0;
  private byDigest = new Map<string, AccountView>();
  private byId = new Map<string, AccountView>();
  /** The records by id and by email, for the dashboard's lookups: no scan of every account. */
  private recordById = new Map<string, AccountRecord>();
  private recordByEmail = new Map<string, AccountRecord>();
  private chain: Promise<unknown> = Promise.resolve();
  private stopWatch: (() => void) | null = null;

  private constructor(options: AccountStoreOptions) {
    const memory = options.state === 'memory';
    this.path = memory ? null : join(options.state, STORE_FILE);
    this.lockPath = memory ? null : join(options.state, LOCK_FILE);
    const clock = options.clock ?? Date.now;
    this.ctx = { now: () => new Date(clock()).toISOString(), scrypt: options.scrypt ?? (memory ? MEMORY_SCRYPT : DEFAULT_SCRYPT) };
    this.log = options.log ?? silentLogger;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  /** Opens (and for a directory, reads) the store. A corrupt file fails here, with its path. */
  static async open(options: AccountStoreOptions): Promise<AccountStore> {
    const store = new AccountStore(options);
    if (store.path) {
      // Reading creates nothing: `usage` or `accounts list` with a mistyped --state must not leave a
      // new directory behind. The first change creates it (mutate), and so does a server (the gate).
      const { data, stamp, mode } = await readStore(store.path);
      if (mode !== null) warnIfOpen(store.path, mode, store.log);
      store.install(data, stamp);
    }
    return store;
  }

  /** An account by id from the snapshot (the start's sanity checks), or undefined. */
  view(id: string): AccountView | undefined {
    return this.byId.get(id);
  }

  /** Whether accounts.json existed when last read. */
  get found(): boolean {
    return this.stamp !== NO_STAMP;
  }

  private readonly changed: (() => void)[] = [];

  /** `listener` is called after every change of the accounts in this process (a write or a reload). */
  onChange(listener: () => void): void {
    this.changed.push(listener);
  }

  /** The hot-path lookup: SHA-256 digest of a presented key -> its account, or undefined. */
  lookup(digest: string): AccountView | undefined {
    return this.byDigest.get(digest);
  }


  /** Follows changes made by other processes (CLI) within 2 s (CONTRACT 4). No-op in memory. */
  watch(intervalMs: number): void {
    if (!this.path || this.stopWatch) return;
    const dir = join(this.path, '..');
    this.stopWatch = watchStoreFile({ dir, file: STORE_FILE, intervalMs, check: () => this.refresh().then(() => {}), log: this.log });
  }

  close(): void {
    this.stopWatch?.();
    this.stopWatch = null;
  }

  /** Reloads the file if its stamp changed; true when it did. */
  async refresh(): Promise<boolean> {
    if (!this.path) return false;
    const st = await stat(this.path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return NO_STAMP;
      throw err;
    });
    if (sameStamp(st, this.stamp)) return false;
    const generation = this.generation;
    const { data, stamp } = await readStore(this.path);
    // Our own write may have installed a newer version while we read; the next check settles it.
    if (generation !== this.generation) return false;
    this.install(data, stamp);
    this.log.info('account store reloaded', { accounts: data.accounts.length });
    return true;
  }

  private install(data: StoreData, stamp: Stamp): void {
    const byDigest = new Map<string, AccountView>();
    const byId = new Map<string, AccountView>();
    const recordById = new Map<string, AccountRecord>();
    const recordByEmail = new Map<string, AccountRecord>();
    for (const a of data.accounts) {
      recordById.set(a.id, a);
      recordByEmail.set(a.email, a);
      const view: AccountView = Object.freeze({ id: a.id, email: a.email, plan: a.plan });
      byId.set(a.id, view);
      if (a.key) byDigest.set(a.key.digest, view);
    }
    this.data = data;
    this.stamp = stamp;
    this.byDigest = byDigest;
    this.byId = byId;
    this.recordById = recordById;
    this.recordByEmail = recordByEmail;
    this.generation++;
    for (const listener of this.changed) listener();
  }

  /**
   * Read-modify-write under the lock, re-reading the file inside it so an update made by another
   * process in between is never lost. One at a time within this process too.
   */
  private mutate<R>(change: (data: StoreData) => R | Promise<R>): Promise<R> {
    const run = async (): Promise<R> => {
      if (!this.path || !this.lockPath) {
        const data = structuredClone(this.data);
        const result = await change(data);
        this.install(data, NO_STAMP);
        return result;
      }
      await ensureStateDir(dirname(this.lockPath));
      const release = await acquireLock(this.lockPath, { timeoutMs: this.lockTimeoutMs, staleMs: 30_000 }).catch((err) => {
        if (err instanceof LockBusyError) throw new AccountError('STORE_LOCKED', `the account store is busy: ${err.message}`);
        throw err;
      });
      try {
        const { data } = await readStore(this.path);
        const result = await change(data);
        this.install(data, await writeStore(this.path, data));
        return result;
      } finally {
        await release();
      }
    };
    const result = this.chain.then(run, run);
    this.chain = result.catch(() => {});
    return result;
  }

  /** The freshest data for read-only commands: what the file says now. */
  private async current(): Promise<StoreData> {
    await this.refresh();
    return this.data;
  }

  async create(input: { email: string; plan: string; password: string }): Promise<IssuedKey> {
    // Validate before taking the lock: a typo should not wait for another process.
    const email = ops.normalizeEmail(input.email);
    const plan = ops.parsePlan(input.plan);
    ops.checkNewPassword(input.password);
    return this.mutate((data) => ops.createAccount(data, { email, plan, password: input.password }, this.ctx));
  }

  async register(input: { email: string; plan: string; password: string }): Promise<AccountDetail> {
    const email = ops.normalizeEmail(input.email);
    const plan = ops.parsePlan(input.plan);
    ops.checkNewPassword(input.password);
    return this.mutate((data) => ops.registerAccount(data, { email, plan, password: input.password }, this.ctx));
  }

  async authenticate(email: string, password: string): Promise<AccountDetail | null> {
    await this.refresh();
    return ops.authenticate(this.recordByEmail.get(ops.canonicalEmail(email)), password, this.ctx.scrypt);
  }

  async get(id: string): Promise<AccountDetail | null> {
    await this.refresh();
    const account = this.recordById.get(id);
    return account ? ops.detail(account) : null;
  }

  async find(email: string): Promise<AccountDetail | null> {
    await this.refresh();
    const account = this.recordByEmail.get(ops.canonicalEmail(email));
    return account ? ops.detail(account) : null;
  }

  async setPlan(email: string, plan: string): Promise<AccountSummary> {
    const canonical = ops.lookupEmail(email);
    const parsed = ops.parsePlan(plan);
    return this.mutate((data) => {
      const account = ops.findAccount(data, canonical);
      account.plan = parsed;
      return ops.summarize(account);
    });
  }

  async setEmail(email: string, newEmail: string): Promise<AccountSummary> {
    ops.lookupEmail(email);
    ops.normalizeEmail(newEmail);
    return this.mutate((data) => ops.renameAccount(data, email, newEmail));
  }

  createKey(email: string, password: string): Promise<IssuedKey> {
    return this.mutate((data) => ops.newKey(data, email, password, false, this.ctx));
  }

  rotateKey(email: string, password: string): Promise<IssuedKey> {
    return this.mutate((data) => ops.newKey(data, email, password, true, this.ctx));
  }

  async revealKey(email: string, password: string): Promise<IssuedKey> {
    return ops.revealKey(await this.current(), email, password);
  }

  revokeKey(email: string): Promise<KeySummary> {
    return this.mutate((data) => ops.revokeKey(data, email, this.ctx));
  }

  setPassword(email: string, oldPassword: string, newPassword: string): Promise<void> {
    return this.mutate((data) => ops.changePassword(data, email, oldPassword, newPassword, this.ctx));
  }

  async list(): Promise<AccountSummary[]> {
    return (await this.current()).accounts.map(ops.summarize);
  }

  async keys(): Promise<KeySummary[]> {
    return ops.keySummaries(await this.current());
  }

  /** Every record as the file holds it now (`state export`). */
  async records(): Promise<AccountRecord[]> {
    return structuredClone((await this.current()).accounts);
  }

  /** `state import`: the records become the store's accounts; see Store.importAccounts. */
  importRecords(records: readonly AccountRecord[], replace: boolean): Promise<void> {
    return this.mutate((data) => {
      if (data.accounts.length > 0 && !replace) throw ops.notEmpty(this.path ?? 'the account store', data.accounts.length);
      data.accounts = structuredClone([...records]);
    });
  }
}
