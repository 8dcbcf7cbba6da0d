// Password guessing is slowed without ever locking the owner out for good (CONTRACT 8, ASVS 5.0 6.3.1).
// Counters live in the store's ThrottleStore, so every instance shares them (CONTRACT 9):
//  - per client address: 20 failed password checks in 15 minutes, whatever the accounts, and that
//    address is refused for the rest of the window (one machine cannot try many passwords);
//  - per account: after 5 failures on an account in 15 minutes, only addresses that have not failed
//    on it in that window may still try it. A guesser spread over many addresses gets one try per
//    address per window; the owner, from any address that has not failed, still logs in at once.
// A check is counted as a failure before the password is hashed and given back when it was right,
// so parallel guesses cannot all pass the check while the first ones are still hashing.
// Nothing is permanent: every counter expires 15 minutes after its first failure.
import { isIP } from 'node:net';
import type { AttemptKeys, AttemptLimits, ThrottleStore } from '../store/types.ts';
import { canonicalEmail } from '../access/account-ops.ts';

export const WINDOW_MS = 15 * 60_000;
const ADDRESS_LIMIT = 20;
const ACCOUNT_LIMIT = 5;
/** Sign-ups from one address in an hour: each costs a scrypt hash and an account. */
const SIGNUP_LIMIT = 10;
/**
 * Sign-ups naming one existing email in an hour. Sign-up must say that an email is taken (without mail
 * there is no other way to keep the flow usable), so this bounds how often anyone, from however many
 * addresses, can ask it of one email (issue 24, item 4; README "Dashboard").
 */
const SIGNUP_TAKEN_LIMIT = 5;
const SIGNUP_WINDOW_MS = 60 * 60_000;

/**
 * The unit an address is counted in: IPv4 as it is, IPv6 by its /64, the block one subscriber
 * usually holds whole (counting single IPv6 addresses would give everyone 2^64 tries).
 */
export function addressUnit(address: string): string {
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(mapped) !== 6) return mapped;
  const [head = '', tail = ''] = mapped.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = mapped.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '').toLowerCase()).join(':')}::/64`;
}

export class LoginThrottle {
  constructor(
    private readonly store: ThrottleStore,
    private readonly clock: () => number,
  ) {}

  /**
   * Reserves a password check for `email` from `address`, counted as a failure from now on; false
   * when the limits refuse it (then no password may be hashed). Counting first is what holds against
   * parallel guesses: every request in flight has already been counted (issue 24).
   */
  reserve(email: string, address: string): Promise<boolean> {
    return this.store.reserve(keysOf(email, address), LIMITS, this.clock());
  }

  /**
   * The password was right: the reserved check is given back, and the owner's own failures at this
   * address are forgiven; the account's other failures still count. A wrong password keeps it counted.
   */
  succeeded(email: string, address: string): Promise<void> {
    return this.store.release(keysOf(email, address), this.clock());
  }

  /** Counts a sign-up attempt from the address; false once the address has made too many this hour. */
  async signupAllowed(address: string): Promise<boolean> {
    return (await this.store.hit(`signup:address:${addressUnit(address)}`, SIGNUP_WINDOW_MS, this.clock())) <= SIGNUP_LIMIT;
  }

  /** Counts a sign-up that named an existing email; false once that email has been named too often this hour. */
  async takenEmailAllowed(email: string): Promise<boolean> {
    return (await this.store.hit(`signup:email:${canonical(email)}`, SIGNUP_WINDOW_MS, this.clock())) <= SIGNUP_TAKEN_LIMIT;
  }
}

const LIMITS: AttemptLimits = { address: ADDRESS_LIMIT, account: ACCOUNT_LIMIT, windowMs: WINDOW_MS };

function keysOf(email: string, address: string): AttemptKeys {
  const unit = addressUnit(address);
  const account = canonical(email);
  return { address: `login:address:${unit}`, account: `login:account:${account}`, pair: `login:pair:${account}|${unit}` };
}

/** Emails as the account store compares them, capped so a huge field cannot make a huge key. */
const canonical = (email: string) => canonicalEmail(email).slice(0, 254);
