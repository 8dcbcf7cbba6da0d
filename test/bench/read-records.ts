// The streaming record reader at scale (issue 19), never part of npm test:
//   node --import tsx test/bench/read-records.ts DATA_DIR [--big-mb 1100]
// 1. CPU seconds of reading every file of DATA_DIR with readRecords against the same run's
//    baseline (readFile + JSON.parse of each whole file), alternating, twice.
// 2. Bad input at scale, each must be one problem naming file and record: a duplicate slug at the
//    last record of the largest file, and a syntax error in the last record of a file past V8's
//    longest string (built by repeating that file's records to --big-mb MB), with line and column.
import { copyFile, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DataError, readSources } from '../../src/data/load.ts';
import { readRecords } from '../../src/data/records.ts';
import { formatProblem } from '../../src/data/validate.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'big-mb': { type: 'string', default: '1100' } } });
const dir = positionals[0];
if (!dir) throw new Error('usage: read-records.ts DATA_DIR [--big-mb N]');
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function baseline(): Promise<number> {
  const t = cpu();
  for (const def of RESOURCE_LIST) JSON.parse(await readFile(join(dir!, def.file), 'utf8'));
  return cpu() - t;
}

async function streamed(): Promise<number> {
  const t = cpu();
  for (const def of RESOURCE_LIST) {
    const keep: unknown[] = [];
    await readRecords(join(dir!, def.file), (records) => {
      for (const r of records) keep.push(r);
    });
  }
  return cpu() - t;
}

let bytes = 0;
for (const def of RESOURCE_LIST) bytes += (await stat(join(dir, def.file))).size;
console.log(`data: ${(bytes / 1e6).toFixed(0)} MB in ${dir}`);
for (let round = 1; round <= 2; round++) {
  const b = await baseline();
  const s = await streamed();
  console.log(`round ${round}: baseline (readFile + JSON.parse) ${b.toFixed(2)} s CPU, readRecords ${s.toFixed(2)} s CPU, ratio ${(s / b).toFixed(2)}`);
}

const sizes = await Promise.all(RESOURCE_LIST.map(async (def) => [def, (await stat(join(dir, def.file))).size] as const));
const [big] = sizes.reduce((a, b) => (b[1] > a[1] ? b : a));
const work = await mkdtemp(join(tmpdir(), 'celebrity-read-records-'));
try {
  // A duplicate slug at the last record of the largest file, through the whole loader.
  for (const def of RESOURCE_LIST) await copyFile(join(dir, def.file), join(work, def.file));
  const text = await readFile(join(dir, big.file), 'utf8');
  const lastOpen = text.lastIndexOf('\n{');
  const firstSlug = /"slug":"([^"]*)"/.exec(text)![1]!;
  const lastSlug = /"slug":"([^"]*)"/.exec(text.slice(lastOpen))![1]!;
  await writeFile(join(work, big.file), text.slice(0, lastOpen) + text.slice(lastOpen).replace(`"slug":"${lastSlug}"`, `"slug":"${firstSlug}"`));
  let t = performance.now();
  try {
    await readSources(work);
    console.log('duplicate slug at the last record: NOT reported');
  } catch (err) {
    if (!(err instanceof DataError)) throw err;
    console.log(`duplicate slug at the last record (${((performance.now() - t) / 1000).toFixed(1)} s): ${err.problems.map(formatProblem).join(' | ')}`);
  }
  await copyFile(join(dir, big.file), join(work, big.file));

  // A file past V8's longest string: the records of the largest file repeated, the last one broken.
  const body = text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
  const target = Number(values['big-mb']) * 1e6;
  const bigPath = join(work, 'big.json');
  const fh = await open(bigPath, 'w');
  let written = 0;
  let copies = 0;
  await fh.write('[\n');
  while (written + body.length < target) {
    await fh.write(body + ',\n');
    written += Buffer.byteLength(body) + 2;
    copies++;
  }
  await fh.write(body.slice(0, body.lastIndexOf('"slug"')) + '"slug" "broken"}\n]\n');
  await fh.close();
  const size = (await stat(bigPath)).size;
  t = performance.now();
  const c = cpu();
  try {
    await readRecords(bigPath, () => {});
    console.log('syntax error in a big file: NOT reported');
  } catch (err) {
    const e = err as { index: number | null; offset: number | null; reason: string };
    console.log(`syntax error in the last record of a ${(size / 1e6).toFixed(0)} MB file (${copies + 1} copies): record ${e.index}, byte ${e.offset}: ${e.reason} (${((performance.now() - t) / 1000).toFixed(1)} s, ${(cpu() - c).toFixed(1)} s CPU)`);
  }
  // Through the loader, in place of the largest file: file, record, line and column.
  await rm(join(work, big.file));
  await copyFile(bigPath, join(work, big.file));
  await rm(bigPath);
  t = performance.now();
  try {
    await readSources(work);
  } catch (err) {
    if (!(err instanceof DataError)) throw err;
    console.log(`loader on it (${((performance.now() - t) / 1000).toFixed(1)} s): ${err.problems.slice(0, 3).map(formatProblem).join(' | ')}`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
