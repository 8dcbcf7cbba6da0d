// What each dashboard address does. Every change goes through the same AccountService operations as
// the CLI and startServer(), so it reaches the API within 2 seconds (CONTRACT 4 and 8). The log gets
// sign-ups, logins, failed logins and key events, never a key or a password (ASVS 5.0 16.3).
import { lookupEmail, normalizeEmail } from '../access/account-ops.ts';
import { AccountError, type AccountDetail } from '../access/types.ts';
import { isPlan, PLANS } from '../access/plans.ts';
import type { SessionRecord } from '../store/types.ts';
import type { DashboardContext, Visit } from './dashboard.ts';
import { field } from './form.ts';
import { WINDOW_MS } from './login-throttle.ts';
import { homePage, loginPage, messagePage, passwordPage, signupClosedPage, signupPage, upgradePage, type HomeView } from './pages.ts';
import { passwordProblem } from './password-policy.ts';
import { sendPage, seeOther } from './respond-page.ts';
import { clearCookie, FORM_COOKIE, isToken, randomToken, readCookie, SESSION_COOKIE, setCookie } from './session.ts';

type Handler = (ctx: DashboardContext, v: Visit) => Promise<number>;
export interface Action {
  /** Needs a live session: without one, a GET or POST is sent to the login page and changes nothing. */
  readonly signedIn: boolean;
  readonly get?: Handler;
  readonly post?: Handler;
}

const THROTTLED = `Too many wrong passwords. Wait ${WINDOW_MS / 60_000} minutes, or try from another network.`;
const RETRY_AFTER = { 'Retry-After': String(WINDOW_MS / 1000) };

/** Confirmations after a redirect, by a fixed word in the query (never text taken from the URL). */
const DONE: Readonly<Record<string, string>> = {
  revoked: 'The key is revoked: it no longer works. Generate a new one when you need it.',
  password: 'Password changed. Every other session of this account is logged out.',
};

/**
 * An email for the log only when it could name an account (the older rule included): a password
 * typed into the Email field must not be logged. JSON escapes its control characters in the log.
 */
function loggable(email: string): string | null {
  try {
    return lookupEmail(email);
  } catch {
    return null;
  }
}

/** Whether a new account may have this email (the rule of every new account, src/access/account-ops.ts). */
function validNewEmail(email: string): boolean {
  try {
    normalizeEmail(email);
    return true;
  } catch {
    return false;
  }
}

/** The login and sign-up forms' token: bound to the browser's form cookie, or to a new one set with the page. */
async function formToken(ctx: DashboardContext, v: Visit): Promise<{ token: string; cookies: Record<string, string> }> {
  const held = readCookie(v.req, FORM_COOKIE);
  if (held !== null && isToken(held)) return { token: (await ctx.sessionsOf.formCsrf(held))!, cookies: {} };
  const cookie = randomToken();
  return { token: (await ctx.sessionsOf.formCsrf(cookie))!, cookies: { 'Set-Cookie': setCookie(FORM_COOKIE, cookie) } };
}

const user = (v: Visit, session: SessionRecord = v.session!) => ({ email: v.account!.email, csrf: session.csrf });

async function home(ctx: DashboardContext, v: Visit, status: number, over: Partial<HomeView> & { account?: AccountDetail; session?: SessionRecord } = {}): Promise<number> {
  const account = over.account ?? v.account!;
  const view: HomeView = {
    user: user(v, over.session),
    account,
    usage: await ctx.usage.of(account),
    shownKey: over.shownKey ?? null,
    info: over.info ?? null,
    keyError: over.keyError ?? null,
  };
  return sendPage(v, status, homePage(view), status === 429 ? RETRY_AFTER : undefined);
}

async function login(v: Visit, ctx: DashboardContext, status: number, email: string, error: string | null, info: string | null = null): Promise<number> {
  const form = await formToken(ctx, v);
  return sendPage(v, status, loginPage({ csrf: form.token, signupOpen: ctx.signup === 'open', email, error, info }), { ...form.cookies, ...(status === 429 ? RETRY_AFTER : {}) });
}

async function signup(ctx: DashboardContext, v: Visit, status: number, email: string, error: string | null): Promise<number> {
  const form = await formToken(ctx, v);
  return sendPage(v, status, signupPage({ csrf: form.token, email, error }), form.cookies);
}

/** Starts a session with a new id (ASVS 7.2.4), ends the one the browser held, and lands on /dashboard (CONTRACT 8). */
async function signIn(ctx: DashboardContext, v: Visit, account: AccountDetail): Promise<number> {
  await ctx.sessionsOf.endToken(v.token);
  const { token } = await ctx.sessionsOf.start(account.id);
  return seeOther(v, '/dashboard', [setCookie(SESSION_COOKIE, token), clearCookie(FORM_COOKIE)]);
}

const loginAction: Action = {
  signedIn: false,
  async get(ctx, v) {
    if (v.session) return seeOther(v, '/dashboard');
    const info = v.query.has('ended') ? 'Your session has ended. Log in again.' : v.query.has('out') ? 'You are logged out.' : null;
    return login(v, ctx, 200, '', null, info);
  },
  async post(ctx, v) {
    const email = field(v.fields, 'email');
    const password = field(v.fields, 'password');
    const who = { requestId: v.requestId, email: loggable(email), client: v.address };
    if (!(await ctx.logins.reserve(email, v.address))) {
      ctx.log.warn('dashboard login throttled', who);
      return login(v, ctx, 429, email, THROTTLED);
    }
    const account = await ctx.accounts.authenticate(email, password);
    if (account === null) {
      ctx.log.warn('dashboard login failed', who);
      // One answer for an unknown email and a wrong password (CONTRACT 8), after the same scrypt work.
      return login(v, ctx, 400, email, 'The email or the password is not right.');
    }
    await ctx.logins.succeeded(email, v.address);
    ctx.log.info('dashboard login', { ...who, account: account.id });
    return signIn(ctx, v, account);
  },
};

/** One 429 for both sign-up limits, per address and per existing email, so it does not tell which. */
function signupThrottled(v: Visit): number {
  return sendPage(v, 429, messagePage('Too many sign-ups', 'Too many sign-ups came from your network, or named this email, in the last hour. Try again later.', null, { href: '/dashboard/login', text: 'Log in' }), RETRY_AFTER);
}

const signupAction: Action = {
  signedIn: false,
  async get(ctx, v) {
    if (ctx.signup === 'closed') return sendPage(v, 403, signupClosedPage(ctx.operatorEmail));
    if (v.session) return seeOther(v, '/dashboard');
    return signup(ctx, v, 200, '', null);
  },
  async post(ctx, v) {
    if (ctx.signup === 'closed') return sendPage(v, 403, signupClosedPage(ctx.operatorEmail));
    const email = field(v.fields, 'email');
    const password = field(v.fields, 'password');
    if (!(await ctx.logins.signupAllowed(v.address))) {
      ctx.log.warn('dashboard sign-up throttled', { requestId: v.requestId, client: v.address });
      return signupThrottled(v);
    }
    if (!validNewEmail(email)) return signup(ctx, v, 400, email, 'Enter your email address, like name@example.com.');
    const problem = passwordProblem(password, email);
    if (problem !== null) return signup(ctx, v, 400, email, problem);
    let account: AccountDetail;
    try {
      account = await ctx.accounts.register({ email, plan: 'free', password });
    } catch (err) {
      if (!(err instanceof AccountError && err.code === 'EMAIL_TAKEN')) throw err;
      // A security event: whoever asks learns that the email has an account (README "Dashboard").
      const allowed = await ctx.logins.takenEmailAllowed(email);
      ctx.log.warn('dashboard sign-up named an existing account', { requestId: v.requestId, email: loggable(email), client: v.address, throttled: !allowed });
      if (!allowed) return signupThrottled(v);
      return signup(ctx, v, 400, email, 'An account with this email already exists. Log in instead.');
    }
    ctx.log.info('dashboard sign-up', { requestId: v.requestId, account: account.id, email: account.email, plan: account.plan, client: v.address });
    return signIn(ctx, v, account);
  },
};

const homeAction: Action = {
  signedIn: true,
  get: (ctx, v) => home(ctx, v, 200, { info: DONE[v.query.get('done') ?? ''] ?? null }),
};

const logoutAction: Action = {
  signedIn: true,
  async post(ctx, v) {
    await ctx.sessionsOf.end(v.session!); // ASVS 7.4.1: gone on the server, not only in the browser
    ctx.log.info('dashboard logout', { requestId: v.requestId, account: v.account!.id, client: v.address });
    return seeOther(v, '/dashboard/login?out=1', [clearCookie(SESSION_COOKIE)]);
  },
};

/** Generate, reveal and rotate: the password again (the key is sealed under it), then the key, once. */
function keyAction(kind: 'generated' | 'revealed' | 'rotated'): Action {
  return {
    signedIn: true,
    async post(ctx, v) {
      const account = v.account!;
      const password = field(v.fields, 'password');
      const who = { requestId: v.requestId, account: account.id, email: account.email, client: v.address };
      if (!(await ctx.logins.reserve(account.email, v.address))) {
        ctx.log.warn('dashboard password check throttled', who);
        return home(ctx, v, 429, { keyError: THROTTLED });
      }
      let issued;
      try {
        if (kind === 'generated') issued = await ctx.accounts.createKey(account.email, password);
        else if (kind === 'revealed') issued = await ctx.accounts.revealKey(account.email, password);
        else issued = await ctx.accounts.rotateKey(account.email, password);
      } catch (err) {
        if (!(err instanceof AccountError)) throw err;
        if (err.code === 'WRONG_PASSWORD') {
          ctx.log.warn(`dashboard key not ${kind}: wrong password`, who);
          return home(ctx, v, 400, { keyError: password === '' ? 'Enter your password.' : 'That password is not right.' });
        }
        if (err.code === 'KEY_ACTIVE' || err.code === 'NO_KEY') {
          await ctx.logins.succeeded(account.email, v.address); // the password was right
          return seeOther(v, '/dashboard'); // sent twice, or changed elsewhere
        }
        throw err;
      }
      await ctx.logins.succeeded(account.email, v.address);
      // A reload that re-posts this form now fails the CSRF check: the key is never shown twice.
      const session = await ctx.sessionsOf.renewCsrf(v.session!);
      const fresh = (await ctx.accounts.get(account.id)) ?? account;
      ctx.log.info(`dashboard key ${kind}`, { ...who, prefix: fresh.key?.prefix ?? null });
      return home(ctx, v, 200, { account: fresh, session, shownKey: { key: issued.key, made: kind !== 'revealed' } });
    },
  };
}

const revokeAction: Action = {
  signedIn: true,
  async post(ctx, v) {
    const account = v.account!;
    try {
      const revoked = await ctx.accounts.revokeKey(account.email);
      ctx.log.info('dashboard key revoked', { requestId: v.requestId, account: account.id, email: account.email, prefix: revoked.prefix, client: v.address });
    } catch (err) {
      if (!(err instanceof AccountError && err.code === 'NO_KEY')) throw err;
    }
    return seeOther(v, '/dashboard?done=revoked');
  },
};

const passwordAction: Action = {
  signedIn: true,
  get: async (_ctx, v) => sendPage(v, 200, passwordPage({ user: user(v), error: null })),
  async post(ctx, v) {
    const account = v.account!;
    const current = field(v.fields, 'current');
    const next = field(v.fields, 'password');
    const who = { requestId: v.requestId, account: account.id, email: account.email, client: v.address };
    const again = (status: number, f: 'current' | 'new', text: string, extra?: Record<string, string>) =>
      sendPage(v, status, passwordPage({ user: user(v), error: { field: f, text } }), extra);
    // The new password's rules first: they hash nothing, so they cost no password check.
    const problem = passwordProblem(next, account.email);
    if (problem !== null) return again(400, 'new', problem);
    if (!(await ctx.logins.reserve(account.email, v.address))) {
      ctx.log.warn('dashboard password check throttled', who);
      return again(429, 'current', THROTTLED, RETRY_AFTER);
    }
    try {
      await ctx.accounts.setPassword(account.email, current, next);
    } catch (err) {
      if (!(err instanceof AccountError && err.code === 'WRONG_PASSWORD')) throw err;
      ctx.log.warn('dashboard password not changed: wrong current password', who);
      return again(400, 'current', 'That is not your current password.');
    }
    await ctx.logins.succeeded(account.email, v.address);
    // ASVS 7.4.3: every other session ends; this one stays.
    const ended = await ctx.sessionsOf.endOthers(v.session!);
    ctx.log.info('dashboard password changed', { ...who, sessionsEnded: ended });
    return seeOther(v, '/dashboard?done=password');
  },
};

const upgradeAction: Action = {
  signedIn: true,
  async get(ctx, v) {
    const plan = v.query.get('plan');
    if (!isPlan(plan)) return seeOther(v, '/dashboard');
    return sendPage(v, 200, upgradePage({ user: user(v), plan, operatorEmail: ctx.operatorEmail }));
  },
  async post(ctx, v) {
    const account = v.account!;
    const wanted = field(v.fields, 'plan');
    if (!isPlan(wanted) || PLANS.indexOf(wanted) <= PLANS.indexOf(account.plan)) {
      return sendPage(v, 400, messagePage('Choose a higher plan', 'An upgrade goes to a plan above the one you have.', user(v)));
    }
    // The operator reads this line (SPEC 8: upgrades are requested from the operator); the next page offers a mail too.
    ctx.log.info('dashboard upgrade requested', { requestId: v.requestId, account: account.id, email: account.email, plan: account.plan, wanted, operator: ctx.operatorEmail });
    return seeOther(v, `/dashboard/upgrade?plan=${wanted}`);
  },
};

export const ACTIONS: ReadonlyMap<string, Action> = new Map([
  ['/dashboard', homeAction],
  ['/dashboard/login', loginAction],
  ['/dashboard/signup', signupAction],
  ['/dashboard/logout', logoutAction],
  ['/dashboard/key/generate', keyAction('generated')],
  ['/dashboard/key/reveal', keyAction('revealed')],
  ['/dashboard/key/rotate', keyAction('rotated')],
  ['/dashboard/key/revoke', revokeAction],
  ['/dashboard/password', passwordAction],
  ['/dashboard/upgrade', upgradeAction],
]);
