// The dashboard in a real browser (Debian's Chromium), driven as a person would: by label and role,
// with the mouse, with the keyboard alone, at 320 px, without JavaScript; axe on every page and state.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../src/index.ts';
import { assertAccessible, assertCspKept, assertNoHorizontalScroll, launchBrowser, newPage, screenshot } from '../helpers/browser.ts';
import { fixture } from '../helpers/fixture.ts';
import { EVENTUALLY_MS, within } from '../helpers/state.ts';

const PASSWORD = 'purple elephant tuesday';
/** The focused element's label (or text) and outline style; a string, as the tests compile without the DOM types. */
const FOCUSED = `(() => {
  const el = document.activeElement;
  const label = (el.labels && el.labels[0] ? el.labels[0].textContent : el.textContent) || '';
  return { name: label.trim(), outline: getComputedStyle(el).outlineStyle };
})()`;
const KEY = /^cel_[0-9A-Za-z]{38}$/;
let browser: Browser;
let server: RunningServer;
let people = 0;

before(async () => {
  [browser, server] = await Promise.all([
    launchBrowser(),
    startServer({ data: fixture(), dashboard: { signup: 'open', operatorEmail: 'operator@example.com' } }),
  ]);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const api = (key: string, path = '/api/v1/celebrities') => fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } }).then((r) => r.status);

async function signUp(page: Page): Promise<string> {
  const email = `person${++people}@example.com`;
  await page.goto(`${server.url}/dashboard/signup`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/dashboard$/);
  return email;
}

/** The key shown once on the page, checked to be plain `cel_…` text. */
async function shownKey(page: Page): Promise<string> {
  const key = (await page.locator('#the-key').textContent())!.trim();
  assert.match(key, KEY);
  return key;
}

async function keyAction(page: Page, button: 'Generate key' | 'Reveal key' | 'Rotate key'): Promise<string> {
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: button }).click();
  await page.getByRole('heading', { name: button === 'Reveal key' ? 'Your key' : 'Your new key' }).waitFor();
  return shownKey(page);
}

describe('dashboard in Chromium', () => {
  it('a newcomer: sign up, generate, copy, call the API, see it counted, reveal, rotate, revoke, log out', async () => {
    const page = await newPage(browser, { permissions: ['clipboard-read', 'clipboard-write'] });
    await page.goto(`${server.url}/dashboard/signup`);
    await assertAccessible(page, 'sign-up');
    await screenshot(page, 'dashboard-signup');
    await page.getByRole('button', { name: 'Create account' }).click(); // empty: the browser asks for the fields
    await page.getByLabel('Email').fill('newcomer@example.com');
    await page.getByLabel('Password').fill('password1234');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('one of the most common').waitFor();
    await assertAccessible(page, 'sign-up refused: a common password');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/dashboard$/);
    assert.equal(await page.getByRole('button', { name: 'Generate key' }).count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Reveal key' }).count(), 0, 'nothing to reveal yet');
    await assertAccessible(page, 'dashboard without a key');

    await page.getByLabel('Password', { exact: true }).fill('not my password');
    await page.getByRole('button', { name: 'Generate key' }).click();
    await page.getByText('That password is not right.').waitFor();
    await assertAccessible(page, 'generate refused: wrong password');
    const key = await keyAction(page, 'Generate key');
    assert.equal(await page.getByRole('button', { name: 'Generate key' }).count(), 0, 'only when there is no active key');
    await assertAccessible(page, 'new key shown');
    await screenshot(page, 'dashboard-new-key');
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);

    assert.equal(await api(key), 200, 'the key works on the API at once');
    await within(EVENTUALLY_MS, async () => {
      await page.goto(`${server.url}/dashboard`);
      return (await page.getByText('1 of 100').count()) === 1;
    });
    assert.equal(await page.locator('#the-key').count(), 0, 'a GET never shows the key');
    const today = page.getByRole('table', { name: /Requests per day/ }).getByRole('row').nth(1).getByRole('cell');
    assert.deepEqual(await today.allTextContents(), ['1', '0'], 'the table counts the call: 1 successful, 0 rejected');

    const revealed = await keyAction(page, 'Reveal key');
    assert.equal(revealed, key);
    await page.reload();
    assert.equal(new URL(page.url()).pathname, '/dashboard');
    assert.equal(await page.locator('#the-key').count(), 0, 'reloading never shows it again');
    assert.doesNotMatch((await page.content()), /cel_[0-9A-Za-z]{38}/);

    const rotated = await keyAction(page, 'Rotate key');
    assert.notEqual(rotated, key);
    assert.equal(await api(key), 401, 'the old key stops at once');
    assert.equal(await api(rotated), 200);

    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('The key is revoked').waitFor();
    assert.equal(await api(rotated), 401);
    assert.equal(await page.getByRole('button', { name: 'Generate key' }).count(), 1);

    const again = await keyAction(page, 'Generate key');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.goBack();
    const back = await page.content();
    assert.ok(!back.includes(again) && !/cel_[0-9A-Za-z]{38}/.test(back), 'the back button shows no key');
    assert.equal(await page.getByRole('heading', { name: 'Dashboard' }).count(), 0, 'nor the dashboard');
    assertCspKept(page);
    await page.context().close();
  });

  it('log in and out, a failed login, the password page, the upgrade request; axe on each', async () => {
    const page = await newPage(browser);
    const email = await signUp(page);
    await keyAction(page, 'Generate key');
    // Traffic on a few days, with rejections, so the chart and the tables have something to show.
    const key = await (async () => {
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Reveal key' }).click();
      return shownKey(page);
    })();
    const start = server.clock.now();
    for (const [day, ok, bad] of [[-9, 4, 1], [-6, 9, 0], [-3, 2, 3], [0, 6, 1]] as const) {
      server.clock.set(start + day * 86_400_000);
      for (let i = 0; i < ok; i++) assert.equal(await api(key), 200);
      for (let i = 0; i < bad; i++) assert.equal(await api(key, '/api/v1/celebrities/nobody'), 404);
    }
    server.clock.set(start);
    await page.goto(`${server.url}/dashboard`);
    await page.getByText('21 of 100').waitFor();
    await assertAccessible(page, 'dashboard with usage');
    await screenshot(page, 'dashboard');

    await page.getByRole('link', { name: 'Change password' }).click();
    await assertAccessible(page, 'change password');
    await page.getByLabel('Current password').fill('wrong one, surely');
    await page.getByLabel('New password').fill('another fine passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('That is not your current password.').waitFor();
    await assertAccessible(page, 'change password refused');
    await screenshot(page, 'dashboard-password');
    await page.getByRole('link', { name: 'Back to the dashboard' }).click();

    await page.getByLabel('Plan wanted').selectOption('pro');
    await page.getByRole('button', { name: 'Request upgrade' }).click();
    await page.getByRole('heading', { name: 'Upgrade requested' }).waitFor();
    const mail = await page.getByRole('link', { name: /operator@example\.com/ }).getAttribute('href');
    assert.match(mail!, /^mailto:operator@example\.com\?subject=Upgrade%20request/);
    await assertAccessible(page, 'upgrade requested');
    await screenshot(page, 'dashboard-upgrade');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByText('You are logged out.').waitFor();
    await assertAccessible(page, 'logged out');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong password here');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('The email or the password is not right.').waitFor();
    await assertAccessible(page, 'login refused');
    await screenshot(page, 'dashboard-login');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/dashboard$/);
    await page.getByText('21 of 100').waitFor();

    await page.goto(`${server.url}/dashboard/nowhere`);
    await assertAccessible(page, 'not found');
    assertCspKept(page);
    await page.context().close();
  });

  it('keyboard only: Tab and Enter through sign-up, generate, copy, reveal, rotate, revoke, log out and log in', async () => {
    const page = await newPage(browser, { permissions: ['clipboard-read', 'clipboard-write'] });
    await page.goto(`${server.url}/dashboard/signup`);
    /** Presses Tab until the focused element has this accessible name; fails if it is never reached. */
    const tabTo = async (name: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        const focused = (await page.evaluate(FOCUSED)) as { name: string; outline: string };
        if (focused.name === name) {
          assert.notEqual(focused.outline, 'none', `${name}: focus is visible`);
          return;
        }
      }
      assert.fail(`Tab never reached ${name}`);
    };
    const email = `keys${++people}@example.com`;
    await tabTo('Email');
    await page.keyboard.type(email);
    await tabTo('Password');
    await page.keyboard.type(PASSWORD);
    await tabTo('Create account');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard$/);
    await tabTo('Password');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter'); // Enter in the field submits its form: Generate key
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    const key = await shownKey(page);
    await tabTo('Copy key');
    await page.keyboard.press('Enter');
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
    await tabTo('Password');
    await page.keyboard.type(PASSWORD);
    await tabTo('Reveal key');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your key' }).waitFor();
    assert.equal(await shownKey(page), key);
    await tabTo('Password');
    await page.keyboard.type(PASSWORD);
    await tabTo('Rotate key');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    const rotated = await shownKey(page);
    assert.equal(await api(key), 401);
    await tabTo('Revoke key');
    await page.keyboard.press('Enter');
    await page.getByText('The key is revoked').waitFor();
    assert.equal(await api(rotated), 401);
    await page.keyboard.press('Shift+Tab'); // from wherever the page starts, back into it
    await tabTo('Log out');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await tabTo('Email');
    await page.keyboard.type(email);
    await tabTo('Password');
    await page.keyboard.type(PASSWORD);
    await tabTo('Log in');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard$/);
    await page.getByRole('button', { name: 'Generate key' }).waitFor();
    assertCspKept(page);
    await page.context().close();
  });

  it('320 px wide: no horizontal scroll on any page, a shown key and full tables included', async () => {
    const page = await newPage(browser, { viewport: { width: 320, height: 640 } });
    await page.goto(`${server.url}/dashboard/login`);
    await assertNoHorizontalScroll(page, 'login');
    await signUp(page);
    await assertNoHorizontalScroll(page, 'dashboard without a key');
    const key = await keyAction(page, 'Generate key');
    await assertNoHorizontalScroll(page, 'new key shown');
    for (let i = 0; i < 3; i++) await api(key);
    await page.goto(`${server.url}/dashboard`);
    await assertNoHorizontalScroll(page, 'dashboard with usage');
    for (const path of ['/dashboard/password', '/dashboard/upgrade?plan=enterprise', '/dashboard/nowhere']) {
      await page.goto(`${server.url}${path}`);
      await assertNoHorizontalScroll(page, path);
    }
    assertCspKept(page);
    await page.context().close();
  });

  it('JavaScript off: every core action still works; the copy button stays hidden', async () => {
    const page = await newPage(browser, { javaScriptEnabled: false });
    await signUp(page);
    const key = await keyAction(page, 'Generate key');
    assert.equal(await page.getByRole('button', { name: 'Copy key' }).count(), 0, 'no button that would do nothing');
    assert.equal(await api(key), 200);
    await page.goto(`${server.url}/dashboard`);
    assert.equal(await keyAction(page, 'Reveal key'), key);
    await page.goto(`${server.url}/dashboard`);
    const rotated = await keyAction(page, 'Rotate key');
    assert.equal(await api(key), 401);
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('The key is revoked').waitFor();
    assert.equal(await api(rotated), 401);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByText('You are logged out.').waitFor();
    assertCspKept(page);
    await page.context().close();
  });

  it('refusals a person can meet: a form that expired (403) and a throttled login (429); axe finds nothing', async () => {
    const page = await newPage(browser);
    const email = await signUp(page);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.context().clearCookies(); // the login form's token no longer matches its cookie
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'This form has expired' }).waitFor();
    await assertAccessible(page, 'form expired');
    await page.goto(`${server.url}/dashboard/login`);
    for (let i = 0; i < 6; i++) {
      // A refused login answers with the form again: no need to load it anew.
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Log in' }).waitFor();
    }
    await page.getByText('Too many wrong passwords').waitFor();
    await assertAccessible(page, 'login throttled');
    assertCspKept(page);
    await page.context().close();
  });

  it('sign-up closed: the page says so and offers the operator; axe finds nothing', async () => {
    const closed = await startServer({ data: fixture(), dashboard: { operatorEmail: 'operator@example.com' } });
    try {
      const page = await newPage(browser);
      await page.goto(`${closed.url}/dashboard/signup`);
      await page.getByRole('heading', { name: 'Sign-up is closed' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create account' }).count(), 0);
      await assertAccessible(page, 'sign-up closed');
      await screenshot(page, 'dashboard-signup-closed');
      await page.goto(`${closed.url}/dashboard/login`);
      assert.equal(await page.getByRole('link', { name: 'Create an account' }).count(), 0);
      assertCspKept(page);
      await page.context().close();
    } finally {
      await closed.close();
    }
  });
});
