// `celebrity-api accounts create|set-plan|set-email|set-password|list` (CONTRACT 6), and the password and key printing that `keys` shares.
import type { IssuedKey } from '../access/types.ts';
import { PLANS } from '../access/plans.ts';
import { command, noPositionals, parseFlags, printable, readPassword, readStdin, required, UsageError, type CommandGroup, type Io } from './io.ts';
import { STORE_FLAGS, withStore } from './store.ts';
import { canonicalEmail } from '../access/account-ops.ts';

const HELP = `Usage: celebrity-api accounts <command> [options]

Commands:
  create --email E --plan P --password-stdin [--json]
      create an account and its first API key; the key is printed once
      (with --json: {"email","plan","key"} on one line)
  set-plan --email E --plan P
      change the plan; a running server applies it within 2 seconds, the month's count carries over
  set-email --email E --new-email N
      rename the account (its key, password, sessions and usage stay); N must be a valid email
      today, while E may be one stored under the older, looser rule
  set-password --email E --password-stdin
      reads two lines, the current password then the new one; the key stays the same
  list [--json]
      emails, plans and key prefixes (never keys)

Plans: ${PLANS.join(', ')}. The password is read from the first line of standard input.
Options: --state DIR (default ./state, or $CELEBRITY_API_STATE), --redis-url URL (accounts in
Redis, shared by many servers; or $CELEBRITY_API_REDIS_URL), --help
`;

/** The password of --password-stdin, which is the only way to give one (never argv: it shows in `ps`). */
export async function password(flag: boolean | undefined, io: Io): Promise<string> {
  if (!flag) throw new UsageError('missing --password-stdin (passwords are read only from standard input)');
  return readPassword(io.stdin);
}

export function printKey(io: Io, issued: IssuedKey, json: boolean | undefined, note: string): void {
  if (json) {
    io.stdout.write(JSON.stringify({ email: issued.email, plan: issued.plan, key: issued.key }) + '\n');
    return;
  }
  io.stdout.write(`email  ${printable(issued.email)}\nplan   ${issued.plan}\nkey    ${issued.key}\n${note}\n`);
}

export const SHOWN_ONCE = 'This key is shown once: store it now (`keys reveal` shows it again with the password).';

const FLAGS = {
  ...STORE_FLAGS,
  email: { type: 'string' },
  'new-email': { type: 'string' },
  plan: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const accounts: CommandGroup = command(async (args, io) => {
  const { values, positionals } = parseFlags(args, FLAGS);
  const [sub] = positionals;
  if (values.help) {
    io.stdout.write(HELP);
    return;
  }
  if (sub === undefined) throw new UsageError('missing command (create, set-plan, set-email, set-password or list)');
  noPositionals(positionals, 1);
  await withStore(values, io, async ({ accounts: store }) => {
    switch (sub) {
      case 'create': {
        const email = required(values.email, '--email');
        const plan = required(values.plan, '--plan');
        const issued = await store.create({ email, plan, password: await password(values['password-stdin'], io) });
        printKey(io, issued, values.json, SHOWN_ONCE);
        return;
      }
      case 'set-plan': {
        const email = required(values.email, '--email');
        const account = await store.setPlan(email, required(values.plan, '--plan'));
        io.stdout.write(values.json ? JSON.stringify(account) + '\n' : `${printable(account.email)} is now on the ${account.plan} plan\n`);
        return;
      }
      case 'set-email': {
        const email = required(values.email, '--email');
        const account = await store.setEmail(email, required(values['new-email'], '--new-email'));
        io.stdout.write(values.json ? JSON.stringify(account) + '\n' : `${printable(canonicalEmail(email))} is now ${printable(account.email)}\n`);
        return;
      }
      case 'set-password': {
        const email = required(values.email, '--email');
        if (!values['password-stdin']) throw new UsageError('missing --password-stdin (two lines: current password, new password)');
        const [current, next] = (await readStdin(io.stdin)).split(/\r?\n/);
        if (!current || !next) throw new UsageError('--password-stdin: expected two lines, the current password and the new one');
        await store.setPassword(email, current, next);
        io.stdout.write(`password of ${printable(canonicalEmail(email))} changed\n`);
        return;
      }
      case 'list': {
        const list = await store.list();
        if (values.json) {
          io.stdout.write(JSON.stringify(list) + '\n');
          return;
        }
        if (list.length === 0) io.stdout.write('no accounts\n');
        for (const a of list) io.stdout.write([a.email, a.plan, a.keyPrefix ?? '(no key)', a.createdAt].map(printable).join('\t') + '\n');
        return;
      }
      default:
        throw new UsageError(`unknown command '${printable(sub)}' (create, set-plan, set-email, set-password or list)`);
    }
  });
});
