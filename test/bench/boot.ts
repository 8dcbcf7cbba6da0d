// `npm run bench:boot` (issue 19): what a start costs at each scale, against the same run's baseline
// (one thread reading the same five files and JSON.parse-ing each, nothing else). Per scale: a first
// start on a fresh state directory, a restart from the boot cache, --watch reloads after touching one
// file (new times, the same bytes: nothing is rebuilt) and after editing one of its records (what it
// makes is rebuilt), RSS after each, to show growth; a restart after a touch and after an edit. Servers run through the
// real CLI as child processes; RSS and peak RSS come from /proc. On the first start, once its memory is
// read, the latency of a list page, a filter, a search and a detail: wrk from 127.0.0.1, a short bounded
// load per endpoint (--latency-seconds, 2 connections), each request a target not asked before (so no
// kept page answers it; search terms cycle over a few thousand names). Never part of `npm test`.
// A watchdog samples each server's RSS every second, logs it every minute, and stops the run when it
// passes --max-rss-gb (18 by default: the machine is shared), saying where.
// The edit (--edit): `case` flips the case of the first letter of a title (the search text and sort
// keys stay: only the record's JSON changes), `title` turns that letter into another one (rot13: the
// search text, its grams and the title order change too, as when a person retitles an outfit),
// `category` does that to the first letter of a category (a filter value: a key no record had);
// `append` adds a record at the end of the file each time (a copy of the last one with its own
// _id, slug and title; the file as it was put back at the end of the run); `remove` removes the
// last record each time (put back at the end of the run); `career` and `name` rot13 the first letter
// of a celebrity's career (shown by its detail alone) or name (embedded in outfits, news and movie
// casts): use them with --touch celebrities.json; `character` does that to a movie cast entry's character
// (which the celebrity's filmography shows): use it with --touch movies.json; `insert` inserts a record
// in the middle (every later record moves one on), and the next edit takes it out again.
//   npm run bench:boot -- [--scales 10k,100k] [--touch outfits.json] [--edit case|title|category|append|remove|insert|career|name|character] [--reloads 2] [--no-touch] [--latency-seconds 5] [--max-rss-gb 18] [--work DIR] [--seed S]
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CLI, SERVER_ENV, cli, fetchOnce, memoryOf, stop, stopAll } from './server.ts';
import { ensureWrk, runLoad, type LoadResult } from './wrk.ts';

const { values: flags } = parseArgs({
  options: {
    scales: { type: 'string', default: '10k,100k' },
    touch: { type: 'string', default: 'outfits.json' },
    edit: { type: 'string', default: 'case' },
    reloads: { type: 'string', default: '2' },
    'no-touch': { type: 'boolean', default: false },
    'latency-seconds': { type: 'string', default: '5' },
    'max-rss-gb': { type: 'string', default: '18' },
    seed: { type: 'string', default: 'bench' },
    work: { type: 'string', default: join(os.tmpdir(), 'celebrity-api-bench') },
  },
});
const scaleOf = (s: string): number => {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(s.trim());
  if (!m) throw new Error(`--scales: not a scale: ${s}`);
  return Math.round(Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2]!) ? 1e3 : 1e6));
};
const SCALES = flags.scales!.split(',').map(scaleOf);
const EDIT = flags.edit!;
if (!['case', 'title', 'category', 'append', 'remove', 'insert', 'career', 'name', 'character'].includes(EDIT)) throw new Error(`--edit: case, title, category, append, remove, insert, career, name or character, not ${EDIT}`);
/** The field whose value's first letter is edited. */
const EDITED_FIELD = EDIT === 'category' || EDIT === 'career' || EDIT === 'name' || EDIT === 'character' ? EDIT : 'title';
/** The edited letter: its case flipped, or rot13 (a letter 13 places on, the same case): done twice, the letter it was. */
const edited = (c: number): number => (EDIT === 'case' ? c ^ 0x20 : ((((c | 0x20) - 0x61 + 13) % 26) + 0x61) & (c | ~0x20));
const RELOADS = Number(flags.reloads);
const LATENCY_SECONDS = Number(flags['latency-seconds']);
const BOOT_TIMEOUT_MS = 3_600_000;
/** A server whose RSS passes this is stopped (the machine is shared): the run fails saying when. */
const MAX_RSS_MB = Number(flags['max-rss-gb']) * 1000;
const log = (line: string) => process.stderr.write(`[bench:boot] ${line}\n`);
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** Generated data sets are cached by scale and seed (the same directories `npm run bench` uses). */
async function dataSet(scale: number): Promise<string> {
  const dir = join(flags.work!, `data-${scale}-${flags.seed}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  await mkdir(flags.work!, { recursive: true });
  const tmp = `${dir}.tmp`;
  await rm(tmp, { recursive: true, force: true });
  log(`generating scale ${scale} into ${dir}`);
  await cli(['data', 'generate', '--out', tmp, '--scale', String(scale), '--seed', flags.seed!], undefined, BOOT_TIMEOUT_MS);
  await writeFile(join(tmp, '.complete'), '');
  await rename(tmp, dir);
  return dir;
}

async function dataBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) if (f.endsWith('.json')) total += (await stat(join(dir, f))).size;
  return total;
}

/** The baseline in a child of its own (a fresh heap, like the server's): seconds in all and per file. */
function baseline(dir: string): Promise<{ total: number; files: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./read-parse.ts', import.meta.url)), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`read-parse exited ${code}`))));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (NaN where there is none). */
function cpuOf(pid: number): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 a second on Linux).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Resolves once the boot cache of a first start is on disk: a file per collection, no temp file left. */
async function cacheWritten(state: string, child: ChildProcess): Promise<number> {
  const dir = join(state, 'cache');
  const t0 = performance.now();
  for (;;) {
    const names = existsSync(dir) ? await readdir(dir) : [];
    if (names.filter((f) => f.endsWith('.bin')).length === 5 && names.every((f) => f.endsWith('.bin'))) return (performance.now() - t0) / 1000;
    if (child.exitCode !== null || performance.now() - t0 > BOOT_TIMEOUT_MS) throw new Error(`no boot cache in ${dir}: ${names.join(', ')}`);
    await sleep(100);
  }
}

interface Server {
  readonly child: ChildProcess;
  readonly seconds: number;
  /** CPU seconds of the process at its `listening on` line. */
  readonly cpu: number;
  /** The `listening on` address, with 127.0.0.1 for localhost. */
  readonly url: string;
  /** Resolves at the next stderr line that contains `text`, with the time it was seen. */
  until(text: string): Promise<number>;
}

/** `serve` on port 0 over plain HTTP; resolves at its `listening on` line (the server is ready). */
function serve(data: string, state: string, watch: boolean): Promise<Server> {
  // (At info: each load's line, what it built, patched or kept, is shown beside its figure.)
  const args = [CLI, 'serve', '--data', data, '--state', state, '--port', '0', '--insecure-http', '--log-level', 'info'];
  if (watch) args.push('--watch');
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: SERVER_ENV });
  let err = '';
  const waiters: { text: string; from: number; done: (t: number) => void }[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    const from = err.lastIndexOf('\n') + 1;
    err += d;
    for (const line of err.slice(from).split('\n').slice(0, -1)) if (/"msg":"(data read and indexed|data loaded from the boot cache|no data file changed)/.test(line)) log(`  ${line.slice(0, 400)}`);
    for (const w of [...waiters]) {
      if (err.indexOf(w.text, w.from) >= 0) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done(performance.now());
      }
    }
  });
  const until = (text: string) => new Promise<number>((done) => waiters.push({ text, from: err.length, done }));
  return new Promise((resolve, reject) => {
    let out = '';
    let ticks = 0;
    const watchdog = setInterval(() => {
      const { rss, peak } = memoryOf(child.pid!);
      if (++ticks % 60 === 0) log(`  ${ticks} s: RSS ${f0(rss * 1.048576)} MB, peak ${f0(peak * 1.048576)} MB, load ${os.loadavg()[0]!.toFixed(1)}`);
      if (rss * 1.048576 > MAX_RSS_MB) {
        log(`watchdog: RSS ${f0(rss * 1.048576)} MB passed ${MAX_RSS_MB} MB ${ticks} s after the spawn; last lines:\n${err.slice(-2000)}`);
        clearInterval(watchdog);
        child.kill('SIGKILL');
      }
    }, 1000);
    watchdog.unref();
    child.once('exit', () => clearInterval(watchdog));
    const timer = setTimeout(() => {
      void stop(child);
      reject(new Error(`serve did not listen in time\n${err.slice(-4000)}`));
    }, BOOT_TIMEOUT_MS);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        const cpu = cpuOf(child.pid!);
        resolve({ child, seconds: (performance.now() - t0) / 1000, cpu, url: m[1]!.replace('localhost', '127.0.0.1'), until });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}\n${err.slice(-4000)}`));
    });
  });
}

/** Bytes of the boot cache files in a state directory (NaN when there are none). */
async function cacheBytes(state: string): Promise<number> {
  const dir = join(state, 'cache');
  const names = existsSync(dir) ? (await readdir(dir)).filter((f) => f.endsWith('.bin')) : [];
  let total = 0;
  for (const f of names) total += (await stat(join(dir, f))).size;
  return names.length === 0 ? NaN : total;
}

/** Marks a data file as changed (new mtime and ctime), its content untouched. */
/** A touch: new times, the same bytes (which the boot cache and a reload tell apart from an edit, src/data/content-digest.ts). */
async function touch(file: string): Promise<void> {
  const now = new Date();
  await utimes(file, now, now);
}

/**
 * An edit of one record: the first letter of the title (or category) of the record in the middle of the file
 * changed (`edited`: same size; a second edit puts it back). Returns what it changed, for the log.
 */
async function editRecord(file: string): Promise<string> {
  if (EDIT === 'append') return appendRecord(file);
  if (EDIT === 'remove') return removeLastRecord(file);
  if (EDIT === 'insert') return insertRecord(file);
  const { size } = await stat(file);
  const fh = await open(file, 'r+');
  try {
    const window = Buffer.alloc(Math.min(1 << 16, size));
    const from = Math.max(0, Math.floor(size / 2) - window.length);
    await fh.read(window, 0, window.length, from);
    const key = Buffer.from(`"${EDITED_FIELD}":"`);
    for (let at = window.indexOf(key); at >= 0; at = window.indexOf(key, at + 1)) {
      const c = window[at + key.length];
      if (c === undefined || !((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a))) continue;
      await fh.write(Buffer.from([edited(c)]), 0, 1, from + at + key.length);
      return `byte ${from + at + key.length}: ${String.fromCharCode(c)} -> ${String.fromCharCode(edited(c))}`;
    }
    throw new Error(`${file}: no ${EDITED_FIELD} starting with a letter near the middle`);
  } finally {
    await fh.close();
  }
}

/** Where the file's last record ended before the first record was added, and the bytes after it. */
let appendedAt: { readonly at: number; readonly tail: Buffer } | null = null;

/** A record added at the end of a file of one record per line (`data generate`): a copy of the last one, its _id, slug and title its own. */
async function appendRecord(file: string): Promise<string> {
  const { size } = await stat(file);
  const fh = await open(file, 'r+');
  try {
    const window = Buffer.alloc(Math.min(1 << 20, size));
    await fh.read(window, 0, window.length, size - window.length);
    const end = window.lastIndexOf('}') + 1;
    const start = window.lastIndexOf('\n{', end) + 1;
    const r = JSON.parse(window.toString('utf8', start, end)) as Record<string, unknown>;
    const n = (appendedAt === null ? 0 : 1) + Date.now();
    r._id = `added${n}`;
    r.slug = `added-record-${n}`;
    // (A celebrity has a name where the others have a title.)
    if ('name' in r && !('title' in r)) r.name = `Added Record ${n}`;
    else r.title = `Added Record ${n}`;
    appendedAt ??= { at: size - window.length + end, tail: Buffer.from(window.subarray(end)) };
    const added = Buffer.from(`,\n${JSON.stringify(r)}${window.toString('utf8', end)}`);
    await fh.write(added, 0, added.length, size - window.length + end);
    return `a record added at byte ${size - window.length + end}: ${r.slug as string}`;
  } finally {
    await fh.close();
  }
}

/** The last record of a file of one record per line removed (the bytes from the end of the one before it kept for `unappend`). */
async function removeLastRecord(file: string): Promise<string> {
  const { size } = await stat(file);
  const fh = await open(file, 'r+');
  try {
    const window = Buffer.alloc(Math.min(1 << 20, size));
    await fh.read(window, 0, window.length, size - window.length);
    const last = window.lastIndexOf('\n{');
    const end = window.lastIndexOf('}', last) + 1;
    const at = size - window.length + end;
    const tail = Buffer.from(window.subarray(end));
    // What `unappend` writes back: the original bytes from the earliest cut on.
    appendedAt = { at, tail: appendedAt === null ? tail : Buffer.concat([tail.subarray(0, appendedAt.at - at), appendedAt.tail]) };
    const closing = Buffer.from(window.toString('utf8', window.lastIndexOf('}') + 1));
    await fh.truncate(at);
    await fh.write(closing, 0, closing.length, at);
    return `the last record removed (bytes ${at} on)`;
  } finally {
    await fh.close();
  }
}

/**
 * A record inserted in the middle of a file of one record per line (a copy of the one there, its
 * _id, slug and title or name its own: every later record moves one on); the next edit takes it out
 * again (`unappend`: every later record moves back).
 */
async function insertRecord(file: string): Promise<string> {
  if (appendedAt !== null) {
    await unappend(file);
    return 'the inserted record removed (every later record moves back)';
  }
  const { size } = await stat(file);
  const fh = await open(file, 'r+');
  try {
    const window = Buffer.alloc(Math.min(1 << 20, size));
    const from = Math.max(0, Math.floor(size / 2) - (window.length >> 1));
    await fh.read(window, 0, window.length, from);
    const start = window.indexOf('\n{') + 1;
    const end = window.indexOf('\n', start);
    const r = JSON.parse(window.toString('utf8', start, end).replace(/,$/, '')) as Record<string, unknown>;
    const n = Date.now();
    r._id = `inserted${n}`;
    r.slug = `inserted-record-${n}`;
    if ('name' in r && !('title' in r)) r.name = `Inserted Record ${n}`;
    else r.title = `Inserted Record ${n}`;
    const at = from + start;
    const tail = Buffer.alloc(size - at);
    await fh.read(tail, 0, tail.length, at);
    appendedAt = { at, tail };
    const added = Buffer.from(`${JSON.stringify(r)},\n`);
    await fh.write(Buffer.concat([added, tail]), 0, added.length + tail.length, at);
    return `a record inserted at byte ${at} (every later record moves one on): ${r.slug as string}`;
  } finally {
    await fh.close();
  }
}

/** The file as it was before the first record was added (or removed, or inserted). */
async function unappend(file: string): Promise<void> {
  if (appendedAt === null) return;
  const fh = await open(file, 'r+');
  try {
    await fh.truncate(appendedAt.at);
    await fh.write(appendedAt.tail, 0, appendedAt.tail.length, appendedAt.at);
  } finally {
    await fh.close();
  }
  appendedAt = null;
}

const ENDPOINTS = ['list', 'filter', 'search', 'detail'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

/**
 * Targets for each endpoint, from what the data holds (celebrities): list pages spread over the whole
 * collection, a filter (nationality, sorted by name) over its pages, a full-name search, a detail.
 */
async function targets(url: string, key: string): Promise<Record<Endpoint, string[]>> {
  const get = async (path: string) => {
    const r = await fetchOnce(url + path, { 'x-api-key': key });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.body.toString().slice(0, 200)}`);
    return JSON.parse(r.body.toString()) as { data: { slug: string; name: string; nationality: string }[]; pagination: { total: number } };
  };
  const total = (await get('/api/v1/celebrities?limit=1')).pagination.total;
  const pages = Math.max(1, Math.ceil(total / 50));
  const slugs: string[] = [];
  const names = new Set<string>();
  const nationalities = new Map<string, number>();
  for (let i = 0; i < 40; i++) {
    const body = await get(`/api/v1/celebrities?limit=50&page=${1 + Math.floor((i * pages) / 40)}`);
    for (const r of body.data) {
      slugs.push(r.slug);
      names.add(r.name.toLowerCase());
      nationalities.set(r.nationality, (nationalities.get(r.nationality) ?? 0) + 1);
    }
  }
  const q = encodeURIComponent;
  const common = [...nationalities].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([n]) => n);
  const listPages = Math.max(1, Math.floor(total / 20));
  const filters: string[] = [];
  for (const n of common) {
    const count = (await get(`/api/v1/celebrities?nationality=${q(n)}&limit=1`)).pagination.total;
    for (let i = 0; i < 50; i++) filters.push(`/api/v1/celebrities?nationality=${q(n)}&sort=name_asc&page=${1 + Math.floor((i * Math.max(1, Math.floor(count / 20))) / 50)}&v=`);
  }
  return {
    list: Array.from({ length: 400 }, (_, i) => `/api/v1/celebrities?page=${1 + Math.floor((i * listPages) / 400)}&v=`),
    filter: filters,
    search: [...names].map((n) => `/api/v1/celebrities?search=${q(n)}&v=`),
    detail: slugs.map((s) => `/api/v1/celebrities/${s}`),
  };
}

/** A wrk script that cycles through `paths`; a path ending in `v=` gets a number never sent before. */
async function cycleScript(dir: string, name: string, paths: readonly string[]): Promise<string> {
  const file = join(dir, `${name}.lua`);
  const lua = [
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(',\n')}}`,
    'local i = 0',
    'request = function()',
    '  i = i + 1',
    '  local p = paths[(i - 1) % #paths + 1]',
    '  if p:sub(-2) == "v=" then p = p .. i end',
    '  return wrk.format(nil, p)',
    'end',
    '',
  ];
  await writeFile(file, lua.join('\n'));
  return file;
}

/** p50 and p99 of each endpoint on a running server: one short wrk run each, one after the other. */
async function latencies(url: string, key: string, dir: string): Promise<Record<Endpoint, LoadResult>> {
  const wrk = ensureWrk(log);
  const paths = await targets(url, key);
  const out = {} as Record<Endpoint, LoadResult>;
  for (const e of ENDPOINTS) {
    // The first target answers with records (a search or filter that matched nothing would measure little).
    const probe = await fetchOnce(url + paths[e][0]! + (paths[e][0]!.endsWith('v=') ? '0' : ''), { 'x-api-key': key });
    const body = JSON.parse(probe.body.toString()) as { data?: unknown };
    if (probe.status !== 200 || !(Array.isArray(body.data) ? body.data.length > 0 : typeof body.data === 'object')) throw new Error(`latency of ${e}: ${paths[e][0]} answered ${probe.status} without records`);
    const script = await cycleScript(dir, e, paths[e]);
    out[e] = await runLoad(wrk, { url, seconds: LATENCY_SECONDS, connections: 2, headers: { 'x-api-key': key }, script });
    if (out[e].non2xx > 0 || out[e].errors > 0) throw new Error(`latency of ${e}: ${out[e].non2xx} non-2xx answers, ${out[e].errors} socket errors`);
    log(`  ${e}: ${out[e].requests} requests over ${paths[e].length} targets, p50 ${out[e].p50.toFixed(2)} ms, p99 ${out[e].p99.toFixed(2)} ms (load ${os.loadavg()[0]!.toFixed(1)})`);
  }
  return out;
}

interface Row {
  scale: number;
  dataMB: number;
  first: number;
  firstCpu: number;
  base: number;
  restart: number;
  touched: number;
  edited: number;
  touchedBase: number;
  reloads: number[];
  editReloads: number[];
  reloadRss: number[];
  rss: number;
  peak: number;
  restartRss: number;
  cacheMB: number;
  latency: Record<Endpoint, LoadResult> | null;
}

async function measure(scale: number): Promise<Row> {
  const data = await dataSet(scale);
  const touched = join(data, flags.touch!);
  const bytes = await dataBytes(data);
  log(`scale ${scale}: ${(bytes / 1e6).toFixed(0)} MB; baseline (read + JSON.parse, one thread)`);
  const base = await baseline(data);
  const state = await mkdtemp(join(os.tmpdir(), 'celebrity-api-bench-boot-'));
  try {
    // The account is made before the first start (it does not read the data); the state is otherwise fresh.
    const key = LATENCY_SECONDS > 0
      ? (JSON.parse(await cli(['accounts', 'create', '--state', state, '--email', 'boot@example.com', '--plan', 'enterprise', '--password-stdin', '--json'], 'bench password 1234\n')).key as string)
      : '';
    log(`scale ${scale}: first start`);
    const first = await serve(data, state, false);
    const mem = memoryOf(first.child.pid!);
    // The server writes its boot cache once it listens: the latency and the restart wait for it.
    log(`scale ${scale}: first start listening after ${first.seconds.toFixed(1)} s, ${first.cpu.toFixed(1)} s CPU (load ${os.loadavg().map(f1).join(' ')}); waiting for the boot cache`);
    const written = await cacheWritten(state, first.child);
    log(`scale ${scale}: boot cache written ${written.toFixed(1)} s after listening`);
    let latency: Row['latency'] = null;
    if (LATENCY_SECONDS > 0) {
      log(`scale ${scale}: latency on the first start, ${LATENCY_SECONDS} s of wrk per endpoint`);
      latency = await latencies(first.url, key, state);
    }
    await stop(first.child);
    const cacheMB = await cacheBytes(state) / 1e6;
    log(`scale ${scale}: first ${first.seconds.toFixed(1)} s; restart from the boot cache`);
    const again = await serve(data, state, RELOADS > 0);
    const restartRss = memoryOf(again.child.pid!).rss;
    const reloads: number[] = [];
    const editReloads: number[] = [];
    const reloadRss: number[] = [];
    let edits = 0;
    let afterTouch = { seconds: NaN };
    let afterEdit = { seconds: NaN };
    try {
      // --watch reloads: after touches (the same bytes: nothing rebuilt), then after one-record edits.
      for (const [kind, times] of [['touch', reloads], ['edit', editReloads]] as const) {
        for (let i = 0; i < RELOADS; i++) {
          log(`scale ${scale}: --watch reload ${i + 1} after ${kind === 'touch' ? 'touching' : 'editing one record of'} ${flags.touch}`);
          const seen = again.until('"data reloaded"');
          const t0 = performance.now();
          if (kind === 'touch') await touch(touched);
          else log(`  ${await editRecord(touched)}`), edits++;
          times.push(((await seen) - t0) / 1000);
          reloadRss.push(memoryOf(again.child.pid!).rss);
        }
      }
      await stop(again.child);
      if (!flags['no-touch']) {
        log(`scale ${scale}: restart after touching ${flags.touch}`);
        await touch(touched);
        const s = await serve(data, state, false);
        await stop(s.child);
        afterTouch = s;
        // (CPU seconds too: wall seconds on a busy machine are the machine's more than the code's.)
        log(`  listening after ${s.seconds.toFixed(2)} s, ${s.cpu.toFixed(2)} s CPU (load ${os.loadavg().map(f1).join(' ')})`);
        log(`scale ${scale}: restart after editing one record of ${flags.touch}`);
        log(`  ${await editRecord(touched)}`);
        edits++;
        const e = await serve(data, state, false);
        await stop(e.child);
        afterEdit = e;
        log(`  listening after ${e.seconds.toFixed(2)} s, ${e.cpu.toFixed(2)} s CPU (load ${os.loadavg().map(f1).join(' ')})`);
      }
    } finally {
      // The data set as generated again (each edit undoes the one before).
      if (EDIT === 'append' || EDIT === 'remove' || EDIT === 'insert') await unappend(touched);
      else if (edits % 2 === 1) await editRecord(touched);
    }
    return {
      scale, dataMB: bytes / 1e6, first: first.seconds, firstCpu: first.cpu, base: base.total, restart: again.seconds, touched: afterTouch.seconds, edited: afterEdit.seconds,
      touchedBase: base.files[flags.touch!] ?? NaN, reloads, editReloads, reloadRss, rss: mem.rss, peak: mem.peak, restartRss, cacheMB, latency,
    };
  } finally {
    await rm(state, { recursive: true, force: true });
  }
}


const rows: Row[] = [];
try {
  for (const scale of SCALES) rows.push(await measure(scale));
} finally {
  await stopAll();
}
console.log(`Node ${process.version}, ${os.cpus().length} cores; touched and edited file: ${flags.touch} (touch: new times, the same bytes; edit (${EDIT}): ${EDIT === 'append' ? 'a record added at the end' : EDIT === 'remove' ? 'the last record removed' : EDIT === 'insert' ? 'a record inserted in the middle, then taken out' : `one record's ${EDITED_FIELD} changed, same size`}); reload = touch or edit to the "data reloaded" line (300 ms debounce included)\n`);
console.log(`latency: wrk, 2 connections, ${LATENCY_SECONDS} s per endpoint on the first start, p50 / p99 ms; load average ${os.loadavg().map(f1).join(' ')}\n`);
console.log('| scale | data MB | first start s | first start CPU s | baseline s | ratio | restart s | restart after touch s | restart after edit s | touched file baseline s | reload after touch s | reload after edit s | RSS MB at ready | peak RSS MB | RSS MB at restart | RSS MB after reloads | boot cache MB | list ms | filter ms | search ms | detail ms |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|');
const lat = (r: Row, e: Endpoint) => (r.latency ? `${f2(r.latency[e].p50)} / ${f2(r.latency[e].p99)}` : '-');
for (const r of rows) {
  console.log(
    `| ${r.scale} | ${f0(r.dataMB)} | ${f1(r.first)} | ${f1(r.firstCpu)} | ${f1(r.base)} | ${f2(r.first / r.base)} | ${f2(r.restart)} | ${f1(r.touched)} | ${f1(r.edited)} | ${f1(r.touchedBase)} | ` +
      `${r.reloads.map(f1).join(', ') || '-'} | ${r.editReloads.map(f1).join(', ') || '-'} | ${f0(r.rss * 1.048576)} | ${f0(r.peak * 1.048576)} | ${f0(r.restartRss * 1.048576)} | ${r.reloadRss.map((x) => f0(x * 1.048576)).join(' -> ') || '-'} | ${f0(r.cacheMB)} | ` +
      `${ENDPOINTS.map((e) => lat(r, e)).join(' | ')} |`,
  );
}
