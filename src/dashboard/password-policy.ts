// The dashboard's password rules (CONTRACT 8, ASVS 5.0 6.2): 12 to 128 characters, any characters,
// no composition rules; the most common passwords and the account's own email refused.
import { COMMON_PASSWORDS } from './common-passwords.ts';
import { canonicalEmail } from '../access/account-ops.ts';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

/** Why a new password is refused, in words for the person choosing it; null when it is accepted. */
export function passwordProblem(password: string, email: string): string | null {
  // Characters as a person counts them (code points), never bytes or UTF-16 units.
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters (this one has ${length}). A few unrelated words make a good one.`;
  if (length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  const folded = password.toLowerCase();
  // ASVS 6.2.4 (common passwords) and 6.2.11 (context words): the email, or its part before the @.
  if (COMMON_PASSWORDS.has(folded)) return 'This password is one of the most common ones, which are tried first. Choose another.';
  const canonical = canonicalEmail(email);
  if (folded === canonical || folded === canonical.slice(0, canonical.indexOf('@'))) return 'Do not use your email address as your password.';
  return null;
}
