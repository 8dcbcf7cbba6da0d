// The dashboard's own pipeline under /dashboard (CONTRACT 8): transport, route and method, session,
// then for a form its body and CSRF check, then the page or action (src/dashboard/actions.ts).
// It talks only to the store interface and the usage service, so it runs on every store.
import type { IncomingMessage } from 'node:http';
import { clientAddress } from '../access/client-address.ts';
import type { AccountDetail, AccountService } from '../access/types.ts';
import type { SignupMode } from '../config.ts';
import type { MountedSite } from '../http/mounted.ts';
import type { Logger } from '../log.ts';
import type { UsageService } from '../quota/usage-service.ts';
import { StoreUnavailableError, type SessionRecord, type SessionStore, type ThrottleStore } from '../store/types.ts';
import { ACTIONS } from './actions.ts';
import { ASSETS } from './assets.ts';
import { readForm } from './form.ts';
import { LoginThrottle } from './login-throttle.ts';
import type { DashboardOptions } from './options.ts';
import { messagePage } from './pages.ts';
import { sendAsset, sendPage, seeOther, type Exchange } from './respond-page.ts';
import { clearCookie, FORM_COOKIE, readCookie, sameToken, SESSION_COOKIE, Sessions } from './session.ts';

export interface DashboardDeps {
  readonly accounts: AccountService;
  readonly sessions: SessionStore;
  readonly throttle: ThrottleStore;
  readonly usage: UsageService;
  readonly clock: () => number;
  readonly log: Logger;
  readonly trustProxy: boolean;
}

/** One request as the actions see it. */
export interface Visit extends Exchange {
  readonly query: URLSearchParams;
  /** The client's address, for login throttling and the log. */
  readonly address: string;
  /** The cookie value the browser sent, valid or not. */
  readonly token: string | null;
  readonly session: SessionRecord | null;
  readonly account: AccountDetail | null;
  /** The submitted form (POST only). */
  readonly fields: URLSearchParams;
}

/** What an action reaches: the dependencies, the options and the session and throttle helpers. */
export interface DashboardContext extends DashboardDeps {
  readonly signup: SignupMode;
  readonly operatorEmail: string | null;
  readonly sessionsOf: Sessions;
  readonly logins: LoginThrottle;
}

/** Mounted by the API pipeline under /dashboard. */
export type Dashboard = MountedSite;

// Browsers accept Secure (and so __Host-) cookies over plain HTTP from loopback hosts only.
const LOOPBACK = /^(?:localhost|[a-z0-9.-]+\.localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;
const EMPTY = new URLSearchParams();

export function createDashboard(deps: DashboardDeps, options: DashboardOptions = {}): Dashboard {
  const ctx: DashboardContext = {
    ...deps,
    signup: options.signup ?? 'closed',
    operatorEmail: options.operatorEmail ?? null,
    sessionsOf: new Sessions(deps.sessions, deps.clock),
    logins: new LoginThrottle(deps.throttle, deps.clock),
  };

  async function run(x: Exchange): Promise<number> {
    const { req, path } = x;
    if (!x.secure && !LOOPBACK.test(req.headers.host ?? '')) {
      return sendPage(x, 403, messagePage('HTTPS required', 'The dashboard carries passwords and keys, so it is served over HTTPS only (plain HTTP only to this machine, as localhost).', null));
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const asset = ASSETS.get(path);
    if (asset !== undefined) return method === 'GET' ? sendAsset(x, asset) : notAllowed(x, 'GET, HEAD');
    const action = ACTIONS.get(path);
    if (action === undefined) return sendPage(x, 404, messagePage('Page not found', 'There is no dashboard page at this address.', null));
    const handler = method === 'GET' ? action.get : method === 'POST' ? action.post : undefined;
    if (handler === undefined) return notAllowed(x, action.get ? (action.post ? 'GET, HEAD, POST' : 'GET, HEAD') : 'POST');
    const token = readCookie(req, SESSION_COOKIE);
    let session = await ctx.sessionsOf.resume(token);
    const account = session === null ? null : await ctx.accounts.get(session.account);
    if (session !== null && account === null) {
      await ctx.sessionsOf.end(session); // the account is gone
      session = null;
    }
    if (action.signedIn && session === null) {
      // Never a state change without a live session; a browser that held an ended one is told so.
      const cookies = token === null ? [] : [clearCookie(SESSION_COOKIE)];
      return seeOther(x, token === null ? '/dashboard/login' : '/dashboard/login?ended=1', cookies);
    }
    let fields = EMPTY;
    if (method === 'POST') {
      const form = await readForm(req);
      if (!form.ok) return sendPage(x, form.status, messagePage('Form not accepted', 'The form could not be read. Go back and send it again.', null));
      fields = form.fields;
      // Signed-in forms carry the session's token; the login and sign-up forms the form cookie's.
      const expected = action.signedIn ? session!.csrf : await ctx.sessionsOf.formCsrf(readCookie(req, FORM_COOKIE));
      if (!sameOrigin(req, x.secure) || expected === null || !sameToken(fields.get('csrf'), expected)) {
        deps.log.warn('dashboard form refused: CSRF check failed', { requestId: x.requestId, path, client: clientAddress(req, deps.trustProxy) });
        return sendPage(x, 403, messagePage('This form has expired', 'The form was sent twice, was open from before a login or logout, or came from another site. Nothing was changed. Open the page again and retry.', null));
      }
    }
    const visit: Visit = { ...x, query: new URLSearchParams(x.search), address: clientAddress(req, deps.trustProxy), token, session, account, fields };
    return handler(ctx, visit);
  }

  return {
    async handle(req, res, arrival) {
      const x: Exchange = { ...arrival, req, res };
      const { requestId } = arrival;
      try {
        return await run(x);
      } catch (err) {
        if (err instanceof StoreUnavailableError && !res.headersSent) {
          // The shared store (CONTRACT 9) did not answer: nothing was changed, and it clears by itself.
          deps.log.warn('dashboard request failed: store unavailable', { requestId, error: err.message });
          return sendPage(x, 503, messagePage('Try again in a moment', 'The server cannot reach its account store just now. Nothing was changed.', null), { 'Retry-After': '1' });
        }
        deps.log.error('dashboard request failed', { requestId, error: (err as Error).stack ?? String(err) });
        if (res.headersSent) {
          res.destroy();
          return 500;
        }
        return sendPage(x, 500, messagePage('Something went wrong', `The server could not complete this request (reference ${requestId}). Nothing secret was lost; try again in a moment.`, null));
      }
    },
  };
}

function notAllowed(x: Exchange, allow: string): number {
  return sendPage(x, 405, messagePage('Not allowed', 'This address does not take that kind of request.', null), { Allow: allow });
}

/**
 * A second line behind the token (ASVS 3.5.1): what the browser says of the form's origin. Every
 * current browser sends Sec-Fetch-Site; Origin alone is compared with the host the request names:
 * Host on HTTP/1.1, :authority on HTTP/2 (RFC 9113 8.3.1: a request there may carry no Host at all).
 * A request with an Origin and neither cannot show that it comes from us, and is refused. The scheme
 * counts too: a page of ours over plain HTTP is not the origin of a form sent over HTTPS.
 */
function sameOrigin(req: IncomingMessage, secure: boolean): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none';
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return true;
  if (origin === 'null') return false;
  const host = req.headers.host ?? req.headers[':authority'];
  return typeof host === 'string' && origin === `${secure ? 'https' : 'http'}://${host}`;
}
