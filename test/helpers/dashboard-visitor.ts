// A browser stand-in for black-box dashboard tests: a cookie jar, forms posted with the page's CSRF
// token, and a chosen client address (127.0.0.x) so throttling per address can be seen.
import http from 'node:http';
import https from 'node:https';

export interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly cookies: readonly string[];
  readonly text: string;
}

const KEY = /cel_[0-9A-Za-z]{38}/;

export class Visitor {
  /** name -> value, as a browser would send them back. */
  readonly jar = new Map<string, string>();
  /** The last page received: forms take their CSRF token from it. */
  last: Reply | null = null;

  constructor(
    readonly base: string,
    readonly options: { localAddress?: string; ca?: Buffer } = {},
  ) {}

  get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send('GET', path, null, headers);
  }

  /** Posts a form; `csrf` is added from the last page unless given (pass null to leave it out). */
  post(path: string, fields: Record<string, string | null>, headers: Record<string, string> = {}): Promise<Reply> {
    const form = new URLSearchParams();
    const all = { csrf: this.csrf(), ...fields };
    for (const [k, v] of Object.entries(all)) if (v !== null && v !== undefined) form.set(k, v);
    return this.send('POST', path, form.toString(), { 'content-type': 'application/x-www-form-urlencoded', ...headers });
  }

  /** The CSRF token of the last page's first form, or undefined. */
  csrf(): string | undefined {
    return this.last?.text.match(/name="csrf" value="([^"]+)"/)?.[1];
  }

  /** The key shown on the last page, or null. */
  shownKey(): string | null {
    return this.last?.text.match(KEY)?.[0] ?? null;
  }

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  send(method: string, path: string, body: string | null, headers: Record<string, string> = {}): Promise<Reply> {
    const url = new URL(path, this.base);
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method,
          headers: { ...(cookie ? { cookie } : {}), ...(body !== null ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers },
          ...(this.options.localAddress ? { localAddress: this.options.localAddress } : {}),
          ...(this.options.ca ? { ca: this.options.ca } : {}),
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const cookies = res.headers['set-cookie'] ?? [];
            for (const c of cookies) {
              const [pair = '', ...attrs] = c.split(';');
              const eq = pair.indexOf('=');
              const name = pair.slice(0, eq).trim();
              if (attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.jar.delete(name);
              else this.jar.set(name, pair.slice(eq + 1).trim());
            }
            const reply = { status: res.statusCode!, headers: res.headers, cookies, text: Buffer.concat(chunks).toString('utf8') };
            if (reply.status === 200 || reply.status >= 400) this.last = reply;
            resolve(reply);
          });
        },
      );
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  }

  /** Sign-up form: GET for the token, then POST. */
  async signUp(email: string, password: string): Promise<Reply> {
    await this.get('/dashboard/signup');
    return this.post('/dashboard/signup', { email, password });
  }

  async logIn(email: string, password: string): Promise<Reply> {
    await this.get('/dashboard/login');
    return this.post('/dashboard/login', { email, password });
  }

  /** A key action from the dashboard page: returns the key shown, or null. */
  async key(action: 'generate' | 'reveal' | 'rotate', password: string): Promise<string | null> {
    await this.get('/dashboard');
    await this.post(`/dashboard/key/${action}`, { password });
    return this.shownKey();
  }
}
