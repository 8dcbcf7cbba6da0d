// A consumer who never imports our client: types generated from the document by openapi-typescript
// compile under `tsc --strict`, and a program using them reads real responses (with real nulls) from a
// running server without a single cast, non-null assertion or `in` narrowing.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript-runner';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';
import { startServer, type RunningServer } from '../../src/index.ts';
import { EVENTUALLY_MS } from '../helpers/deadlines.ts';
import { fixture } from '../helpers/fixture.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

const CONSUMER = `import type { paths } from './api.js';

type Json<P extends keyof paths, S extends number> = paths[P]['get']['responses'] extends infer R
  ? S extends keyof R ? R[S] extends { content: { 'application/json': infer B } } ? B : never : never
  : never;

const [base, key] = process.argv.slice(2);
async function get<B>(path: string): Promise<B> {
  const res = await fetch(base + path, { headers: { 'x-api-key': key ?? '' } });
  return res.json();
}

const query: paths['/api/v1/reviews']['get']['parameters']['query'] = { minRating: '7', sort: 'rating_high', featured: false };
const reviews = await get<Json<'/api/v1/reviews', 200>>('/api/v1/reviews?minRating=' + (query?.minRating ?? '0'));
const lines: string[] = [];
for (const r of reviews.data) {
  // @ts-expect-error scores is null when the data lacks it: the types refuse the unchecked access
  lines.push(String(r.scores.criticsScore));
  const critics: number | null = r.scores === null ? null : r.scores.criticsScore;
  const views: number | null = r.stats === null ? null : r.stats.views;
  lines.push([r.movieTitle.toUpperCase(), critics, views, r.rating.toFixed(1)].join(' '));
}
const first = reviews.data.at(0);
const review = first ? await get<Json<'/api/v1/reviews/{slug}', 200>>('/api/v1/reviews/' + first.slug) : null;
const year: number | null = review === null ? null : review.data.movieDetails.releaseYear;
const celebrity = await get<Json<'/api/v1/celebrities/{slug}', 200>>('/api/v1/celebrities/zoe-martin');
const films = celebrity.data.filmography.map((f) => f.title + ' ' + f.releaseDate.slice(0, 4));
const networks = celebrity.data.socialMedia === null ? [] : Object.keys(celebrity.data.socialMedia);
const bad = await get<Json<'/api/v1/reviews', 400>>('/api/v1/reviews?minRating=.5');
const code: 'BAD_REQUEST' | 'INVALID_PARAMETER' = bad.error;
const missing = await get<Json<'/api/v1/reviews/{slug}', 404>>('/api/v1/reviews/no-such-review');
console.log(JSON.stringify({ lines, year, films, networks, code, missing: missing.error, total: reviews.pagination.total }));
`;

let server: RunningServer;
let key: string;
let dir: string;
before(async () => {
  server = await startServer({ data: fixture() });
  ({ key } = await server.accounts.create({ email: 'types@example.com', plan: 'enterprise' }));
  dir = await mkdtemp(join(tmpdir(), 'celebrity-openapi-ts-'));
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

test('openapi-typescript types compile under --strict and read real responses without casts', async () => {
  await writeFile(join(dir, 'api.d.ts'), astToString(await openapiTS(JSON.stringify(buildOpenApiDocument()))));
  await writeFile(join(dir, 'consumer.ts'), CONSUMER);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  assert.doesNotMatch(CONSUMER, /\bas\b|!\.|!\)|!\[| in /, 'no cast, no non-null assertion, no `in`');
  const flags = ['--ignoreConfig', '--strict', '--noUncheckedIndexedAccess', '--exactOptionalPropertyTypes', '--module', 'nodenext', '--target', 'es2022', '--outDir', 'out'];
  const types = ['--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types')];
  try {
    execFileSync(process.execPath, [TSC, ...flags, ...types, 'consumer.ts'], { cwd: dir, encoding: 'utf8' });
  } catch (err) {
    assert.fail(`tsc --strict failed:\n${(err as { stdout?: string }).stdout}`);
  }
  // Asynchronously: the server answering it lives in this process.
  const run = await promisify(execFile)(process.execPath, [join(dir, 'out/consumer.js'), server.url, key], { cwd: dir, encoding: 'utf8', timeout: EVENTUALLY_MS });
  const out = JSON.parse(run.stdout);
  assert.deepEqual(out, {
    lines: ['80', 'NIGHT TRAIN 80  7.5'],
    year: 2024,
    films: ['Day Boat 2026', 'Night Train 2024'],
    networks: ['instagram'],
    code: 'INVALID_PARAMETER',
    missing: 'NOT_FOUND',
    total: 1,
  });
});
