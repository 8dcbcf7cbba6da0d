// Third-party linters over the document, as a client author's tooling sees it: Spectral (spectral:oas)
// and Redocly (recommended) report nothing at all; Redocly's every-rule set only what is listed here,
// each with the reason it stays. Offline: both CLIs run from node_modules on a file.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SPECTRAL = join(ROOT, 'node_modules/@stoplight/spectral-cli/dist/index.js');
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
// No telemetry and no update check: the suite runs offline.
const ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

/** What `redocly lint --extends all` may still say, and why it is not worth changing. */
const ACCEPTED: Readonly<Record<string, string>> = {
  'operation-4xx-problem-details-rfc7807': 'errors are the SPEC 7 body {success, error, message} as application/json, fixed by the published interface',
  'path-segment-plural': '`api` and `v1` in /api/v1 are fixed by the published interface',
  'tags-alphabetical': 'tags follow the order of SPEC 4 (celebrities, outfits, news, movies, reviews), which documentation tools keep',
  'scalar-property-missing-example': 'every response carries a whole example cut from the bundled data; an example per field would copy it again',
  'required-string-property-missing-min-length': 'the data may hold an empty string in a required field (_id, name, title): the loader checks presence, not length',
};

let dir: string;
let file: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'celebrity-lint-'));
  file = join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(buildOpenApiDocument(), null, 2));
  await writeFile(join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
});
after(() => rm(dir, { recursive: true, force: true }));

/** Runs a linter; a non-zero exit is fine (it means findings), its JSON output is what we judge. */
async function run(script: string, args: string[]): Promise<string> {
  try {
    return (await promisify(execFile)(process.execPath, [script, ...args], { cwd: dir, env: ENV, maxBuffer: 64 << 20 })).stdout;
  } catch (err) {
    const out = (err as { stdout?: string }).stdout;
    if (out) return out;
    throw err;
  }
}

interface RedoclyReport {
  readonly totals: { errors: number; warnings: number };
  readonly problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}
const redocly = async (extra: string[]): Promise<RedoclyReport> => JSON.parse(await run(REDOCLY, ['lint', ...extra, '--format', 'json', 'openapi.json']));
const show = (r: RedoclyReport) => r.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);

test('spectral lint (spectral:oas): no errors, no warnings, no hints', async () => {
  const results = JSON.parse(await run(SPECTRAL, ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', 'openapi.json']));
  assert.deepEqual(results.map((r: { code: string; path: string[]; message: string }) => `${r.code} ${r.path.join('.')}: ${r.message}`), []);
});

test('redocly lint (recommended): no errors, no warnings', async () => {
  const report = await redocly([]);
  assert.deepEqual(show(report), []);
  assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
});

test('redocly lint --extends all: only the findings accepted above, each for its reason', async () => {
  const report = await redocly(['--extends', 'all']);
  assert.deepEqual(show(report).filter((line) => !(line.split(' ', 1)[0]! in ACCEPTED)), []);
  // Not about the error bodies: every message is non-empty, and the document says so.
  assert.deepEqual(report.problems.filter((p) => p.ruleId.startsWith('required-string') && /Error\w+\/properties\/message/.test(p.location[0]!.pointer)), []);
});

test('the linters do fail on a broken document (the checks above can fail)', async () => {
  const broken = buildOpenApiDocument() as { paths: Record<string, { get: Record<string, unknown> }> };
  delete broken.paths['/api/v1/movies']!.get.operationId;
  delete broken.paths['/api/v1/movies']!.get.description;
  await writeFile(file, JSON.stringify(broken));
  const spectral = JSON.parse(await run(SPECTRAL, ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', 'openapi.json']));
  assert.ok(spectral.some((r: { code: string }) => r.code === 'operation-operationId'));
  assert.ok((await redocly([])).problems.some((p) => p.ruleId === 'operation-operationId'));
});
