// The dashboard's security rules (CONTRACT 8, OWASP ASVS 5.0), each shown over HTTP: cookie flags and
// prefix, id rotation at login, idle and absolute expiry under the injected clock, logout and password
// change ending sessions on the server, CSRF, no state change on GET, login throttling that never locks
// the owner out, one answer for unknown email and wrong password, the password rules, the headers, the log.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../../src/index.ts';
import { CSP } from '../../src/dashboard/respond-page.ts';
import { captureLog } from '../helpers/state.ts';
import { Visitor } from '../helpers/dashboard-visitor.ts';
import { fixture } from '../helpers/fixture.ts';
import { rawExchange } from '../helpers/raw-http.ts';

const PW = 'purple elephant tuesday';
const COOKIE = /^__Host-celebrity-session=([A-Za-z0-9_-]{43}); Path=\/; Secure; HttpOnly; SameSite=Strict$/;
const MIN = 60_000;

let server: RunningServer;
const log = captureLog();
let people = 0;
const email = () => `sec${++people}@example.com`;
// Sign-ups are limited per address (10 an hour): each visitor comes from its own 127.0.1.x unless told.
let addresses = 0;
const visitor = (localAddress = `127.0.1.${(++addresses % 250) + 1}`) => new Visitor(server.url, { localAddress });
const api = (key: string) => fetch(`${server.url}/api/v1/news`, { headers: { 'x-api-key': key } }).then((r) => r.status);

/** A signed-up visitor with a key. */
async function customer(address?: string): Promise<{ v: Visitor; email: string; key: string }> {
  const v = visitor(address);
  const e = email();
  assert.equal((await v.signUp(e, PW)).status, 303);
  const key = await v.key('generate', PW);
  assert.ok(key);
  return { v, email: e, key };
}

before(async () => {
  server = await startServer({ data: fixture(), log, dashboard: { signup: 'open', operatorEmail: 'ops@example.com' } });
});
after(() => server.close());

describe('sessions (ASVS 3.3.1-3.3.4, 7.2.3, 7.2.4, 7.3, 7.4)', () => {
  it('cookie: __Host- prefix, Secure, HttpOnly, SameSite=Strict, Path=/, no Domain; 256 random bits, unique', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const reply = await visitor().signUp(email(), PW);
      const set = reply.cookies.find((c) => c.startsWith('__Host-celebrity-session='))!;
      const token = set.match(COOKIE)?.[1];
      assert.ok(token, `${set} has every flag and nothing else`);
      assert.equal(Buffer.from(token, 'base64url').length, 32, '256 bits from the CSPRNG (ASVS asks at least 128)');
      tokens.add(token);
    }
    assert.equal(tokens.size, 3);
  });

  it('login gives a new id; the id held before it no longer works (ASVS 7.2.4)', async () => {
    const { v, email: e } = await customer();
    const before = v.cookie('__Host-celebrity-session')!;
    v.jar.delete('__Host-celebrity-session'); // a login form opened in another tab
    await v.get('/dashboard/login');
    v.jar.set('__Host-celebrity-session', before);
    const reply = await v.post('/dashboard/login', { email: e, password: PW });
    assert.equal(reply.status, 303);
    const after = v.cookie('__Host-celebrity-session')!;
    assert.notEqual(after, before);
    const old = visitor();
    old.jar.set('__Host-celebrity-session', before);
    assert.equal((await old.get('/dashboard')).headers.location, '/dashboard/login?ended=1');
    assert.equal((await v.get('/dashboard')).status, 200);
  });

  it('idle: 30 minutes without a request end the session; requests keep it alive (ASVS 7.3.1)', async () => {
    const { v } = await customer();
    server.clock.advance(20 * MIN);
    assert.equal((await v.get('/dashboard')).status, 200);
    server.clock.advance(25 * MIN);
    assert.equal((await v.get('/dashboard')).status, 200, '45 minutes old, 25 idle');
    server.clock.advance(30 * MIN);
    const ended = await v.get('/dashboard');
    assert.equal(ended.status, 303);
    assert.equal(ended.headers.location, '/dashboard/login?ended=1');
    assert.ok(ended.cookies.some((c) => c.startsWith('__Host-celebrity-session=;') && c.includes('Max-Age=0')));
    server.clock.reset();
  });

  it('absolute: 12 hours after login the session ends however busy it is (ASVS 7.3.2)', async () => {
    const { v } = await customer();
    for (let t = 20; t < 12 * 60; t += 20) {
      server.clock.advance(20 * MIN);
      assert.equal((await v.get('/dashboard')).status, 200, `${t} minutes in`);
    }
    server.clock.advance(20 * MIN);
    assert.equal((await v.get('/dashboard')).headers.location, '/dashboard/login?ended=1');
    server.clock.reset();
  });

  it('logout ends the session on the server: the old cookie replayed gets nothing (ASVS 7.4.1)', async () => {
    const { v } = await customer();
    const token = v.cookie('__Host-celebrity-session')!;
    await v.get('/dashboard');
    const out = await v.post('/dashboard/logout', {});
    assert.equal(out.status, 303);
    assert.equal(out.headers.location, '/dashboard/login?out=1');
    const replay = visitor();
    replay.jar.set('__Host-celebrity-session', token);
    assert.equal((await replay.get('/dashboard')).status, 303);
  });

  it('a password change ends every other session and keeps this one; the key survives it (ASVS 7.4.3)', async () => {
    const { v: a, email: e, key } = await customer();
    const b = visitor();
    assert.equal((await b.logIn(e, PW)).status, 303);
    await a.get('/dashboard/password');
    const changed = await a.post('/dashboard/password', { current: PW, password: 'a brand new passphrase' });
    assert.equal(changed.status, 303);
    assert.equal(changed.headers.location, '/dashboard?done=password');
    assert.equal((await b.get('/dashboard')).headers.location, '/dashboard/login?ended=1');
    assert.equal((await a.get('/dashboard')).status, 200);
    assert.equal(await a.key('reveal', 'a brand new passphrase'), key);
    assert.equal((await visitor().logIn(e, PW)).status, 400, 'the old password no longer logs in');
  });
});

describe('forms (ASVS 3.5.1, 3.5.3)', () => {
  it('CSRF: no token, a wrong one, a cross-site form or a foreign Origin change nothing (403)', async () => {
    const { v, key } = await customer();
    await v.get('/dashboard');
    for (const [fields, headers] of [
      [{ csrf: null }, {}],
      [{ csrf: 'x'.repeat(43) }, {}],
      [{}, { 'sec-fetch-site': 'cross-site' }],
      [{}, { origin: 'https://evil.example' }],
      [{}, { origin: 'null' }],
    ] as const) {
      const reply = await v.post('/dashboard/key/revoke', fields, headers);
      assert.equal(reply.status, 403, JSON.stringify({ fields, headers }));
      assert.equal(await api(key), 200, 'the key still works');
    }
    await v.get('/dashboard');
    assert.equal((await v.post('/dashboard/key/revoke', {}, { 'sec-fetch-site': 'same-origin' })).status, 303);
    assert.equal(await api(key), 401);
  });

  it('login CSRF: the login and sign-up forms need their double-submit cookie', async () => {
    const v = visitor();
    await v.get('/dashboard/login');
    const token = v.csrf()!;
    v.jar.delete('__Host-celebrity-form');
    assert.equal((await v.post('/dashboard/login', { csrf: token, email: 'a@b.io', password: PW })).status, 403);
    assert.equal((await v.post('/dashboard/signup', { csrf: token, email: 'a@b.io', password: PW })).status, 403);
  });

  it('login CSRF: a form cookie and token pair the client makes up is refused; the pair the server gave works', async () => {
    const { email: owner } = await customer();
    for (const made of ['x', 'A'.repeat(43)]) {
      const v = visitor();
      v.jar.set('__Host-celebrity-form', made);
      assert.equal((await v.post('/dashboard/login', { csrf: made, email: owner, password: PW })).status, 403, made);
      assert.equal((await v.post('/dashboard/signup', { csrf: made, email: email(), password: PW })).status, 403, made);
    }
    const v = visitor();
    await v.get('/dashboard/login');
    assert.notEqual(v.csrf(), v.cookie('__Host-celebrity-form'), 'the form carries a token bound to the cookie, not the cookie');
    assert.equal((await v.post('/dashboard/login', { email: owner, password: PW })).status, 303);
  });

  it('GET never changes state: logout, key and password addresses answer 405 Allow: POST', async () => {
    const { v, key } = await customer();
    for (const path of ['/dashboard/logout', '/dashboard/key/revoke', '/dashboard/key/rotate', '/dashboard/key/generate', '/dashboard/key/reveal']) {
      const reply = await v.get(path);
      assert.equal(reply.status, 405, path);
      assert.equal(reply.headers.allow, 'POST');
    }
    assert.equal(await api(key), 200);
    assert.equal((await v.get('/dashboard')).status, 200, 'still logged in');
    assert.equal((await v.send('PUT', '/dashboard/password', '')).headers.allow, 'GET, HEAD, POST');
  });

  it('a key is shown only in the answer to its POST; re-sending that form (a reload) shows nothing', async () => {
    const { v, key } = await customer();
    await v.get('/dashboard');
    const token = v.csrf()!;
    await v.post('/dashboard/key/reveal', { password: PW });
    assert.equal(v.shownKey(), key);
    const again = await v.post('/dashboard/key/reveal', { csrf: token, password: PW });
    assert.equal(again.status, 403);
    assert.doesNotMatch(again.text, /cel_/);
    assert.doesNotMatch((await v.get('/dashboard')).text, /cel_[0-9A-Za-z]{38}/);
  });

  it('a form too large (413) or of another type (415) is refused unread', async () => {
    const { v } = await customer();
    await v.get('/dashboard');
    assert.equal((await v.post('/dashboard/key/reveal', { password: 'x'.repeat(9000) })).status, 413);
    assert.equal((await v.send('POST', '/dashboard/key/revoke', '{}', { 'content-type': 'application/json' })).status, 415);
  });
});

describe('logins and passwords (ASVS 6.2, 6.3.1)', () => {
  it('an unknown email and a wrong password get the same answer', async () => {
    const { email: known } = await customer();
    const v = visitor('127.0.0.9');
    await v.get('/dashboard/login');
    const wrong = await v.post('/dashboard/login', { email: known, password: 'not the password' });
    const unknown = await v.post('/dashboard/login', { email: 'nobody@example.com', password: 'not the password' });
    assert.equal(wrong.status, 400);
    assert.equal(unknown.status, wrong.status);
    assert.equal(unknown.text.replace('nobody@example.com', 'E'), wrong.text.replace(known, 'E'));
  });

  it('per address: after 20 failures that address waits, another address logs in at once', async () => {
    const { email: owner } = await customer();
    const attacker = visitor('127.0.0.2');
    await attacker.get('/dashboard/login');
    for (let i = 0; i < 20; i++) assert.equal((await attacker.post('/dashboard/login', { email: `guess${i}@example.com`, password: 'guess guess guess' })).status, 400);
    const blocked = await attacker.post('/dashboard/login', { email: owner, password: PW });
    assert.equal(blocked.status, 429, 'not even the right password is checked from there');
    assert.equal(blocked.headers['retry-after'], '900');
    assert.equal((await visitor('127.0.0.3').logIn(owner, PW)).status, 303);
    server.clock.advance(15 * MIN);
    assert.equal((await attacker.post('/dashboard/login', { email: owner, password: PW })).status, 303, 'the window passed');
    server.clock.reset();
  });

  it('per account: after 5 failures only addresses that have not failed on it may try; the owner is never locked out', async () => {
    const { email: owner } = await customer();
    const guesser = visitor('127.0.0.4');
    await guesser.get('/dashboard/login');
    for (let i = 0; i < 5; i++) assert.equal((await guesser.post('/dashboard/login', { email: owner, password: `wrong ${i} wrong wrong` })).status, 400);
    assert.equal((await guesser.post('/dashboard/login', { email: owner, password: PW })).status, 429);
    const second = visitor('127.0.0.5');
    await second.get('/dashboard/login');
    assert.equal((await second.post('/dashboard/login', { email: owner, password: 'one more wrong guess' })).status, 400, 'one try from a new address');
    assert.equal((await second.post('/dashboard/login', { email: owner, password: PW })).status, 429, 'then that address waits too');
    assert.equal((await visitor('127.0.0.6').logIn(owner, PW)).status, 303, 'the owner from a fresh address');
    server.clock.advance(15 * MIN + 1);
    assert.equal((await guesser.logIn(owner, PW)).status, 303, 'and from anywhere once the window passed');
    server.clock.reset();
  });

  it('a wrong password on Reveal key counts like a failed login: after 5, that address waits and sees no key', async () => {
    const { v } = await customer('127.0.0.8');
    for (let i = 0; i < 5; i++) {
      await v.get('/dashboard');
      assert.equal((await v.post('/dashboard/key/reveal', { password: `wrong ${i} wrong wrong` })).status, 400);
    }
    await v.get('/dashboard');
    const refused = await v.post('/dashboard/key/reveal', { password: PW });
    assert.equal(refused.status, 429);
    assert.equal(v.shownKey(), null);
    server.clock.advance(15 * MIN + 1);
    assert.ok(await v.key('reveal', PW), 'the owner again, once the window passed');
    server.clock.reset();
  });

  it('passwords: 12 to 128 characters counted as characters, no composition rules, common ones and the email refused', async () => {
    const cases: [string, number][] = [
      ['elevenchars', 400],
      ['twelve chars', 303],
      ['🔑'.repeat(12), 303],
      ['a'.repeat(128), 303],
      ['a'.repeat(129), 400],
      ['Password1234', 400],
      ['qwertyuiop12', 400],
    ];
    for (const [password, status] of cases) {
      const reply = await visitor().signUp(email(), password);
      assert.equal(reply.status, status, `${password.length} ${password.slice(0, 20)}`);
    }
    const self = 'myself.and.i@example.com';
    assert.equal((await visitor().signUp(self, self)).status, 400);
    assert.match((await visitor().signUp(email(), 'password1234')).text, /most common/);
    const { v } = await customer();
    await v.get('/dashboard/password');
    assert.equal((await v.post('/dashboard/password', { current: PW, password: 'short' })).status, 400);
  });

  it('sign-ups: 10 an hour from one address, then 429 until the hour has passed', async () => {
    const from = () => visitor('127.0.0.7'); // a new browser each time, the same address
    for (let i = 0; i < 10; i++) assert.equal((await from().signUp(email(), PW)).status, 303);
    const refused = await from().signUp(email(), PW);
    assert.equal(refused.status, 429);
    assert.equal((await visitor().signUp(email(), PW)).status, 303, 'another address is not concerned');
    server.clock.advance(60 * MIN);
    assert.equal((await from().signUp(email(), PW)).status, 303);
    server.clock.reset();
  });

  it('sign-ups naming an existing email: 5 an hour per email, from any addresses, then 429; each one logged', async () => {
    const { email: taken } = await customer();
    const { email: other } = await customer();
    const named = () => log.lines.filter((l) => l.includes('"msg":"dashboard sign-up named an existing account"') && l.includes(`"email":"${taken}"`));
    for (let i = 0; i < 5; i++) assert.match((await visitor().signUp(taken, PW)).text, /already exists/, `from address ${i + 1}`);
    const refused = await visitor().signUp(taken, PW);
    assert.equal(refused.status, 429, 'a sixth, from yet another address');
    assert.equal(refused.headers['retry-after'], '900');
    assert.match(refused.text, /Too many sign-ups/);
    assert.doesNotMatch(refused.text, /already exists/);
    assert.equal(named().length, 6);
    assert.ok(named().at(-1)!.includes('"throttled":true'));
    assert.equal((await visitor().signUp(other, PW)).status, 400, 'another email is not concerned');
    server.clock.advance(60 * MIN);
    assert.equal((await visitor().signUp(taken, PW)).status, 400, 'the hour passed');
    server.clock.reset();
  });

  it('sign-up closed: no form and no account, whatever is posted', async () => {
    const closed = await startServer({ data: fixture() });
    try {
      const v = new Visitor(closed.url);
      assert.equal((await v.get('/dashboard/signup')).status, 403);
      v.jar.set('__Host-celebrity-form', 'A'.repeat(43));
      assert.equal((await v.post('/dashboard/signup', { csrf: 'A'.repeat(43), email: 'x@example.com', password: PW })).status, 403);
      assert.deepEqual(await closed.accounts.list(), []);
    } finally {
      await closed.close();
    }
  });
});

describe('headers, transport and the log (ASVS 3.4, 16.3)', () => {
  it('an absolute-form target (RFC 9112 3.2.2) reaches the same page as its path', async () => {
    const { responses } = await rawExchange(server.url, [`GET ${server.url}/dashboard/login?out=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`]);
    assert.equal(responses[0]?.status, 200);
    assert.match(responses[0]?.body ?? '', /You are logged out\./, 'the query too');
  });

  it('every page: CSP without inline script, no referrer, no-store, nosniff, never framed; no inline script or style in the HTML', async () => {
    const { v } = await customer();
    for (const path of ['/dashboard', '/dashboard/password', '/dashboard/login', '/dashboard/signup', '/dashboard/nowhere']) {
      const reply = await v.get(path);
      const csp = String(reply.headers['content-security-policy'] ?? '');
      assert.match(csp, /default-src 'none'/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.doesNotMatch(csp, /unsafe-inline/, path);
      assert.equal(csp, CSP, path);
      assert.equal(reply.headers['referrer-policy'], 'no-referrer');
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.equal(reply.headers['x-content-type-options'], 'nosniff');
      assert.equal(reply.headers['x-frame-options'], 'DENY');
      assert.ok(reply.headers['x-request-id']);
      assert.doesNotMatch(reply.text, /<script(?![^>]*\ssrc=)|\son[a-z]+=|\sstyle=/i, `${path}: no inline script, handler or style`);
    }
    const script = v.last!.text.match(/src="(\/dashboard\/assets\/[^"]+\.js)"/)![1]!;
    const asset = await v.get(script);
    assert.equal(asset.status, 200);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.ok(script.includes(createHash('sha256').update(asset.text).digest('hex').slice(0, 12)), 'the URL carries the content hash');
  });

  it('never a key or a quota: the dashboard answers without x-api-key and counts nothing', async () => {
    const { v, email: e } = await customer();
    for (let i = 0; i < 5; i++) await v.get('/dashboard');
    assert.equal((await server.usage.get(e)).used, 0);
  });

  it('plain HTTP only to a loopback host name; others get 403 and are told to use HTTPS', async () => {
    const v = visitor();
    assert.equal((await v.get('/dashboard/login', { host: 'localhost' })).status, 200);
    const remote = await v.get('/dashboard/login', { host: 'dashboard.example.com' });
    assert.equal(remote.status, 403);
    assert.match(remote.text, /HTTPS/);
  });

  it('a dashboard change reaches the API at once: rotate, old key 401, new key 200; upgrade requests reach the log', async () => {
    const { v, key } = await customer();
    const rotated = await v.key('rotate', PW);
    assert.ok(rotated && rotated !== key);
    assert.equal(await api(key), 401);
    assert.equal(await api(rotated), 200);
    await v.get('/dashboard');
    const upgrade = await v.post('/dashboard/upgrade', { plan: 'pro' });
    assert.equal(upgrade.headers.location, '/dashboard/upgrade?plan=pro');
    assert.match((await v.get(upgrade.headers.location!)).text, /href="mailto:ops@example\.com\?subject=Upgrade%20request/);
    assert.ok(log.lines.some((l) => l.includes('"dashboard upgrade requested"') && l.includes('"wanted":"pro"')));
  });

  it('the log has sign-ups, logins, failed logins and key events, never a key, a password, a session id or a CSRF token', async () => {
    const start = log.lines.length;
    const { v, email: e, key } = await customer();
    const secrets = [PW, key, v.cookie('__Host-celebrity-session')!];
    await v.get('/dashboard');
    secrets.push(v.csrf()!);
    const revealed = await v.key('reveal', PW);
    const rotated = (await v.key('rotate', PW))!;
    secrets.push(rotated);
    await v.get('/dashboard');
    await v.post('/dashboard/key/revoke', {});
    await visitor().logIn(e, 'a wrong password here');
    await visitor().logIn(PW, PW); // a password typed into the Email field
    const again = visitor();
    assert.equal((await again.logIn(e, PW)).status, 303);
    secrets.push(again.cookie('__Host-celebrity-session')!);
    assert.equal(revealed, key);
    const lines = log.lines.slice(start);
    for (const event of ['dashboard sign-up', 'dashboard login', 'dashboard login failed', 'dashboard key generated', 'dashboard key revealed', 'dashboard key rotated', 'dashboard key revoked']) {
      assert.ok(lines.some((l) => l.includes(`"msg":"${event}"`)), event);
    }
    const text = lines.join('\n');
    for (const secret of secrets) assert.ok(!text.includes(secret), `the log holds ${secret.slice(0, 6)}...`);
    assert.doesNotMatch(text, /cel_[0-9A-Za-z]{38}/);
  });
});
