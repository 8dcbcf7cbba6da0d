// `celebrity-api usage --email E [--json]` (CONTRACT 6): the month's quota use and daily counters, from the state files.
import { CalendarCache } from '../quota/month.ts';
import { resolveQuotas } from '../access/plans.ts';
import { createUsageService } from '../quota/usage-service.ts';
import { command, noPositionals, parseFlags, printable, required, type CommandGroup } from './io.ts';
import { STORE_FLAGS, withStore } from './store.ts';

const HELP = `Usage: celebrity-api usage --email E [--json] [--state DIR]

Shows the account's plan, requests used this UTC month, the quota (total), what remains, when it
resets (00:00 UTC on the 1st), and this month's daily counters of successful and rejected requests.
Read from the usage log (a running server writes it at least every second), or with --redis-url
from Redis, where it is live (requests in flight included).
With --json: {"email","plan","used","total","remaining","resetsOn","daily":[{"date","success","rejected"}]}
(total and remaining are null for unlimited plans).
Options: --state DIR (default ./state, or $CELEBRITY_API_STATE), --redis-url URL (the store
shared by many servers; or $CELEBRITY_API_REDIS_URL), --help
`;

const FLAGS = {
  ...STORE_FLAGS,
  email: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const usage: CommandGroup = command(async (args, io) => {
  const { values, positionals } = parseFlags(args, FLAGS);
  if (values.help) {
    io.stdout.write(HELP);
    return;
  }
  noPositionals(positionals, 0);
  const email = required(values.email, '--email');
  const report = await withStore(values, io, (store) => createUsageService({ store, quotas: resolveQuotas(), calendar: new CalendarCache(Date.now()), clock: Date.now }).get(email));
  if (values.json) {
    // Exactly the fields of CONTRACT 6, in this order: scripts compare them.
    const { plan, used, total, remaining, resetsOn, daily } = report;
    io.stdout.write(JSON.stringify({ email: report.email, plan, used, total, remaining, resetsOn, daily }) + '\n');
    return;
  }
  const lines = [
    `email      ${printable(report.email)}`,
    `plan       ${report.plan}`,
    `used       ${report.used}`,
    `total      ${report.total ?? 'unlimited'}`,
    `remaining  ${report.remaining ?? 'unlimited'}`,
    `resetsOn   ${report.resetsOn}`,
    `daily      ${report.daily.length === 0 ? '(no requests this month)' : 'date        success  rejected'}`,
    ...report.daily.map((d) => `           ${d.date}  ${String(d.success).padStart(7)}  ${String(d.rejected).padStart(8)}`),
  ];
  io.stdout.write(lines.join('\n') + '\n');
});
