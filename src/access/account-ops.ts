// What each account command does to the store data: validation, passwords, key issue, reveal, revoke.
import { randomBytes } from 'node:crypto';
import { isPlan, PLANS, type Plan } from './plans.ts';
import { generateKey, keyDigest, keyPrefix, newId } from './key-format.ts';
import { hashPassword, openSealedKey, sealKey, verifyPassword, type PasswordHash, type ScryptParams } from './secrets.ts';
import { AccountError, type AccountDetail, type AccountRecord, type AccountSummary, type IssuedKey, type KeySummary, type StoreData } from './types.ts';

export interface OpsContext {
  readonly now: () => string;
  readonly scrypt: ScryptParams;
}

// Deliberately loose (RFC 5321 allows far more than any regex should try to check): one @, a dot in
// the domain, at most 254 characters; no whitespace, no control or format character (an email is
// printed to the operator's terminal: ESC would drive it, a bidi override would reorder the line)
// and none of <>"' (it is shown in pages and mails). Issue 24 item 2.
const EMAIL_RE = /^[^\s@<>"'\p{Cc}\p{Cf}]+@[^\s@<>"'\p{Cc}\p{Cf}]+\.[^\s@.<>"'\p{Cc}\p{Cf}]+$/u;
/**
 * What an email may have been before that rule: an account stored then keeps working, by this
 * pattern, until the operator renames it (`accounts set-email`). Only for finding an account.
 */
const STORED_EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;

/** The form an email is stored and looked up in, trimmed and lower-cased (CONTRACT 4); no check. */
export const canonicalEmail = (email: string): string => email.trim().toLowerCase();

/** An email for a new account or a rename: canonical, or INVALID_EMAIL. */
export function normalizeEmail(email: string): string {
  return checked(email, EMAIL_RE);
}

/** An email naming an account that exists: the looser rule of accounts stored before EMAIL_RE. */
export function lookupEmail(email: string): string {
  return checked(email, STORED_EMAIL_RE);
}

function checked(email: string, pattern: RegExp): string {
  const canonical = canonicalEmail(email);
  if (canonical.length > 254 || !pattern.test(canonical)) {
    throw new AccountError('INVALID_EMAIL', `invalid email address: ${JSON.stringify(email)}`);
  }
  return canonical;
}

export function parsePlan(plan: string): Plan {
  if (!isPlan(plan)) throw new AccountError('INVALID_PLAN', `unknown plan ${JSON.stringify(plan)}; plans: ${PLANS.join(', ')}`);
  return plan;
}

export function checkNewPassword(password: string): void {
  if (password.length === 0 || password.length > 1024) {
    throw new AccountError('INVALID_PASSWORD', 'the password must be 1 to 1024 characters long');
  }
}

export function findAccount(data: StoreData, email: string): AccountRecord {
  const canonical = lookupEmail(email);
  const account = data.accounts.find((a) => a.email === canonical);
  if (!account) throw new AccountError('UNKNOWN_ACCOUNT', `no account with email ${canonical}`);
  return account;
}

async function checkPassword(account: AccountRecord, password: string): Promise<void> {
  if (!(await verifyPassword(password, account.password))) {
    throw new AccountError('WRONG_PASSWORD', `wrong password for ${account.email}`);
  }
}

/** Makes a new key the account's active one; the previous one, if any, is revoked. */
async function issueKey(account: AccountRecord, password: string, ctx: OpsContext): Promise<IssuedKey> {
  const now = ctx.now();
  if (account.key) account.revokedKeys.push({ id: account.key.id, prefix: account.key.prefix, createdAt: account.key.createdAt, revokedAt: now });
  const key = generateKey();
  const id = newId('key');
  account.key = { id, prefix: keyPrefix(key), digest: keyDigest(key), createdAt: now, sealed: await sealKey(key, password, id, ctx.scrypt) };
  return { email: account.email, plan: account.plan, key };
}

/** A new account record, added to `data` (the caller's copy: it is installed only if the whole change succeeds). */
async function addAccount(data: StoreData, input: { email: string; plan: Plan; password: string }, ctx: OpsContext): Promise<AccountRecord> {
  if (data.accounts.some((a) => a.email === input.email)) {
    throw new AccountError('EMAIL_TAKEN', `an account with email ${input.email} already exists`);
  }
  const account: AccountRecord = {
    id: newId('acc'),
    email: input.email,
    plan: input.plan,
    createdAt: ctx.now(),
    password: await hashPassword(input.password, ctx.scrypt),
    key: null,
    revokedKeys: [],
  };
  data.accounts.push(account);
  return account;
}

/** `accounts create`: the account and its first key. */
export async function createAccount(data: StoreData, input: { email: string; plan: Plan; password: string }, ctx: OpsContext): Promise<IssuedKey> {
  return issueKey(await addAccount(data, input, ctx), input.password, ctx);
}

/** An account without a key yet (dashboard sign-up). */
export async function registerAccount(data: StoreData, input: { email: string; plan: Plan; password: string }, ctx: OpsContext): Promise<AccountDetail> {
  return detail(await addAccount(data, input, ctx));
}

/** `keys create` (replace = false: refuses when a key is active) and `keys rotate` (replace = true). */
export async function newKey(data: StoreData, email: string, password: string, replace: boolean, ctx: OpsContext): Promise<IssuedKey> {
  const account = findAccount(data, email);
  await checkPassword(account, password);
  if (account.key && !replace) {
    throw new AccountError('KEY_ACTIVE', `${account.email} already has an active key (${account.key.prefix}); use \`keys rotate\` to replace it`);
  }
  return issueKey(account, password, ctx);
}

export async function revealKey(data: StoreData, email: string, password: string): Promise<IssuedKey> {
  const account = findAccount(data, email);
  await checkPassword(account, password);
  if (!account.key) throw new AccountError('NO_KEY', `${account.email} has no active key; create one with \`keys create\``);
  const key = await openSealedKey(account.key.sealed, password, account.key.id);
  if (key === null) throw new AccountError('STORE_CORRUPT', `the sealed key of ${account.email} does not decrypt`);
  return { email: account.email, plan: account.plan, key };
}

export function revokeKey(data: StoreData, email: string, ctx: OpsContext): KeySummary {
  const account = findAccount(data, email);
  const key = account.key;
  if (!key) throw new AccountError('NO_KEY', `${account.email} has no active key to revoke`);
  const revoked = { id: key.id, prefix: key.prefix, createdAt: key.createdAt, revokedAt: ctx.now() };
  account.revokedKeys.push(revoked);
  account.key = null;
  return { email: account.email, prefix: key.prefix, status: 'revoked', createdAt: key.createdAt, revokedAt: revoked.revokedAt };
}

/** New password: rehash, and reseal the active key under it (so reveal keeps working). */
export async function changePassword(data: StoreData, email: string, oldPassword: string, newPassword: string, ctx: OpsContext): Promise<void> {
  checkNewPassword(newPassword);
  const account = findAccount(data, email);
  await checkPassword(account, oldPassword);
  if (account.key) {
    const key = await openSealedKey(account.key.sealed, oldPassword, account.key.id);
    if (key === null) throw new AccountError('STORE_CORRUPT', `the sealed key of ${account.email} does not decrypt`);
    account.key = { ...account.key, sealed: await sealKey(key, newPassword, account.key.id, ctx.scrypt) };
  }
  account.password = await hashPassword(newPassword, ctx.scrypt);
}

/**
 * Checks a login. An unknown email verifies against a fixed hash with the same scrypt cost, so both
 * failures take the same time and give the same answer (CONTRACT 8: no telling whether it exists).
 */
export async function authenticate(account: AccountRecord | undefined, password: string, scrypt: ScryptParams): Promise<AccountDetail | null> {
  if (!account) {
    await verifyPassword(password, await decoyHash(scrypt));
    return null;
  }
  return (await verifyPassword(password, account.password)) ? detail(account) : null;
}

const decoys = new Map<string, Promise<PasswordHash>>();
function decoyHash(scrypt: ScryptParams): Promise<PasswordHash> {
  const id = `${scrypt.N}:${scrypt.r}:${scrypt.p}`;
  let hash = decoys.get(id);
  if (!hash) decoys.set(id, (hash = hashPassword(randomBytes(16).toString('hex'), scrypt)));
  return hash;
}

/** `accounts set-email`: the account keeps its id, key, password, sessions and usage; only the email changes. */
export function renameAccount(data: StoreData, email: string, newEmail: string): AccountSummary {
  const account = findAccount(data, email);
  const next = normalizeEmail(newEmail);
  if (next !== account.email && data.accounts.some((a) => a.email === next)) {
    throw new AccountError('EMAIL_TAKEN', `an account with email ${next} already exists`);
  }
  const renamed = { ...account, email: next };
  data.accounts[data.accounts.indexOf(account)] = renamed;
  return summarize(renamed);
}

/** `state import` into a store that has accounts, without being told to replace them. */
export function notEmpty(where: string, accounts: number): AccountError {
  return new AccountError('STORE_NOT_EMPTY', `${where} already holds ${accounts} account${accounts === 1 ? '' : 's'}; importing would replace them (state import --force does)`);
}

export function detail(a: AccountRecord): AccountDetail {
  return { id: a.id, email: a.email, plan: a.plan, createdAt: a.createdAt, key: a.key ? { prefix: a.key.prefix, createdAt: a.key.createdAt } : null };
}

export function summarize(a: AccountRecord): AccountSummary {
  return { email: a.email, plan: a.plan, createdAt: a.createdAt, keyPrefix: a.key?.prefix ?? null };
}

export function keySummaries(data: StoreData): KeySummary[] {
  const out: KeySummary[] = [];
  for (const a of data.accounts) {
    if (a.key) out.push({ email: a.email, prefix: a.key.prefix, status: 'active', createdAt: a.key.createdAt, revokedAt: null });
    for (const k of a.revokedKeys) out.push({ email: a.email, prefix: k.prefix, status: 'revoked', createdAt: k.createdAt, revokedAt: k.revokedAt });
  }
  return out;
}
