// Dashboard sessions (CONTRACT 8, ASVS 5.0 3.3 and 7): a 256-bit CSPRNG id in a __Host- cookie, only
// its SHA-256 kept by the store, idle and absolute expiry on the server's clock, a CSRF secret each.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SessionRecord, SessionStore } from '../store/types.ts';

/** `__Host-`: the browser takes it only with Secure, Path=/ and no Domain, so no subdomain can plant one. */
export const SESSION_COOKIE = '__Host-celebrity-session';
/**
 * The cookie of the login and sign-up forms, which come before any session (login CSRF): the form
 * carries an HMAC of its value under the store's form key, not the value itself, so a pair the client
 * makes up (cookie x, token x) is refused: defence in depth behind the __Host- prefix (issue 24, item 5).
 */
export const FORM_COOKIE = '__Host-celebrity-form';

export const IDLE_MS = 30 * 60_000; // ASVS 7.3.1
export const ABSOLUTE_MS = 12 * 60 * 60_000; // ASVS 7.3.2
/**
 * seenMs is written at most this often, which bounds the store's writes; the idle expiry then falls
 * between 29 and 30 minutes after the last request, never later.
 */
export const TOUCH_MS = 60_000;

const TOKEN = /^[A-Za-z0-9_-]{43}$/; // 32 bytes, base64url

export const isToken = (value: string): boolean => TOKEN.test(value);

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

/** Constant-time comparison of two tokens (the CSRF check). */
export function sameToken(given: string | null, expected: string): boolean {
  if (given === null || expected.length === 0 || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

const FLAGS = 'Path=/; Secure; HttpOnly; SameSite=Strict';

/** No Max-Age: the browser forgets it when it closes; the server's expiry holds either way. */
export function setCookie(name: string, value: string): string {
  return `${name}=${value}; ${FLAGS}`;
}

export function clearCookie(name: string): string {
  return `${name}=; Max-Age=0; ${FLAGS}`;
}

/** The first value of a cookie in the request, or null. */
export function readCookie(req: IncomingMessage, name: string): string | null {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

const expiry = (createdMs: number, seenMs: number) => Math.min(seenMs + IDLE_MS, createdMs + ABSOLUTE_MS);

export class Sessions {
  constructor(
    private readonly store: SessionStore,
    private readonly clock: () => number,
  ) {}

  /** A new session with a new id (ASVS 7.2.4: login never reuses one); returns the cookie value. */
  async start(account: string): Promise<{ token: string; session: SessionRecord }> {
    const token = randomToken();
    const now = this.clock();
    const session: SessionRecord = { id: digest(token), account, createdMs: now, seenMs: now, csrf: randomToken(), expiresMs: expiry(now, now) };
    await this.store.put(session);
    return { token, session };
  }

  /** The live session of a cookie value, refreshed; null (and ended on the server) once expired. */
  async resume(token: string | null): Promise<SessionRecord | null> {
    if (token === null || !isToken(token)) return null;
    const session = await this.store.get(digest(token));
    if (session === null) return null;
    const now = this.clock();
    if (now >= session.expiresMs || now - session.seenMs >= IDLE_MS || now - session.createdMs >= ABSOLUTE_MS) {
      await this.store.delete(session.id);
      return null;
    }
    if (now - session.seenMs < TOUCH_MS) return session;
    const seen = { ...session, seenMs: now, expiresMs: expiry(session.createdMs, now) };
    return (await this.store.refresh(seen)) ? seen : null; // ended meanwhile: stays ended
  }

  /** After a form that showed a key: the old token cannot be replayed (a reload re-posting it is refused). */
  async renewCsrf(session: SessionRecord): Promise<SessionRecord> {
    const renewed = { ...session, csrf: randomToken() };
    await this.store.refresh(renewed); // never brings back a session ended meanwhile
    return renewed;
  }

  end(session: SessionRecord): Promise<void> {
    return this.store.delete(session.id);
  }

  /** A password change ends every other session of the account (ASVS 7.4.3); returns how many. */
  endOthers(session: SessionRecord): Promise<number> {
    return this.store.deleteForAccount(session.account, session.id);
  }

  /** The token a login or sign-up form must carry for this form cookie value; null for no valid cookie. */
  async formCsrf(cookie: string | null): Promise<string | null> {
    if (cookie === null || !isToken(cookie)) return null;
    return createHmac('sha256', await this.store.formKey()).update(`form ${cookie}`).digest('base64url');
  }

  /** When a login replaces a session the browser still held. */
  async endToken(token: string | null): Promise<void> {
    if (token !== null && isToken(token)) await this.store.delete(digest(token));
  }
}
