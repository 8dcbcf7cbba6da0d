// What a --redis-url names (CONTRACT 9): one Redis, a Redis Cluster, or a primary that Redis Sentinel
// manages, with TLS and ACL credentials alike. Parsed by hand for the two multi-host forms: a list of
// host:port pairs is not a URL host that node:url accepts ("h1:7000,h2:7001" reads as a bad port).

/** One address of a list: a cluster's seed nodes, or the sentinels. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

export type RedisTarget =
  /** redis:// or rediss://: handed to node-redis's createClient as written. */
  | { readonly mode: 'single'; readonly url: string }
  | {
      readonly mode: 'cluster' | 'sentinel';
      readonly tls: boolean;
      /** Seed nodes (cluster: any of them tells the client the rest) or the sentinels. */
      readonly nodes: readonly RedisNode[];
      /** The primary's name in the sentinels' configuration; '' for a cluster. */
      readonly name: string;
      /** ACL user and password of the data nodes (not of the sentinels), percent-decoded. */
      readonly username: string | undefined;
      readonly password: string | undefined;
    };

export type RedisMode = RedisTarget['mode'];

export const REDIS_URL_FORMS =
  'redis://[user:password@]host:port[/db], redis+cluster://[user:password@]host:port[,host:port...], ' +
  'redis+sentinel://[user:password@]host:port[,host:port...]/master-name (rediss... for TLS)';

/** A URL that names no deployment; the message says what was expected. */
export class RedisUrlError extends Error {
  constructor(message: string) {
    super(`${message} (expected ${REDIS_URL_FORMS})`);
    this.name = 'RedisUrlError';
  }
}

const MULTI = /^(rediss?)\+(cluster|sentinel):\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/i;
/** Default ports: Redis's for cluster nodes, Sentinel's for sentinels. */
const DEFAULT_PORT = { cluster: 6379, sentinel: 26379 } as const;

export function parseRedisUrl(value: string): RedisTarget {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') {
    try {
      new URL(value);
    } catch {
      throw new RedisUrlError(`not a URL: ${JSON.stringify(redactUrl(value))}`);
    }
    return { mode: 'single', url: value };
  }
  const m = MULTI.exec(value);
  if (!m) {
    if (scheme && /^rediss?\+/.test(scheme)) throw new RedisUrlError(`unknown kind of Redis deployment "${scheme}://"`);
    throw new RedisUrlError(scheme ? `not a Redis URL: ${scheme}://` : `not a URL: ${JSON.stringify(redactUrl(value))}`);
  }
  const tls = m[1]!.toLowerCase() === 'rediss';
  const mode = m[2]!.toLowerCase() as 'cluster' | 'sentinel';
  const [authority, path = '', query, fragment] = [m[3]!, m[4], m[5], m[6]];
  if (query || fragment) throw new RedisUrlError(`${mode} URL: no ?query or #fragment is understood`);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? null : authority.slice(0, at);
  const hosts = authority.slice(at + 1);
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== null) {
    const colon = userinfo.indexOf(':');
    username = decode(colon < 0 ? userinfo : userinfo.slice(0, colon)) || undefined;
    password = colon < 0 ? undefined : decode(userinfo.slice(colon + 1));
  }
  if (hosts === '') throw new RedisUrlError(`${mode} URL: no host:port given`);
  const nodes = hosts.split(',').map((h) => node(h, DEFAULT_PORT[mode], mode));
  let name = '';
  if (mode === 'cluster') {
    // A cluster has database 0 only (SELECT is refused there), so a path can only be a mistake.
    if (path !== '' && path !== '/') throw new RedisUrlError(`cluster URL: no path is understood (a cluster has database 0 only), got "${path}"`);
  } else {
    name = decode(path.slice(1));
    if (name === '' || name.includes('/')) throw new RedisUrlError(`sentinel URL: the path must be the primary's name as the sentinels know it (/mymaster), got "${path}"`);
  }
  return { mode, tls, nodes, name, username, password };
}

function node(text: string, defaultPort: number, mode: string): RedisNode {
  // [v6]:port, or host:port, or host alone.
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d*))?$/i.exec(text);
  if (!m) throw new RedisUrlError(`${mode} URL: "${text}" is not host:port`);
  const host = m[1] ?? m[2]!;
  const port = m[3] === undefined || m[3] === '' ? defaultPort : Number(m[3]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RedisUrlError(`${mode} URL: port of "${text}" must be 1-65535`);
  return { host, port };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new RedisUrlError(`bad percent-encoding in the credentials`);
  }
}

/** A URL for logs and errors: the password replaced, in every form. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/** The address list of a target, for logs: never the credentials. */
export function describeTarget(target: RedisTarget): string {
  if (target.mode === 'single') return redactUrl(target.url);
  const scheme = `${target.tls ? 'rediss' : 'redis'}+${target.mode}`;
  return `${scheme}://${target.nodes.map(nodeAddress).join(',')}${target.name ? `/${target.name}` : ''}`;
}

export const nodeAddress = (n: RedisNode) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`);
