// What every command group gets: its streams and environment, so tests can run commands in-process.
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface Io {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The working directory that relative paths are resolved against. */
  readonly cwd: string;
}

/** Exit codes scripts rely on (CONTRACT 6). */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2 } as const;

/** A command-line usage error: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {}

/** A failure the user can act on (invalid data, a missing certificate file...): printed alone, exit code 1. */
export class CommandError extends Error {}

/** `parseArgs` that turns its errors into UsageError, strict about unknown flags. */
export function parseFlags<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Reads all of stdin as text (passwords come only from stdin: `--password-stdin`). */
export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** A password from stdin: the first line, without its line ending. */
export async function readPassword(stdin: NodeJS.ReadableStream): Promise<string> {
  const text = await readStdin(stdin);
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  if (line.length === 0) throw new UsageError('--password-stdin: no password on standard input');
  return line;
}

/**
 * Stored text as the terminal should show it: every control character (C0 with tab and newline, DEL,
 * C1) and Unicode format character (bidi overrides) as a \u{..} escape, so a field can neither drive
 * the operator's terminal (clear it, colour it, retitle the window) nor break a table's columns or
 * lines. Every field of a table or message the CLI prints from the store passes through it (issue 24).
 */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** The state directory of every command: `--state DIR`, else $CELEBRITY_API_STATE, else ./state. */
export function stateDir(flag: string | undefined, io: Io): string {
  return resolve(io.cwd, flag ?? io.env.CELEBRITY_API_STATE ?? 'state');
}

/** A command group: takes the arguments after its name, returns the exit code. */
export type CommandGroup = (args: string[], io: Io) => Promise<number>;

/** A group whose body returns nothing: exit 0 when it ends; failures are thrown, and main maps them to exit codes. */
export const command =
  (body: (args: string[], io: Io) => Promise<void>): CommandGroup =>
  async (args, io) => {
    await body(args, io);
    return EXIT.OK;
  };

/** A flag that the command cannot do without (parseArgs has no notion of required options). */
export function required<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new UsageError(`missing ${flag}`);
  return value;
}

/** At most `count` positional arguments (the subcommand), else a usage error naming the first extra one. */
export function noPositionals(positionals: string[], count: number): void {
  if (positionals.length > count) throw new UsageError(`unexpected argument '${positionals[count]}'`);
}
