// The routes, matched by hand on the path (no regex per request): the ten resource endpoints of
// SPEC 4, plus the few that need no key, and the dashboard's pages.
import { SLUG } from '../resources/patterns.ts';
import { COLLECTIONS, type CollectionName } from '../resources/types.ts';

export type Route =
  | { readonly kind: 'list'; readonly collection: CollectionName }
  | { readonly kind: 'detail'; readonly collection: CollectionName; readonly slug: string }
  | { readonly kind: 'openapi' }
  | { readonly kind: 'healthz' }
  | { readonly kind: 'metrics' }
  | { readonly kind: 'dashboard' }
  | { readonly kind: 'api-unknown' }
  | { readonly kind: 'unknown' };

const API = '/api/v1/';
const LISTS = new Map<string, Route>(COLLECTIONS.map((c) => [c, { kind: 'list', collection: c }]));
/** The collections and their list routes, in an array: matched in place, without a slice or a hash per request. */
const LIST_ROUTES = COLLECTIONS.map((c) => ({ name: c, route: LISTS.get(c)! }));
const OPENAPI_PATH = '/api/v1/openapi.json';
const UNKNOWN: Route = { kind: 'unknown' };
const API_UNKNOWN: Route = { kind: 'api-unknown' };
const DASHBOARD: Route = { kind: 'dashboard' };
const FIXED = new Map<string, Route>([
  ['/api/v1/openapi.json', { kind: 'openapi' }],
  ['/healthz', { kind: 'healthz' }],
  ['/metrics', { kind: 'metrics' }],
]);

/**
 * Matches a path (the request target before '?'). Anything under /api/ that is not a route is
 * `api-unknown`: it still passes the key and quota checks before its 404 (CONTRACT 2 order).
 * Slugs are matched as they are: a slug is [a-z0-9-], so an encoded or traversing segment never is one.
 */
export function route(path: string): Route {
  // A client asks for the same path again and again: the last path's route is kept (a compare of a
  // new string with the last: 10-15 ns, against 80 for a list matched and 150 for a detail, whose
  // route is a new object each time). A route depends on its path alone.
  if (path === lastPath) return lastRoute;
  lastRoute = matched(path);
  lastPath = path;
  return lastRoute;
}
let lastPath = '';
let lastRoute: Route = { kind: 'unknown' };

function matched(path: string): Route {
  if (path.startsWith(API)) {
    // Almost every request: a list or a detail, matched where it lies in the path.
    for (let i = 0; i < LIST_ROUTES.length; i++) {
      const { name, route: list } = LIST_ROUTES[i]!;
      if (!path.startsWith(name, API.length)) continue;
      const end = API.length + name.length;
      if (path.length === end) return list;
      if (path.charCodeAt(end) !== 47 /* / */) continue;
      const slug = path.slice(end + 1);
      return SLUG.test(slug) ? { kind: 'detail', collection: name, slug } : API_UNKNOWN;
    }
    return path === OPENAPI_PATH ? FIXED.get(path)! : API_UNKNOWN;
  }
  const fixed = FIXED.get(path);
  if (fixed !== undefined) return fixed;
  // The customer dashboard (CONTRACT 8): its own pipeline in src/dashboard/, never a key or a quota.
  if (path === '/dashboard' || path.startsWith('/dashboard/')) return DASHBOARD;
  if (!path.startsWith(API)) return path.startsWith('/api/') || path === '/api' ? API_UNKNOWN : UNKNOWN;
  const rest = path.slice(API.length);
  const slash = rest.indexOf('/');
  if (slash === -1) return LISTS.get(rest) ?? API_UNKNOWN;
  const list = LISTS.get(rest.slice(0, slash));
  const slug = rest.slice(slash + 1);
  if (list === undefined || list.kind !== 'list' || !SLUG.test(slug)) return API_UNKNOWN;
  return { kind: 'detail', collection: list.collection, slug };
}
