// `celebrity-api openapi [--out FILE]`: prints (or writes) the OpenAPI 3.1 document that the server
// serves at /api/v1/openapi.json, for code generators and API gateways.
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from '../http/openapi.ts';
import { CommandError, EXIT, noPositionals, parseFlags, UsageError, type CommandGroup } from './io.ts';

const HELP = `Usage: celebrity-api openapi [--out FILE]

Prints the OpenAPI 3.1 document of the API (the one served at /api/v1/openapi.json without a key),
indented for reading. With --out it writes the document to FILE instead.
`;

const OPTIONS = { out: { type: 'string' }, state: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

export const openapi: CommandGroup = async (args, io) => {
  const { values, positionals } = parseFlags(args, OPTIONS);
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT.OK;
  }
  noPositionals(positionals, 0);
  // --state is accepted like on every command (CONTRACT 6) and unused: the document depends on no state.
  const text = JSON.stringify(buildOpenApiDocument(), null, 2) + '\n';
  if (values.out === undefined) {
    io.stdout.write(text);
    return EXIT.OK;
  }
  if (values.out === '') throw new UsageError('--out needs a file name');
  const file = resolve(io.cwd, values.out);
  try {
    await writeFile(file, text);
  } catch (err) {
    throw new CommandError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  io.stdout.write(`wrote ${file}\n`);
  return EXIT.OK;
};
