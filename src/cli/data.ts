// `celebrity-api data check|generate|schema`: validate a data directory, write a synthetic one, or
// write the JSON Schema of each data file for editors (CONTRACT 6, 7).
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BUNDLED_DATA } from '../config.ts';
import { DEFAULT_SEED } from '../generate/generate.ts';
import { writeDataset } from '../generate/write-dataset.ts';
import { DataError } from '../data/load.ts';
import { loadSnapshot } from '../data/snapshot.ts';
import { formatProblem } from '../data/validate.ts';
import { RESOURCE_LIST } from '../resources/index.ts';
import { dataFileSchema } from '../resources/json-schema.ts';
import { COLLECTIONS } from '../resources/types.ts';
import { CommandError, EXIT, noPositionals, parseFlags, UsageError, type CommandGroup } from './io.ts';

const HELP = `Usage:
  celebrity-api data check [--data DIR]
      Validates every record of every file (types, required fields, unique _id and slug, slug shape,
      dates, references). Prints each problem as: file, record index (0-based), field: reason.
      Exit 0 when valid, 1 when not.
  celebrity-api data generate --out DIR --scale N [--seed S]
      Writes a consistent synthetic data set: N celebrities and the other collections in proportion.
      The same seed gives the same files (default seed: ${DEFAULT_SEED}).
  celebrity-api data schema --out DIR
      Writes the JSON Schema (2020-12) of each data file, <collection>.schema.json, for editors and
      other validators. They check what one file can show; data check also checks unique _id and
      slug and that references resolve.
`;

const OPTIONS = {
  data: { type: 'string' }, out: { type: 'string' }, scale: { type: 'string' }, seed: { type: 'string' },
  state: { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;

export const data: CommandGroup = async (args, io) => {
  const { values, positionals } = parseFlags(args, OPTIONS);
  const [action] = positionals;
  if (values.help || action === 'help') {
    io.stdout.write(HELP);
    return EXIT.OK;
  }
  noPositionals(positionals, 1);
  if (action === 'check') {
    if (values.out || values.scale || values.seed) throw new UsageError('check takes only --data');
    const dir = values.data === undefined ? BUNDLED_DATA : resolve(io.cwd, values.data);
    try {
      const snapshot = await loadSnapshot(dir);
      const counts = COLLECTIONS.map((c) => `${snapshot.collections[c].size} ${c}`).join(', ');
      io.stdout.write(`${dir}: valid (${counts})\n`);
      return EXIT.OK;
    } catch (err) {
      if (!(err instanceof DataError)) throw err;
      for (const p of err.problems) io.stdout.write(formatProblem(p) + '\n');
      io.stderr.write(`${dir}: ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}\n`);
      return EXIT.FAILED;
    }
  }
  if (action === 'generate') {
    if (values.out === undefined) throw new UsageError('generate needs --out DIR');
    if (values.scale === undefined || !/^[1-9]\d{0,7}$/.test(values.scale)) throw new UsageError('--scale must be an integer from 1 to 99999999');
    const started = performance.now();
    const counts = await writeDataset(resolve(io.cwd, values.out), { scale: Number(values.scale), seed: values.seed ?? DEFAULT_SEED });
    const summary = Object.entries(counts).map(([c, n]) => `${n} ${c}`).join(', ');
    io.stdout.write(`wrote ${summary} to ${values.out} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return EXIT.OK;
  }
  if (action === 'schema') {
    if (values.out === undefined || values.out === '') throw new UsageError('schema needs --out DIR');
    if (values.data || values.scale || values.seed) throw new UsageError('schema takes only --out');
    const dir = resolve(io.cwd, values.out);
    try {
      await mkdir(dir, { recursive: true });
      for (const def of RESOURCE_LIST) await writeFile(join(dir, schemaFile(def.name)), JSON.stringify(dataFileSchema(def), null, 2) + '\n');
    } catch (err) {
      throw new CommandError(`cannot write to ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    io.stdout.write(`wrote ${RESOURCE_LIST.map((d) => schemaFile(d.name)).join(', ')} to ${dir}\n`);
    return EXIT.OK;
  }
  throw new UsageError(action === undefined ? 'missing action: check, generate or schema' : `unknown action '${action}': check, generate or schema`);
};

/** The file `data schema` writes for a collection. */
export const schemaFile = (name: string): string => `${name}.schema.json`;
