// Entry point of `celebrity-api`: dispatches to one command group per file (CONTRACT 6).
import { LockBusyError } from '../store/file/lock-file.ts';
import { AccountError } from '../access/types.ts';
import { UsageLogError } from '../store/file/usage-replay.ts';
import { StoreUnavailableError } from '../store/types.ts';
import { EXIT, UsageError, CommandError, printable, type CommandGroup, type Io } from './io.ts';

const HELP = `Usage: celebrity-api <command> [options]

Commands:
  serve                 run the API server (HTTPS by default)
  accounts              create accounts, change plans, list accounts
  keys                  create, rotate, reveal, revoke and list API keys
  usage                 show an account's quota use and daily counters
  state                 export or import accounts and this month's counters (files <-> Redis)
  data                  check or generate data files
  openapi               print the OpenAPI 3.1 document (--out FILE to write it)

Every command takes --state DIR (default ./state) and answers --help.
Exit codes: 0 ok, 1 failed, 2 usage error.
`;

// Loaded on use: `accounts create` need not load the HTTP server, the dashboard and the data engine.
const GROUPS: Readonly<Record<string, () => Promise<CommandGroup>>> = {
  serve: async () => (await import('./serve.ts')).serve,
  accounts: async () => (await import('./accounts.ts')).accounts,
  keys: async () => (await import('./keys.ts')).keys,
  usage: async () => (await import('./usage.ts')).usage,
  state: async () => (await import('./state.ts')).state,
  data: async () => (await import('./data.ts')).data,
  openapi: async () => (await import('./openapi.ts')).openapi,
};

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr.write(HELP); // a usage error: on stderr, exit 2 (CONTRACT 6)
    return EXIT.USAGE;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP);
    return EXIT.OK;
  }
  const load = Object.hasOwn(GROUPS, name) ? GROUPS[name] : undefined;
  if (!load) {
    io.stderr.write(`celebrity-api: unknown command '${printable(name)}'\n\n${HELP}`);
    return EXIT.USAGE;
  }
  try {
    return await (await load())(rest, io);
  } catch (err) {
    // CONTRACT 6: usage errors and invalid values (a plan, an email) exit 2 with a hint.
    if (err instanceof UsageError || (err instanceof AccountError && err.code.startsWith('INVALID_'))) {
      io.stderr.write(`celebrity-api ${name}: ${shown(err.message)}\nRun 'celebrity-api ${name} --help' for usage.\n`);
      return EXIT.USAGE;
    }
    // What the user can act on (a wrong password, EACCES, ENOSPC, a damaged usage log, a state
    // directory in use) is said plainly and exits 1; anything else is a bug, printed with its stack.
    const known =
      err instanceof CommandError ||
      err instanceof AccountError ||
      err instanceof UsageLogError ||
      err instanceof LockBusyError ||
      err instanceof StoreUnavailableError ||
      typeof (err as NodeJS.ErrnoException).code === 'string';
    io.stderr.write(`celebrity-api ${name}: ${shown(known ? (err as Error).message : ((err as Error).stack ?? String(err)))}\n`);
    return EXIT.FAILED;
  }
}

/** Runs the command line of this process; `serve` returns only once it has shut down. */
export async function run(): Promise<void> {
  // `celebrity-api openapi | head` closes the pipe early: that is the reader's choice, not a crash.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? EXIT.OK);
  });
  const io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
  process.exitCode = await main(process.argv.slice(2), io);
}

/** A message may quote what was typed or stored (an email): its lines are kept, their control characters escaped. */
const shown = (message: string) => message.split('\n').map(printable).join('\n');
