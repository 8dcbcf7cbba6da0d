// The plans table (SPEC 8, CONTRACT 4): names as a typed vocabulary, monthly quotas, overrides.

export const PLANS = ['free', 'starter', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** Requests per UTC calendar month; null means unlimited. */
export type Quota = number | null;

export const PLAN_QUOTAS: Readonly<Record<Plan, Quota>> = Object.freeze({
  free: 100,
  starter: 1000,
  pro: 10000,
  enterprise: null,
});

/** A plan name as typed on the command line or read from the store. */
export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

/** The quota table with overrides applied (tests and embedders shrink quotas to reach 429 quickly). */
export function resolveQuotas(overrides: Partial<Record<Plan, Quota>> = {}): Readonly<Record<Plan, Quota>> {
  const table = { ...PLAN_QUOTAS };
  for (const plan of PLANS) {
    const value = overrides[plan];
    if (value === undefined) continue;
    if (value !== null && !(Number.isSafeInteger(value) && value >= 0)) {
      throw new TypeError(`plans.${plan}: expected a non-negative integer or null (unlimited), got ${String(value)}`);
    }
    table[plan] = value;
  }
  return Object.freeze(table);
}

/** The 429 message: names the plan and its monthly quota (SPEC 7, CONTRACT 2). */
export function quotaMessage(plan: Plan, total: number): string {
  return `Monthly quota of ${total} requests for the ${plan} plan exceeded`;
}
