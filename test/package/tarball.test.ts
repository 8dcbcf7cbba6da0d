// The published package: `npm run build`, `npm pack`, install the tarball into an empty project
// (no registry needed: zero runtime dependencies) and use the CLI, startServer and the types there.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertMatchesDocument, fetchChecked } from '../helpers/openapi-validator.ts';
import { spawnListening } from '../helpers/serve-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let tmp: string;
let project: string;
let packed: { filename: string; files: { path: string }[] };

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'celebrity-pack-'));
  project = join(tmp, 'project');
  await mkdir(project);
  npm(['run', 'build', '--silent'], ROOT);
  // --ignore-scripts: prepack would build again, and its output would break --json on stdout.
  packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], ROOT))[0];
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // --omit=optional: the file-only server must run without `redis` (the Redis store's client).
  npm(['install', join(tmp, packed.filename), '--offline', '--omit=optional', '--no-audit', '--no-fund', '--no-package-lock'], project);
});
after(() => rm(tmp, { recursive: true, force: true }));

test('the tarball holds the bundles, declarations, bin and data, and no sources', () => {
  const paths = packed.files.map((f) => f.path);
  for (const p of ['package.json', 'bin/celebrity-api', 'dist/cli.js', 'dist/index.js', 'dist/client.js', 'dist/types/index.d.ts', 'dist/types/client/index.d.ts', 'data/celebrities.json', 'data/reviews.json']) {
    assert.ok(paths.includes(p), `missing ${p}`);
  }
  assert.deepEqual(paths.filter((p) => /^(src|test|\.ci|state)\/|^dist\/sea\//.test(p)), []);
});

test('installed: `npx celebrity-api data check` validates the bundled data', () => {
  const out = execFileSync('npx', ['--no-install', 'celebrity-api', 'data', 'check'], { cwd: project, encoding: 'utf8' });
  assert.match(out, /node_modules\/celebrity-api\/data: valid \(150 celebrities, /);
});

test('installed: `celebrity-api serve --insecure-http --port 0` answers 401 without a key, stops on SIGTERM', async () => {
  const bin = join(project, 'node_modules/.bin/celebrity-api');
  const server = await spawnListening(bin, ['serve', '--insecure-http', '--port', '0', '--state', join(tmp, 'state')], { cwd: project });
  try {
    const res = await fetchChecked(`${server.url}/api/v1/celebrities`);
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'INVALID_API_KEY');
  } finally {
    assert.equal(await server.stop(), 0, server.stderr());
  }
});

test("installed: `import { startServer } from 'celebrity-api'` runs a server with the bundled data", async () => {
  await writeFile(
    join(project, 'app.mjs'),
    `import { startServer, openapiDocument } from 'celebrity-api';
const server = await startServer({ plans: { free: 1 } });
const { key } = await server.accounts.create({ email: 'me@example.com' });
const get = async () => { const r = await fetch(server.url + '/api/v1/movies?limit=2', { headers: { 'x-api-key': key } }); return { status: r.status, body: await r.json() }; };
const results = [await get(), await get()];
await server.close();
console.log(JSON.stringify({ results, openapi: openapiDocument().openapi }));
`,
  );
  const out = JSON.parse(execFileSync(process.execPath, ['app.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.equal(out.openapi, '3.1.0');
  const [ok, quota] = out.results;
  assert.equal(ok.status, 200);
  assert.equal(ok.body.pagination.total, JSON.parse(await readFile(join(ROOT, 'data/movies.json'), 'utf8')).length);
  assertMatchesDocument('/api/v1/movies', ok.status, ok.body);
  assert.equal(quota.status, 429);
  assertMatchesDocument('/api/v1/movies', quota.status, quota.body);
});

test("installed: `import { createClient } from 'celebrity-api/client'` talks to the server; the client bundle holds no server code", async () => {
  const bundle = await readFile(join(project, 'node_modules/celebrity-api/dist/client.js'), 'utf8');
  assert.doesNotMatch(bundle, /node:|createServer/);
  await writeFile(
    join(project, 'client.mjs'),
    `import { startServer } from 'celebrity-api';
import { createClient, NotFoundError } from 'celebrity-api/client';
const server = await startServer();
const { key } = await server.accounts.create({ email: 'me@example.com' });
const api = createClient({ baseUrl: server.url, apiKey: key, cache: true });
const page = await api.reviews.list({ limit: 2, sort: 'rating_high' });
const missing = await api.movies.get('no-such-movie').catch((err) => err instanceof NotFoundError && err.code);
await server.close();
console.log(JSON.stringify({ count: page.data.length, total: page.pagination.total, missing }));
`,
  );
  const out = JSON.parse(execFileSync(process.execPath, ['client.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(out, { count: 2, total: JSON.parse(await readFile(join(ROOT, 'data/reviews.json'), 'utf8')).length, missing: 'NOT_FOUND' });
});

test('installed: the declarations type-check a TypeScript consumer (and reject misuse)', async () => {
  await writeFile(
    join(project, 'consumer.ts'),
    `import { startServer, type RunningServer, type UsageReport } from 'celebrity-api';
const server: RunningServer = await startServer({ data: { celebrities: [] }, clock: () => 0, tls: false });
const report: UsageReport = (await server.usage.get('a@example.com'));
server.clock.set(new Date(report.resetsOn));
// @ts-expect-error not a plan
await server.accounts.setPlan('a@example.com', 'gold');
await server.close();
`,
  );
  await writeFile(
    join(project, 'client-consumer.ts'),
    `import { createClient, QuotaExceededError, type Detail } from 'celebrity-api/client';
const api = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'cel_x', retry: { retries: 2 } });
const review: Detail<'reviews'> = (await api.reviews.get('x')).data;
const critics: number | null = review.scores === null ? null : review.scores.criticsScore;
const year: number = review.movieDetails.releaseYear;
// @ts-expect-error scores may be null
review.scores.criticsScore;
// @ts-expect-error not a sort of movies
await api.movies.list({ sort: 'rating_high' });
for await (const page of api.movies.pages({ status: 'upcoming' })) page.data.map((m) => m.title.length);
const quota = (err: unknown) => (err instanceof QuotaExceededError ? err.quota.resetsOn : null);
export { critics, year, quota };
`,
  );
  const flags = ['--ignoreConfig', '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
  const types = ['--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types')];
  execFileSync(process.execPath, [TSC, ...flags, ...types, 'consumer.ts', 'client-consumer.ts'], { cwd: project, encoding: 'utf8' });
});
