// Password guesses sent all at once (issue 24, item 1): over real sockets, every password-checked
// action verifies no more passwords than the throttle's limits allow (20 per address, 5 per account,
// CONTRACT 8), the rest get 429 without a hash, and the owner still gets in from a fresh address.
// On the file store, and on Redis with the guesses spread over two servers sharing it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../../src/index.ts';
import { Visitor, type Reply } from '../helpers/dashboard-visitor.ts';
import { fixture } from '../helpers/fixture.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { captureLog, type CapturedLog } from '../helpers/state.ts';

const PW = 'purple elephant tuesday';

interface Setup {
  readonly servers: RunningServer[];
  readonly log: CapturedLog;
}

/** How many passwords were hashed and found wrong: the log has one line per verified wrong password. */
function verified(log: CapturedLog, msg: string, field: string, value: string): number {
  return log.lines.filter((l) => {
    const line = JSON.parse(l) as Record<string, unknown>;
    return line.msg === msg && line[field] === value;
  }).length;
}

function tally(replies: readonly Reply[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of replies) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/**
 * `every`: also the address limit and each password-checked action. Redis runs the account limit over
 * two servers only: its hashes cost the production scrypt, and the store contract suite
 * (test/store/store.case.ts) already shows its reservation exact under 100 parallel calls.
 */
function guessesSuite(name: string, every: boolean, open: () => Promise<Setup>, close: () => Promise<void>, subnet: number): void {
  describe(`parallel password guesses: ${name}`, () => {
    let setup: Setup;
    let addresses = 0;
    const address = () => `127.0.${subnet}.${++addresses}`;
    let people = 0;
    /** A browser per server, all from one address (a load balancer in front); the first one leads. */
    const browsers = (from: string) => setup.servers.map((s) => new Visitor(s.url, { localAddress: from }));
    /** `n` posts at once, spread over the servers with the lead's cookies, each with the CSRF token of the page just read. */
    async function burst(from: Visitor[], page: string, path: string, n: number, fields: (i: number) => Record<string, string>): Promise<Reply[]> {
      await from[0]!.get(page);
      const csrf = from[0]!.csrf()!;
      for (const b of from.slice(1)) for (const [k, v] of from[0]!.jar) b.jar.set(k, v);
      return Promise.all(Array.from({ length: n }, (_, i) => from[i % from.length]!.post(path, { csrf, ...fields(i) })));
    }
    async function customer(): Promise<{ email: string; browser: Visitor[] }> {
      const email = `owner${subnet}.${++people}@example.com`;
      const browser = browsers(address());
      assert.equal((await browser[0]!.signUp(email, PW)).status, 303);
      return { email, browser };
    }

    before(async () => {
      setup = await open();
    });
    after(close);

    it(`login: 100 wrong at once from one address -> 5 hashed;${every ? ' from another, 100 emails -> 20;' : ''} then 1 per fresh address; the owner gets in`, async () => {
      const { log } = setup;
      const { email: owner } = await customer();
      const first = await burst(browsers(address()), '/dashboard/login', '/dashboard/login', 100, (i) => ({ email: owner, password: `wrong guess number ${i}` }));
      assert.deepEqual(tally(first), { 400: 5, 429: 95 }, 'the account limit, for an address that failed on it');
      assert.equal(verified(log, 'dashboard login failed', 'email', owner), 5);

      if (every) {
        const sweeper = address();
        const sweep = await burst(browsers(sweeper), '/dashboard/login', '/dashboard/login', 100, (i) => ({ email: `guess${i}.${subnet}@example.com`, password: 'guess guess guess' }));
        assert.deepEqual(tally(sweep), { 400: 20, 429: 80 }, 'the address limit');
        assert.equal(verified(log, 'dashboard login failed', 'client', sweeper), 20);
      }

      const late = await burst(browsers(address()), '/dashboard/login', '/dashboard/login', 60, (i) => ({ email: owner, password: `late wrong guess ${i}` }));
      assert.deepEqual(tally(late), { 400: 1, 429: 59 }, 'a fresh address on an account past its limit: one guess');
      assert.equal(verified(log, 'dashboard login failed', 'email', owner), 6);

      const [owners] = browsers(address());
      assert.equal((await owners!.logIn(owner, PW)).status, 303, 'the owner from a fresh address');
    });

    for (const action of every ? (['generate', 'reveal', 'rotate', 'password'] as const) : []) {
      it(`${action}: 30 wrong passwords at once -> 5 hashed, 25 answered 429; the owner's password still works from a fresh address`, async () => {
        const { log } = setup;
        const { email, browser } = await customer();
        if (action !== 'generate') assert.ok(await browser[0]!.key('generate', PW));
        const replies =
          action === 'password'
            ? await burst(browser, '/dashboard/password', '/dashboard/password', 30, (i) => ({ current: `wrong current ${i}`, password: 'a brand new passphrase' }))
            : await burst(browser, '/dashboard', `/dashboard/key/${action}`, 30, (i) => ({ password: `wrong password ${i}` }));
        assert.deepEqual(tally(replies), { 400: 5, 429: 25 });
        const msg = action === 'password' ? 'dashboard password not changed: wrong current password' : `dashboard key not ${action === 'generate' ? 'generated' : action === 'reveal' ? 'revealed' : 'rotated'}: wrong password`;
        assert.equal(verified(log, msg, 'email', email), 5);

        const [fresh] = browsers(address());
        assert.equal((await fresh!.logIn(email, PW)).status, 303);
        if (action === 'password') {
          await fresh!.get('/dashboard/password');
          assert.equal((await fresh!.post('/dashboard/password', { current: PW, password: 'a brand new passphrase' })).status, 303);
        } else {
          assert.match((await fresh!.key(action, PW)) ?? '', /^cel_/);
        }
      });
    }
  });
}

const fileLog = captureLog();
let fileServer: RunningServer;
guessesSuite(
  'file store',
  true,
  async () => {
    fileServer = await startServer({ data: fixture(), log: fileLog, dashboard: { signup: 'open' } });
    return { servers: [fileServer], log: fileLog };
  },
  () => fileServer.close(),
  31,
);

const redisLog = captureLog();
let redis: RedisServer;
let redisServers: RunningServer[] = [];
guessesSuite(
  'Redis, two servers',
  false,
  async () => {
    redis = await startRedis();
    const data = fixture();
    for (let i = 0; i < 2; i++) redisServers.push(await startServer({ data, log: redisLog, redisUrl: redis.url, dashboard: { signup: 'open' } }));
    return { servers: redisServers, log: redisLog };
  },
  async () => {
    await Promise.all(redisServers.map((s) => s.close()));
    redisServers = [];
    await redis.stop();
  },
  32,
);
