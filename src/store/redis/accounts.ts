// The AccountService on Redis: the operations of account-ops.ts applied to one account record at a
// time, written back only if nobody changed it meanwhile (optimistic, retried), so the CLI, the
// dashboard and every instance can change accounts at once without losing an update.
import * as ops from '../../access/account-ops.ts';
import type { Plan } from '../../access/plans.ts';
import {
  AccountError,
  type AccountDetail,
  type AccountRecord,
  type AccountService,
  type AccountSummary,
  type IssuedKey,
  type KeySummary,
  type StoreData,
} from '../../access/types.ts';
import { ACCOUNT_KEY_LIST, ACCOUNT_KEYS } from './keys.ts';
import type { RedisLink } from './link.ts';
import type { KeyReplica } from './replica.ts';

/** Writes that lost the race this many times in a row give up (another writer is hammering the account). */
const MAX_ATTEMPTS = 8;
/** Accounts per script call of an import: a few hundred KB of arguments at most. */
const IMPORT_BATCH = 200;

interface Read {
  readonly json: string;
  readonly record: AccountRecord;
}

export class RedisAccounts implements AccountService {
  constructor(
    private readonly link: RedisLink,
    private readonly replica: KeyReplica,
    private readonly ctx: ops.OpsContext,
  ) {}

  private parse(json: string, what: string): AccountRecord {
    try {
      return JSON.parse(json) as AccountRecord;
    } catch (err) {
      throw new AccountError('STORE_CORRUPT', `Redis ${ACCOUNT_KEYS.records} ${what}: not valid JSON (${(err as Error).message})`);
    }
  }

  private async byId(id: string): Promise<Read | null> {
    const json = (await this.link.command('accounts', ['HGET', ACCOUNT_KEYS.records, id])) as string | null;
    return json === null ? null : { json, record: this.parse(json, id) };
  }

  /** By canonical email: the index, then the record (two round trips; account changes are rare). */
  private async byEmail(canonical: string): Promise<Read | null> {
    const id = (await this.link.command('accounts', ['HGET', ACCOUNT_KEYS.emails, canonical])) as string | null;
    return id === null ? null : this.byId(id);
  }

  private async all(): Promise<AccountRecord[]> {
    const values = (await this.link.command('accounts', ['HVALS', ACCOUNT_KEYS.records])) as string[];
    // Creation order, as the file store lists them (a hash has none of its own).
    return values.map((json, i) => this.parse(json, `value ${i}`)).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  /**
   * Runs `change` on the account's record (as the only account of a StoreData, which is what the
   * operations take) and writes it back if the stored record is still the one read; else reads and
   * runs it again. An unknown email reaches `change` as an empty store, which throws UNKNOWN_ACCOUNT.
   */
  private async update<R>(email: string, change: (data: StoreData) => R | Promise<R>): Promise<R> {
    const canonical = ops.lookupEmail(email);
    for (let attempt = 1; ; attempt++) {
      const read = await this.byEmail(canonical);
      const data: StoreData = { version: 1, accounts: read ? [read.record] : [] };
      const result = await change(data);
      const record = data.accounts[0]!;
      const version = (await this.link.script('accounts', 'updateAccount', ACCOUNT_KEY_LIST, [record.id, read!.json, JSON.stringify(record)])) as number;
      if (version > 0) {
        this.replica.apply(record, version);
        return result;
      }
      if (attempt === MAX_ATTEMPTS) throw new AccountError('STORE_LOCKED', `${canonical} kept changing while this change was made; try again`);
    }
  }

  /** A new account: EMAIL_TAKEN from the operation when it exists, or from the script when it appeared meanwhile. */
  private async add<R>(input: { email: string; plan: string; password: string }, make: (data: StoreData, valid: { email: string; plan: Plan; password: string }) => Promise<R>): Promise<R> {
    const valid = { email: ops.normalizeEmail(input.email), plan: ops.parsePlan(input.plan), password: input.password };
    ops.checkNewPassword(input.password);
    for (let attempt = 1; ; attempt++) {
      const existing = await this.byEmail(valid.email);
      const data: StoreData = { version: 1, accounts: existing ? [existing.record] : [] };
      const result = await make(data, valid);
      const record = data.accounts[data.accounts.length - 1]!;
      const reply = await this.link.script('accounts', 'createAccounts', ACCOUNT_KEY_LIST, [record.id, record.email, JSON.stringify(record)]);
      if (typeof reply === 'number') {
        this.replica.apply(record, reply);
        return result;
      }
      // Taken between the read and the write: the next read finds it and the operation says so.
      if (attempt === MAX_ATTEMPTS) throw new AccountError('EMAIL_TAKEN', `an account with email ${valid.email} already exists`);
    }
  }

  create(input: { email: string; plan: string; password: string }): Promise<IssuedKey> {
    return this.add(input, (data, valid) => ops.createAccount(data, valid, this.ctx));
  }

  register(input: { email: string; plan: string; password: string }): Promise<AccountDetail> {
    return this.add(input, (data, valid) => ops.registerAccount(data, valid, this.ctx));
  }

  async authenticate(email: string, password: string): Promise<AccountDetail | null> {
    const read = await this.byEmail(ops.canonicalEmail(email));
    return ops.authenticate(read?.record, password, this.ctx.scrypt);
  }

  async get(id: string): Promise<AccountDetail | null> {
    const read = await this.byId(id);
    return read ? ops.detail(read.record) : null;
  }

  async find(email: string): Promise<AccountDetail | null> {
    const read = await this.byEmail(ops.canonicalEmail(email));
    return read ? ops.detail(read.record) : null;
  }

  async setPlan(email: string, plan: string): Promise<AccountSummary> {
    const parsed = ops.parsePlan(plan);
    return this.update(email, (data) => {
      const account = ops.findAccount(data, email);
      account.plan = parsed;
      return ops.summarize(account);
    });
  }

  /** The record and the email index change in one script, which refuses an email taken meanwhile. */
  async setEmail(email: string, newEmail: string): Promise<AccountSummary> {
    const canonical = ops.lookupEmail(email);
    const next = ops.normalizeEmail(newEmail);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const read = await this.byEmail(canonical);
      const data: StoreData = { version: 1, accounts: read ? [read.record] : [] };
      const summary = ops.renameAccount(data, canonical, next);
      const record = data.accounts[0]!;
      const version = (await this.link.script('accounts', 'renameAccount', ACCOUNT_KEY_LIST, [record.id, read!.json, JSON.stringify(record), canonical, next])) as number;
      if (version === -1) throw new AccountError('EMAIL_TAKEN', `an account with email ${next} already exists`);
      if (version > 0) {
        this.replica.apply(record, version);
        return summary;
      }
    }
    throw new AccountError('STORE_LOCKED', `${canonical} kept changing while this change was made; try again`);
  }

  createKey(email: string, password: string): Promise<IssuedKey> {
    return this.update(email, (data) => ops.newKey(data, email, password, false, this.ctx));
  }

  rotateKey(email: string, password: string): Promise<IssuedKey> {
    return this.update(email, (data) => ops.newKey(data, email, password, true, this.ctx));
  }

  async revealKey(email: string, password: string): Promise<IssuedKey> {
    const read = await this.byEmail(ops.lookupEmail(email));
    return ops.revealKey({ version: 1, accounts: read ? [read.record] : [] }, email, password);
  }

  revokeKey(email: string): Promise<KeySummary> {
    return this.update(email, (data) => ops.revokeKey(data, email, this.ctx));
  }

  setPassword(email: string, oldPassword: string, newPassword: string): Promise<void> {
    return this.update(email, (data) => ops.changePassword(data, email, oldPassword, newPassword, this.ctx));
  }

  async list(): Promise<AccountSummary[]> {
    return (await this.all()).map(ops.summarize);
  }

  async keys(): Promise<KeySummary[]> {
    return ops.keySummaries({ version: 1, accounts: await this.all() });
  }

  records(): Promise<AccountRecord[]> {
    return this.all();
  }

  /** `state import`: in batches (each all or nothing); with `replace`, the accounts there go first. */
  async importRecords(records: readonly AccountRecord[], replace: boolean): Promise<void> {
    const count = (await this.link.command('accounts', ['HLEN', ACCOUNT_KEYS.records])) as number;
    if (count > 0) {
      if (!replace) throw ops.notEmpty(`Redis (${ACCOUNT_KEYS.records})`, count);
      await this.link.script('accounts', 'clearAccounts', ACCOUNT_KEY_LIST, []);
    }
    for (let i = 0; i < records.length; i += IMPORT_BATCH) {
      const args: string[] = [];
      for (const r of records.slice(i, i + IMPORT_BATCH)) args.push(r.id, r.email, JSON.stringify(r));
      const reply = await this.link.script('accounts', 'createAccounts', ACCOUNT_KEY_LIST, args);
      if (typeof reply !== 'number') throw new AccountError('EMAIL_TAKEN', `an account with email ${String(reply)} already exists in Redis (written while importing?)`);
    }
  }
}
