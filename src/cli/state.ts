// `celebrity-api state export|import` (issue 10): moves accounts and this month's counters between
// the state directory and Redis, either way, through a JSON document.
import { open, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { exportState, importState, parseStateDump } from '../store/transfer.ts';
import { command, CommandError, noPositionals, parseFlags, readStdin, UsageError, type CommandGroup } from './io.ts';
import { STORE_FLAGS, withStore } from './store.ts';

const HELP = `Usage: celebrity-api state <command> [options]

Commands:
  export [--out FILE]
      writes every account (email, plan, password hash, sealed key: never a key in clear) and this
      UTC month's counters (used, daily counters, last use) as JSON, to FILE (created 0600, never
      overwritten) or to standard output
  import [--in FILE] [--force]
      reads what export wrote (from FILE or standard input) into the store; refuses when the store
      already has accounts, unless --force, which replaces them. The counters go into the month
      they were exported from.

The store is Redis with --redis-url URL (or $CELEBRITY_API_REDIS_URL), else the state directory
(--state DIR, default ./state, or $CELEBRITY_API_STATE). From files to Redis:
  celebrity-api state export --state ./state --out state.json
  celebrity-api state import --redis-url redis://127.0.0.1:6379 --in state.json
Importing into a state directory needs its servers stopped (it writes the usage log); export
beside a running file server may miss its last second of counts.
Options: --help
`;

const FLAGS = {
  ...STORE_FLAGS,
  out: { type: 'string' },
  in: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const state: CommandGroup = command(async (args, io) => {
  const { values, positionals } = parseFlags(args, FLAGS);
  const [sub] = positionals;
  if (values.help) {
    io.stdout.write(HELP);
    return;
  }
  if (sub === undefined) throw new UsageError('missing command (export or import)');
  noPositionals(positionals, 1);
  switch (sub) {
    case 'export': {
      if (values.in !== undefined || values.force) throw new UsageError('--in and --force are for import');
      const dump = await withStore(values, io, (store) => exportState(store, Date.now()));
      const text = JSON.stringify(dump, null, 2) + '\n';
      if (values.out === undefined) {
        io.stdout.write(text);
        return;
      }
      const path = resolve(io.cwd, values.out);
      // Password hashes and sealed keys: owner-only, and never over a file that exists.
      const fh = await open(path, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EEXIST') throw new CommandError(`${path} exists; choose another --out (an export never overwrites)`);
        throw err;
      });
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      io.stderr.write(`exported ${dump.accounts.length} accounts and the ${dump.month} usage of ${dump.usage.length} to ${path}\n`);
      return;
    }
    case 'import': {
      if (values.out !== undefined) throw new UsageError('--out is for export');
      const source = values.in === undefined ? 'standard input' : resolve(io.cwd, values.in);
      const text = values.in === undefined ? await readStdin(io.stdin) : await readFile(source, 'utf8');
      const dump = parseStateDump(text, source);
      const done = await withStore(values, io, (store) => importState(store, dump, values.force === true));
      io.stdout.write(`imported ${done.accounts} accounts and the ${done.month} usage of ${done.usage}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command '${sub}' (export or import)`);
  }
});
