// This instance's copy of the active keys (digest -> account), so the key check of every request is a
// Map lookup. It follows every change made anywhere within 2 s (CONTRACT 4 and 9), two ways:
// - pub/sub: each change publishes its version; a message starts a catch-up at once (milliseconds).
//   Messages are fire-and-forget: lost while the subscriber reconnects, and never replayed.
// - the version key, polled every pollMs (500 ms): what the guarantee rests on. A catch-up asks for
//   every account changed after the version it last saw, so a missed message, a reconnect or a
//   restarted Redis are all caught at the next poll, whatever happened to the messages.
import type { AccountRecord, AccountView } from '../../access/types.ts';
import type { Logger } from '../../log.ts';
import type { StoreMetric } from '../types.ts';
import { ACCOUNT_KEY_LIST } from './keys.ts';
import type { RedisLink } from './link.ts';

interface Known {
  /** The account version this entry reflects: an older answer never overwrites a newer one. */
  readonly version: number;
  readonly digest: string | null;
}

export class KeyReplica {
  private byDigest = new Map<string, AccountView>();
  private byId = new Map<string, Known>();
  /** The latest version whose changes are all here. */
  private since = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private syncs = 0;
  private lastSyncMs = 0;
  /** Told after a catch-up or an own change that altered what lookup() answers (threads drop their view of the keys). */
  private readonly changed: (() => void)[] = [];

  constructor(
    private readonly link: RedisLink,
    private readonly log: Logger,
  ) {}

  lookup(digest: string): AccountView | undefined {
    return this.byDigest.get(digest);
  }

  /** Loads every account, then follows changes (subscribe, poll, catch up after a reconnect). */
  async follow(pollMs: number): Promise<void> {
    await this.sync();
    await this.link.subscribe((message) => {
      if (Number(message) > this.since) this.catchUp();
    });
    this.link.onReady(() => this.catchUp());
    this.timer = setInterval(() => this.catchUp(), pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Calls `listener` whenever what lookup() answers may have changed, right after it has. */
  onChange(listener: () => void): void {
    this.changed.push(listener);
  }

  /** Installs a record this instance just wrote (at `version`), so its own change applies at once. */
  apply(record: AccountRecord, version: number): void {
    if (this.install(record.id, record, version)) this.tell();
  }

  private tell(): void {
    for (const l of this.changed) l();
  }

  private catchUp(): void {
    this.sync().catch((err: Error) => this.log.debug('account replica: catch-up failed; keeping the keys it has', { error: err.message }));
  }

  /** One catch-up at a time; a request for one while it runs makes it run once more after. */
  sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.fetch().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.catchUp();
      }
    });
    return this.running;
  }

  private async fetch(): Promise<void> {
    const reply = (await this.link.script('sync', 'syncAccounts', ACCOUNT_KEY_LIST, [String(this.since)])) as (number | string)[];
    const version = Number(reply[0]);
    let changed = false;
    if (reply[1] === 1) {
      // Everything came back: the first load, or Redis went back in time (a restart that lost data).
      if (this.since > 0) this.log.warn('account replica: Redis holds an older account version than this instance saw; reloading every account', { had: this.since, now: version });
      this.byDigest = new Map();
      this.byId = new Map();
      changed = true;
    }
    for (let i = 2; i < reply.length; i += 2) {
      const json = reply[i + 1] as string;
      if (this.install(reply[i] as string, json === '' ? null : (JSON.parse(json) as AccountRecord), version)) changed = true;
    }
    this.since = version;
    this.syncs++;
    this.lastSyncMs = Date.now();
    // A poll that found nothing new tells no one: the threads' views of the keys stay (every 500 ms).
    if (changed) this.tell();
  }

  /** Whether the record was newer than the one known (what lookup() answers may then differ). */
  private install(id: string, record: AccountRecord | null, version: number): boolean {
    const known = this.byId.get(id);
    if (known && known.version >= version) return false;
    if (known?.digest) this.byDigest.delete(known.digest);
    const digest = record?.key?.digest ?? null;
    if (record && digest) this.byDigest.set(digest, Object.freeze({ id: record.id, email: record.email, plan: record.plan }));
    this.byId.set(id, { version, digest });
    return true;
  }

  metrics(now = Date.now()): StoreMetric[] {
    return [
      { name: 'celebrity_api_store_replica_keys', type: 'gauge', help: 'Active keys in this instance\'s replica of the accounts.', value: this.byDigest.size },
      { name: 'celebrity_api_store_replica_version', type: 'gauge', help: 'The account version the replica has caught up to.', value: this.since },
      { name: 'celebrity_api_store_replica_syncs_total', type: 'counter', help: 'Catch-ups of the replica (polls, messages, reconnects).', value: this.syncs },
      { name: 'celebrity_api_store_replica_age_seconds', type: 'gauge', help: 'Time since the last successful catch-up; past 2 s, changes may be missed.', value: this.lastSyncMs === 0 ? 0 : (now - this.lastSyncMs) / 1000 },
    ];
  }
}
