// The account vocabulary shared by the store, the CLI, the gate and the embedding API.
import type { Plan } from './plans.ts';
import type { PasswordHash, SealedKey } from './secrets.ts';

/** One key as stored: never the key itself, only its digest and a copy sealed under the password. */
export interface KeyRecord {
  readonly id: string;
  readonly prefix: string;
  readonly digest: string; // SHA-256 hex of the key: the lookup of every request
  readonly createdAt: string;
  readonly sealed: SealedKey;
}

export interface RevokedKeyRecord {
  readonly id: string;
  readonly prefix: string;
  readonly createdAt: string;
  readonly revokedAt: string;
}

export interface AccountRecord {
  readonly id: string; // what the usage log names the account by (never the key)
  readonly email: string; // lower-cased: unique case-insensitively (CONTRACT 4)
  plan: Plan;
  readonly createdAt: string;
  password: PasswordHash;
  key: KeyRecord | null; // at most one active key
  revokedKeys: RevokedKeyRecord[];
}

export interface StoreData {
  version: 1;
  accounts: AccountRecord[];
}

/** What the gate sees of an account on the hot path. */
export interface AccountView {
  readonly id: string;
  readonly email: string;
  readonly plan: Plan;
}

export interface AccountSummary {
  readonly email: string;
  readonly plan: Plan;
  readonly createdAt: string;
  readonly keyPrefix: string | null;
}

export interface KeySummary {
  readonly email: string;
  readonly prefix: string;
  readonly status: 'active' | 'revoked';
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** An account as the dashboard shows it: never the key, only its prefix and age. */
export interface AccountDetail {
  readonly id: string;
  readonly email: string;
  readonly plan: Plan;
  readonly createdAt: string;
  readonly key: { readonly prefix: string; readonly createdAt: string } | null;
}

/** Returned once, when a key is made (and by reveal): the only place the key appears in clear. */
export interface IssuedKey {
  readonly email: string;
  readonly plan: Plan;
  readonly key: string;
}

export interface AccountService {
  /** Creates the account and its first key (the CLI, the embedding API). */
  create(input: { email: string; plan: string; password: string }): Promise<IssuedKey>;
  /** Creates the account without a key (dashboard sign-up: the key is generated on the dashboard). */
  register(input: { email: string; plan: string; password: string }): Promise<AccountDetail>;
  /**
   * The account when the password is right, else null; an unknown email costs the same scrypt work
   * as a wrong password, so timing does not tell which it was (CONTRACT 8).
   */
  authenticate(email: string, password: string): Promise<AccountDetail | null>;
  /** By account id (a dashboard session names its account by id); null when it no longer exists. */
  get(id: string): Promise<AccountDetail | null>;
  /** By email, case-insensitively; null when there is none. */
  find(email: string): Promise<AccountDetail | null>;
  setPlan(email: string, plan: string): Promise<AccountSummary>;
  /**
   * Renames the account (the operator's `accounts set-email`); its id, key, password, sessions and
   * usage stay. The new email must pass today's rule; the old one is found by the rule it was made under.
   */
  setEmail(email: string, newEmail: string): Promise<AccountSummary>;
  /** Fails with KEY_ACTIVE when the account already has a key: rotate replaces it. */
  createKey(email: string, password: string): Promise<IssuedKey>;
  rotateKey(email: string, password: string): Promise<IssuedKey>;
  revealKey(email: string, password: string): Promise<IssuedKey>;
  revokeKey(email: string): Promise<KeySummary>;
  setPassword(email: string, oldPassword: string, newPassword: string): Promise<void>;
  list(): Promise<AccountSummary[]>;
  keys(): Promise<KeySummary[]>;
}

export const ACCOUNT_ERRORS = [
  'INVALID_EMAIL',
  'INVALID_PLAN',
  'INVALID_PASSWORD',
  'EMAIL_TAKEN',
  'UNKNOWN_ACCOUNT',
  'WRONG_PASSWORD',
  'KEY_ACTIVE',
  'NO_KEY',
  'STORE_LOCKED',
  'STORE_CORRUPT',
  'STORE_NOT_EMPTY',
] as const;
export type AccountErrorCode = (typeof ACCOUNT_ERRORS)[number];

/** A failure the caller can act on; the CLI prints the message (exit 2 for INVALID_*, else 1). */
export class AccountError extends Error {
  constructor(
    readonly code: AccountErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AccountError';
  }
}
