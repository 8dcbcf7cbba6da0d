// The dashboard's pages. Page names, field labels and button names are CONTRACT 8's exactly: checks
// outside this repo find them by accessible name.
import type { AccountDetail } from '../access/types.ts';
import { PLANS, type Plan } from '../access/plans.ts';
import type { UsageReport } from '../quota/usage-service.ts';
import { html, notice, page, type Html } from './html.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './password-policy.ts';
import { count, dailyChart, dailyTable, monthsTable, utcText } from './usage-view.ts';

export type User = { readonly email: string; readonly csrf: string };

const planName = (plan: Plan) => plan[0]!.toUpperCase() + plan.slice(1);
const PASSWORD_RULE = `${PASSWORD_MIN} to ${PASSWORD_MAX} characters, any you like; the most common passwords are refused.`;

/** A labelled field with its hint and, when the last try failed, its error, tied by aria-describedby. */
function input(o: { id: string; name: string; label: string; type: 'email' | 'password'; autocomplete: string; value?: string; hint?: string; error?: string | null }): Html {
  const described = [o.hint ? `${o.id}-hint` : '', o.error ? `${o.id}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${o.id}">${o.label}</label>
<input id="${o.id}" name="${o.name}" type="${o.type}" autocomplete="${o.autocomplete}" required${o.type === 'email' ? html` inputmode="email" spellcheck="false"` : null}${o.value ? html` value="${o.value}"` : null}${described ? html` aria-describedby="${described}"` : null}${o.error ? html` aria-invalid="true"` : null}>
${o.hint ? html`<p class="hint" id="${o.id}-hint">${o.hint}</p>` : null}${o.error ? html`<p class="notice error" id="${o.id}-error">${o.error}</p>` : null}`;
}

const csrfField = (token: string) => html`<input type="hidden" name="csrf" value="${token}">`;

export function loginPage(o: { csrf: string; signupOpen: boolean; email: string; error: string | null; info: string | null }): string {
  return page({
    title: 'Log in',
    user: null,
    body: html`${notice('ok', o.info)}${notice('error', o.error)}
<form method="post" action="/dashboard/login">
${csrfField(o.csrf)}
${input({ id: 'email', name: 'email', label: 'Email', type: 'email', autocomplete: 'username', value: o.email })}
${input({ id: 'password', name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' })}
<div class="actions"><button type="submit">Log in</button></div>
</form>
${o.signupOpen ? html`<p>No account yet? <a href="/dashboard/signup">Create an account</a>.</p>` : null}`,
  });
}

export function signupPage(o: { csrf: string; email: string; error: string | null }): string {
  return page({
    title: 'Create an account',
    user: null,
    body: html`<p>A free account, with an API key you generate on the next page.</p>
${notice('error', o.error)}
<form method="post" action="/dashboard/signup">
${csrfField(o.csrf)}
${input({ id: 'email', name: 'email', label: 'Email', type: 'email', autocomplete: 'username', value: o.email })}
${input({ id: 'password', name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: PASSWORD_RULE })}
<div class="actions"><button type="submit">Create account</button></div>
</form>
<p>Already have an account? <a href="/dashboard/login">Log in</a>.</p>`,
  });
}

export function signupClosedPage(operatorEmail: string | null): string {
  return page({
    title: 'Sign-up is closed',
    user: null,
    body: html`<p>Accounts on this server are made by its operator.${operatorEmail ? html` Ask for one at <a href="mailto:${operatorEmail}?subject=${encodeURIComponent('Account request')}">${operatorEmail}</a>.` : null}</p>
<p>Already have an account? <a href="/dashboard/login">Log in</a>.</p>`,
  });
}

export interface HomeView {
  readonly user: User;
  readonly account: AccountDetail;
  readonly usage: UsageReport;
  /** A key to show once: in the answer to the POST that made or revealed it, never on a GET. */
  readonly shownKey: { readonly key: string; readonly made: boolean } | null;
  readonly info: string | null;
  /** The password of a key action was missing or wrong. */
  readonly keyError: string | null;
}

function keyPanel(v: HomeView): Html {
  const shown =
    v.shownKey &&
    html`<div class="secret" data-secret>
<h3>${v.shownKey.made ? 'Your new key' : 'Your key'}</h3>
<p class="key"><code id="the-key">${v.shownKey.key}</code></p>
<div class="actions"><button type="button" class="secondary" data-copy="the-key" data-status="copy-status" hidden>Copy key</button></div>
<p id="copy-status" role="status"></p>
<p><strong>Store it now</strong>, in a password manager or your secrets store: it is shown only this once, and reloading this page will not show it again. Keep it out of web pages, public repositories and logs.</p>
</div>`;
  const password = input({
    id: 'key-password', name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password',
    hint: v.account.key ? 'Your account password: revealing or replacing the key needs it.' : 'Your account password: the key is stored encrypted under it.',
    error: v.keyError,
  });
  const key = v.account.key;
  if (key === null) {
    return html`${shown}<p>You have no active key. Generate one to call the API.</p>
<form method="post" action="/dashboard/key/generate">
${csrfField(v.user.csrf)}${password}
<div class="actions"><button type="submit">Generate key</button></div>
</form>`;
  }
  return html`${shown}<dl class="figures">
<dt>Active key</dt><dd><code>${key.prefix}</code></dd>
<dt>Created</dt><dd><time datetime="${key.createdAt}">${utcText(key.createdAt)}</time></dd>
<dt>Last used</dt><dd>${v.usage.lastUsedAt ? html`<time datetime="${v.usage.lastUsedAt}">${utcText(v.usage.lastUsedAt)}</time>` : 'Never'}</dd>
</dl>
<form method="post" action="/dashboard/key/reveal">
${csrfField(v.user.csrf)}${password}
<p class="hint" id="rotate-hint">Rotate key makes a new key; the current one stops working at once.</p>
<div class="actions"><button type="submit">Reveal key</button><button type="submit" class="secondary" formaction="/dashboard/key/rotate" aria-describedby="rotate-hint">Rotate key</button></div>
</form>
<form method="post" action="/dashboard/key/revoke">
${csrfField(v.user.csrf)}
<p class="hint" id="revoke-hint">Revoke key stops the key at once, without a new one; you can generate another later.</p>
<div class="actions"><button type="submit" class="danger" aria-describedby="revoke-hint">Revoke key</button></div>
</form>`;
}

function usagePanel(u: UsageReport): Html {
  const month = u.months[0]?.month ?? u.resetsOn.slice(0, 7);
  return html`<dl class="figures">
<dt>Plan</dt><dd>${planName(u.plan)}</dd>
<dt>Requests used</dt><dd>${count(u.used)} of ${u.total === null ? 'unlimited' : count(u.total)}</dd>
<dt>Remaining</dt><dd>${u.remaining === null ? 'Unlimited' : count(u.remaining)}</dd>
<dt>Quota resets</dt><dd><time datetime="${u.resetsOn}">${utcText(u.resetsOn)}</time></dd>
<dt>Key last used</dt><dd>${u.lastUsedAt ? html`<time datetime="${u.lastUsedAt}">${utcText(u.lastUsedAt)}</time>` : 'Never'}</dd>
</dl>
<p class="hint">Only successful requests count against the quota. The numbers are live: reload the page to see the latest.</p>
${dailyChart(month, u.daily)}
${dailyTable(month, u.daily)}
${monthsTable(u.months)}`;
}

function planPanel(v: HomeView): Html {
  const higher = PLANS.slice(PLANS.indexOf(v.account.plan) + 1);
  const total = v.usage.total === null ? 'unlimited requests' : `${count(v.usage.total)} requests a month`;
  if (higher.length === 0) return html`<p>You are on the ${planName(v.account.plan)} plan: ${total}, the highest there is.</p>`;
  return html`<p>You are on the ${planName(v.account.plan)} plan: ${total}. Upgrades are made by the operator, the same day.</p>
<form method="post" action="/dashboard/upgrade">
${csrfField(v.user.csrf)}
<label for="plan">Plan wanted</label>
<select id="plan" name="plan">${higher.map((p) => html`<option value="${p}">${planName(p)}</option>`)}</select>
<div class="actions"><button type="submit">Request upgrade</button></div>
</form>`;
}

export function homePage(v: HomeView): string {
  return page({
    title: 'Dashboard',
    user: v.user,
    body: html`${notice('ok', v.info)}
<section aria-labelledby="key-heading"><h2 id="key-heading">API key</h2>
${keyPanel(v)}
</section>
<section aria-labelledby="usage-heading"><h2 id="usage-heading">Usage this month</h2>
${usagePanel(v.usage)}
</section>
<section aria-labelledby="plan-heading"><h2 id="plan-heading">Plan</h2>
${planPanel(v)}
</section>
<section aria-labelledby="account-heading"><h2 id="account-heading">Account</h2>
<p><a href="/dashboard/password">Change password</a></p>
</section>`,
  });
}

export function passwordPage(o: { user: User; error: { field: 'current' | 'new'; text: string } | null }): string {
  return page({
    title: 'Change password',
    user: o.user,
    body: html`<p>Changing the password logs out every other session of this account. Your key stays the same.</p>
<form method="post" action="/dashboard/password">
${csrfField(o.user.csrf)}
${input({ id: 'current-password', name: 'current', label: 'Current password', type: 'password', autocomplete: 'current-password', error: o.error?.field === 'current' ? o.error.text : null })}
${input({ id: 'new-password', name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', hint: PASSWORD_RULE, error: o.error?.field === 'new' ? o.error.text : null })}
<div class="actions"><button type="submit">Change password</button></div>
</form>
<p><a href="/dashboard">Back to the dashboard</a></p>`,
  });
}

export function upgradePage(o: { user: User; plan: Plan; operatorEmail: string | null }): string {
  const subject = `Upgrade request: ${o.user.email} to ${planName(o.plan)}`;
  const mail = o.operatorEmail && `mailto:${o.operatorEmail}?subject=${encodeURIComponent(subject)}&body=${encodeURIComponent(`Please move ${o.user.email} to the ${planName(o.plan)} plan.`)}`;
  return page({
    title: 'Upgrade requested',
    user: o.user,
    body: html`<p role="status">Your request for the ${planName(o.plan)} plan is recorded for the operator, who applies upgrades the same day.</p>
${mail ? html`<p>To reach the operator now, or to add details, <a href="${mail}">email ${o.operatorEmail}</a>.</p>` : null}
<p><a href="/dashboard">Back to the dashboard</a></p>`,
  });
}

/** Everything else a person may meet: not found, a stale form, sign-up throttled, an error. */
export function messagePage(title: string, text: string, user: User | null, link: { href: string; text: string } = { href: '/dashboard', text: 'Go to the dashboard' }): string {
  return page({ title, user, body: html`<p>${text}</p>\n<p><a href="${link.href}">${link.text}</a></p>` });
}
