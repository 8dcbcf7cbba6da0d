// `celebrity-api keys create|rotate|reveal|revoke|list` (CONTRACT 6): the key itself is printed only by create, rotate and reveal.
import { password, printKey, SHOWN_ONCE } from './accounts.ts';
import { command, noPositionals, parseFlags, printable, required, UsageError, type CommandGroup } from './io.ts';
import { STORE_FLAGS, withStore } from './store.ts';

const HELP = `Usage: celebrity-api keys <command> [options]

Commands:
  create --email E --password-stdin [--json]
      a first key for an account that has none (use rotate to replace an active key)
  rotate --email E --password-stdin [--json]
      a new key; the previous one stops working (a running server applies it within 2 seconds)
  reveal --email E --password-stdin [--json]
      shows the active key again; needs the account password
  revoke --email E
      the key stops working (within 2 seconds on a running server); create a new one with create
  list [--json]
      key prefixes and status of every account (never keys)

With --json, create, rotate and reveal print {"email","plan","key"} on one line.
The password is read from the first line of standard input.
Options: --state DIR (default ./state, or $CELEBRITY_API_STATE), --redis-url URL (accounts in
Redis, shared by many servers; or $CELEBRITY_API_REDIS_URL), --help
`;

const FLAGS = {
  ...STORE_FLAGS,
  email: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COMMANDS = 'create, rotate, reveal, revoke or list';

export const keys: CommandGroup = command(async (args, io) => {
  const { values, positionals } = parseFlags(args, FLAGS);
  const [sub] = positionals;
  if (values.help) {
    io.stdout.write(HELP);
    return;
  }
  if (sub === undefined) throw new UsageError(`missing command (${COMMANDS})`);
  noPositionals(positionals, 1);
  await withStore(values, io, async ({ accounts: store }) => {
    switch (sub) {
      case 'create':
      case 'rotate':
      case 'reveal': {
        const email = required(values.email, '--email');
        const pw = await password(values['password-stdin'], io);
        const s = store;
        if (sub === 'reveal') {
          printKey(io, await s.revealKey(email, pw), values.json, 'Keep it out of client-side code, repositories and logs.');
        } else if (sub === 'create') {
          printKey(io, await s.createKey(email, pw), values.json, SHOWN_ONCE);
        } else {
          printKey(io, await s.rotateKey(email, pw), values.json, `${SHOWN_ONCE}\nThe previous key is revoked.`);
        }
        return;
      }
      case 'revoke': {
        const revoked = await store.revokeKey(required(values.email, '--email'));
        io.stdout.write(values.json ? JSON.stringify(revoked) + '\n' : `revoked ${printable(revoked.prefix)} of ${printable(revoked.email)}\n`);
        return;
      }
      case 'list': {
        const list = await store.keys();
        if (values.json) {
          io.stdout.write(JSON.stringify(list) + '\n');
          return;
        }
        if (list.length === 0) io.stdout.write('no keys\n');
        for (const k of list) io.stdout.write([k.email, k.prefix, k.status, k.createdAt, ...(k.revokedAt ? [`revoked ${k.revokedAt}`] : [])].map(printable).join('\t') + '\n');
        return;
      }
      default:
        throw new UsageError(`unknown command '${sub}' (${COMMANDS})`);
    }
  });
});
