// Dashboard sessions on Redis, shared by every instance (CONTRACT 8 and 9): a session opened through
// one instance is valid on all.
import { randomBytes } from 'node:crypto';
import type { SessionRecord, SessionStore } from '../types.ts';
import { accountSessionsKey, FORM_KEY, sessionKey } from './keys.ts';
import type { RedisLink } from './link.ts';

/** Never longer than this, whatever expiresMs says: Redis forgets abandoned records by itself. */
const SESSION_TTL_MS = 24 * 3600 * 1000;

export class RedisSessions implements SessionStore {
  /** `clock` is the dashboard's (an injected one in tests): expiresMs is on it, not on Redis's. */
  constructor(private readonly link: RedisLink, private readonly clock: () => number) {}

  async put(session: SessionRecord): Promise<void> {
    // The time left on the dashboard's clock, as a relative TTL (an injected clock may be years off Redis's).
    const left = Math.min(session.expiresMs - this.clock(), SESSION_TTL_MS);
    if (left <= 0) return this.delete(session.id);
    const index = accountSessionsKey(session.account);
    // Separate keys (a session is looked up by id alone, the index by account): pipelined, not one script.
    await Promise.all([
      this.link.command('sessions', ['SET', sessionKey(session.id), JSON.stringify(session), 'PX', String(Math.ceil(left))]),
      this.link.command('sessions', ['SADD', index, session.id]),
      this.link.command('sessions', ['PEXPIRE', index, String(SESSION_TTL_MS)]),
    ]);
  }

  async refresh(session: SessionRecord): Promise<boolean> {
    const left = Math.min(session.expiresMs - this.clock(), SESSION_TTL_MS);
    if (left <= 0) {
      await this.delete(session.id);
      return false;
    }
    // XX: only over a record that still exists, in one step (a delete on another instance wins).
    return (await this.link.command('sessions', ['SET', sessionKey(session.id), JSON.stringify(session), 'PX', String(Math.ceil(left)), 'XX'])) !== null;
  }

  async get(id: string): Promise<SessionRecord | null> {
    const json = (await this.link.command('sessions', ['GET', sessionKey(id)])) as string | null;
    if (json === null) return null;
    const session = JSON.parse(json) as SessionRecord;
    return session.expiresMs <= this.clock() ? null : session;
  }

  async delete(id: string): Promise<void> {
    // The id may stay in its account's index: deleteForAccount counts only sessions that still exist.
    await this.link.command('sessions', ['DEL', sessionKey(id)]);
  }

  /**
   * Read each time (a round trip per login or sign-up form): an instance that cached it would keep an
   * old one after Redis lost its data, and refuse the forms of every other instance. The first
   * instance to need it makes it; SET NX lets exactly one of several racing instances win.
   */
  async formKey(): Promise<string> {
    const held = (await this.link.command('sessions', ['GET', FORM_KEY])) as string | null;
    if (held !== null) return held;
    await this.link.command('sessions', ['SET', FORM_KEY, randomBytes(32).toString('base64url'), 'NX']);
    return (await this.link.command('sessions', ['GET', FORM_KEY])) as string;
  }

  async deleteForAccount(account: string, keep: string | null): Promise<number> {
    const index = accountSessionsKey(account);
    const ids = ((await this.link.command('sessions', ['SMEMBERS', index])) as string[]).filter((id) => id !== keep);
    if (ids.length === 0) return 0;
    const deleted = (await Promise.all(ids.map((id) => this.link.command('sessions', ['DEL', sessionKey(id)])))) as number[];
    await this.link.command('sessions', ['SREM', index, ...ids]);
    return deleted.reduce((a, b) => a + b, 0);
  }
}
