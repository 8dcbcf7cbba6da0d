// Emails with control characters or markup (issue 24, item 2), end to end: refused for a new account
// by the dashboard's sign-up, the CLI and the embedding API alike; an account stored with one before
// the rule keeps working, every CLI table shows its email escaped, and the operator renames it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startServer } from '../../src/index.ts';
import { openFileStore } from '../../src/store/file/file-store.ts';
import { Visitor } from '../helpers/dashboard-visitor.ts';
import { fixture } from '../helpers/fixture.ts';
import { FAST_SCRYPT, runInProcess, tempState } from '../helpers/state.ts';

const PW = 'purple elephant tuesday';
/** The two emails the penetration test got accepted. */
const ESCAPES = '\x1b[2J\x1b[31mowned\x1b]0;pwned\x07x@e.io';
const MARKUP = `"><svg/onload=alert(1)>'<b>x@e.io`;
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('a new account: control characters and <>"\' refused everywhere', () => {
  it('dashboard sign-up -> 400, no account', async () => {
    const server = await startServer({ data: fixture(), dashboard: { signup: 'open' } });
    try {
      for (const email of [ESCAPES, MARKUP, 'a\u202eb@e.io']) {
        const reply = await new Visitor(server.url).signUp(email, PW);
        assert.equal(reply.status, 400, JSON.stringify(email));
        assert.match(reply.text, /Enter your email address/);
      }
      assert.deepEqual(await server.accounts.list(), []);
    } finally {
      await server.close();
    }
  });

  it('embedding API -> INVALID_EMAIL; CLI -> exit 2', async () => {
    const server = await startServer({ data: fixture() });
    try {
      for (const email of [ESCAPES, MARKUP]) await assert.rejects(server.accounts.create({ email }), { code: 'INVALID_EMAIL' });
    } finally {
      await server.close();
    }
    const state = await tempState(after);
    for (const email of [ESCAPES, MARKUP]) {
      const r = await runInProcess(['accounts', 'create', '--state', state, '--email', email, '--plan', 'free', '--password-stdin'], 'pw\n');
      assert.equal(r.code, 2);
      assert.match(r.err, /invalid email/);
      assert.doesNotMatch(r.err, RAW_CONTROL, 'the message quotes the email escaped');
    }
  });
});

describe('an account stored with such an email before the rule', () => {
  it('works on the CLI and the dashboard, is printed escaped in every table, and the operator renames it', async () => {
    const state = await tempState(after);
    const store = await openFileStore({ state, role: 'command', scrypt: FAST_SCRYPT });
    const { key } = await store.accounts.create({ email: 'placeholder@e.io', plan: 'free', password: PW });
    const legacy = ESCAPES.toLowerCase();
    await store.importAccounts((await store.exportAccounts()).map((r) => ({ ...r, email: legacy })), true);
    await store.close();
    const cli = (args: string[], stdin = '') => runInProcess([...args, '--state', state], stdin);

    const outputs: string[] = [];
    for (const [args, stdin] of [
      [['accounts', 'list'], ''],
      [['keys', 'list'], ''],
      [['usage', '--email', legacy], ''],
      [['accounts', 'set-plan', '--email', legacy, '--plan', 'starter'], ''],
      [['keys', 'reveal', '--email', legacy, '--password-stdin'], `${PW}\n`],
    ] as const) {
      const r = await cli([...args], stdin);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
      assert.doesNotMatch(r.out, RAW_CONTROL, `${args.join(' ')} prints no raw control character`);
      assert.ok(r.out.includes('\\u{1b}[2j\\u{1b}[31mowned\\u{1b}]0;pwned\\u{7}x@e.io'), `${args.join(' ')}: ${JSON.stringify(r.out)}`);
      outputs.push(r.out);
    }
    assert.ok(outputs[4]!.includes(key), 'reveal found it');
    const wrong = await cli(['accounts', 'set-plan', '--email', 'nobody\x1b[2J@e.io', '--plan', 'pro']);
    assert.equal(wrong.code, 1);
    assert.doesNotMatch(wrong.err, RAW_CONTROL, 'an error quoting it is escaped too');

    const server = await startServer({ data: fixture(), state });
    try {
      assert.equal((await new Visitor(server.url).logIn(legacy, PW)).status, 303, 'its owner logs in');
    } finally {
      await server.close();
    }

    assert.equal((await cli(['accounts', 'set-email', '--email', legacy, '--new-email', MARKUP])).code, 2, 'renamed only to a valid email');
    const renamed = await cli(['accounts', 'set-email', '--email', legacy, '--new-email', 'Owner@E.io']);
    assert.equal(renamed.code, 0, renamed.err);
    assert.equal(renamed.out, '\\u{1b}[2j\\u{1b}[31mowned\\u{1b}]0;pwned\\u{7}x@e.io is now owner@e.io\n');
    assert.match((await cli(['accounts', 'list'])).out, /^owner@e\.io\tstarter\tcel_/);

    const again = await startServer({ data: fixture(), state });
    try {
      assert.equal((await new Visitor(again.url).logIn('owner@e.io', PW)).status, 303, 'the owner logs in with the new email');
      assert.equal((await fetch(`${again.url}/api/v1/news`, { headers: { 'x-api-key': key } })).status, 200, 'the same key');
    } finally {
      await again.close();
    }
  });
});
