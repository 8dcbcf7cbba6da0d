// Dashboard sessions of the file store: a Map, and for a state directory also `sessions.json` beside
// the accounts (0600, written atomically), so a restart keeps people logged in (CONTRACT 8).
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../../log.ts';
import { warnIfOpen } from '../state-dir.ts';
import type { SessionRecord, SessionStore } from '../types.ts';
import { writeFileAtomic } from './store-file.ts';

export const SESSIONS_FILE = 'sessions.json';

/** A refresh of seenMs alone waits this long for company before it is written (ASVS 7.3 tolerates it). */
const LAZY_WRITE_MS = 5_000;

export interface SessionsOptions {
  /** The state directory, or 'memory' for nothing on disk. */
  readonly state: string;
  readonly clock?: () => number;
  readonly log?: Logger;
}

export class FileSessions implements SessionStore {
  private readonly byId = new Map<string, SessionRecord>();
  private readonly path: string | null;
  private readonly clock: () => number;
  private readonly log: Logger;
  /** Read on first use: a CLI command, which never touches sessions, never reads the file. */
  private loaded: Promise<void> | null = null;
  /** A write that has not started yet: every change made before it starts rides along. */
  private pending: Promise<void> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private lazy: NodeJS.Timeout | null = null;
  /** SessionStore.formKey: kept in the file with the sessions, so a restart keeps open login forms valid. */
  private key: string | null = null;

  constructor(options: SessionsOptions) {
    this.path = options.state === 'memory' ? null : join(options.state, SESSIONS_FILE);
    this.clock = options.clock ?? Date.now;
    this.log = options.log ?? silentLogger;
  }

  async put(session: SessionRecord): Promise<void> {
    await this.load();
    const known = this.byId.get(session.id);
    this.byId.set(session.id, session);
    if (known && known.account === session.account && known.createdMs === session.createdMs && known.csrf === session.csrf) {
      // Only seenMs moved: bounded write rate, at most one write per LAZY_WRITE_MS for all such refreshes.
      this.lazy ??= setTimeout(() => {
        this.lazy = null;
        this.persist().catch((err: unknown) => this.log.warn('sessions not saved; retried with the next change', { error: String(err) }));
      }, LAZY_WRITE_MS).unref();
      return;
    }
    return this.persist();
  }

  async refresh(session: SessionRecord): Promise<boolean> {
    await this.load();
    if (!this.byId.has(session.id)) return false;
    await this.put(session);
    return true;
  }

  async get(id: string): Promise<SessionRecord | null> {
    await this.load();
    const s = this.byId.get(id);
    if (s === undefined) return null;
    if (s.expiresMs <= this.clock()) {
      this.byId.delete(id); // dropped from the file by the next write
      return null;
    }
    return s;
  }

  async delete(id: string): Promise<void> {
    await this.load();
    if (this.byId.delete(id)) return this.persist();
  }

  async deleteForAccount(account: string, keep: string | null): Promise<number> {
    await this.load();
    const now = this.clock();
    let n = 0;
    for (const [id, s] of this.byId) {
      if (s.account === account && id !== keep) {
        this.byId.delete(id);
        if (s.expiresMs > now) n++; // an expired one had ended already
      }
    }
    if (n > 0) await this.persist();
    return n;
  }

  async formKey(): Promise<string> {
    await this.load();
    if (this.key === null) {
      this.key = randomBytes(32).toString('base64url');
      await this.persist();
    }
    return this.key;
  }

  /** Writes what a lazy refresh left waiting. */
  async close(): Promise<void> {
    if (this.lazy !== null) {
      clearTimeout(this.lazy);
      this.lazy = null;
      await this.persist().catch((err: unknown) => this.log.warn('sessions not saved at shutdown', { error: String(err) }));
    }
    await this.chain;
  }

  private load(): Promise<void> {
    this.loaded ??= this.read();
    return this.loaded;
  }

  private async read(): Promise<void> {
    if (this.path === null) return;
    let text: string;
    try {
      const fh = await open(this.path, 'r');
      try {
        warnIfOpen(this.path, (await fh.stat()).mode, this.log);
        text = await fh.readFile('utf8');
      } finally {
        await fh.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const now = this.clock();
    const file = parseSessions(text);
    // Sessions are disposable: a damaged file costs everyone a new login, never the server's start.
    if (file === null) this.log.warn('sessions file unreadable; everyone logs in again', { path: this.path });
    for (const s of file?.sessions ?? []) if (s.expiresMs > now) this.byId.set(s.id, s);
    this.key ??= file?.formKey ?? null;
  }

  /** Queues one atomic rewrite of the live sessions (expired ones purged); changes join a write not yet started. */
  private persist(): Promise<void> {
    if (this.path === null) return Promise.resolve();
    if (this.pending !== null) return this.pending;
    const path = this.path;
    const write = this.chain.then(() => {
      this.pending = null; // from here on a change needs the next write; this one snapshots now
      const now = this.clock();
      const live: SessionRecord[] = [];
      for (const [id, s] of this.byId) {
        if (s.expiresMs > now) live.push(s);
        else this.byId.delete(id);
      }
      return writeFileAtomic(path, JSON.stringify({ version: 1, ...(this.key === null ? {} : { formKey: this.key }), sessions: live }) + '\n').then(() => {});
    });
    this.pending = write;
    this.chain = write.catch(() => {});
    return write;
  }
}

const KEY = /^[A-Za-z0-9_-]{43}$/;

function parseSessions(text: string): { sessions: SessionRecord[]; formKey: string | null } | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  const file = data as { version?: unknown; sessions?: unknown; formKey?: unknown };
  if (!file || file.version !== 1 || !Array.isArray(file.sessions)) return null;
  const formKey = typeof file.formKey === 'string' && KEY.test(file.formKey) ? file.formKey : null;
  const str = (v: unknown) => typeof v === 'string' && v.length > 0;
  const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  const sessions = (file.sessions as SessionRecord[]).filter(
    (s) => s && str(s.id) && str(s.account) && str(s.csrf) && num(s.createdMs) && num(s.seenMs) && num(s.expiresMs),
  );
  return { sessions, formKey };
}
