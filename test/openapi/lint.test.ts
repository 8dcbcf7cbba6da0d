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
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'celebrity-lint-'));
  await writeFile(join(dir, 'openapi.json'), JSON.stringify(buildOpenApiDocument(), null, 2));
  // A broken copy, linted in the same run, proves each check can fail.
  const broken = buildOpenApiDocument() as { paths: Record<string, { get: Record<string, unknown> }> };
  delete broken.paths['/api/v1/movies']!.get.operationId;
  await writeFile(join(dir, 'broken.json'), JSON.stringify(broken));
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

interface Finding {
  readonly file: string;
  readonly rule: string;
  readonly where: string;
  readonly message: string;
}
const show = (findings: readonly Finding[]) => findings.map((f) => `${f.rule} ${f.where}: ${f.message}`);
const of = (findings: readonly Finding[], file: string) => findings.filter((f) => f.file.endsWith(file));

async function spectral(): Promise<Finding[]> {
  const results = JSON.parse(await run(SPECTRAL, ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', 'openapi.json', 'broken.json']));
  return results.map((r: { source: string; code: string; path: string[]; message: string }) => ({ file: r.source, rule: r.code, where: r.path.join('.'), message: r.message }));
}

async function redocly(extra: string[]): Promise<Finding[]> {
  const files = ['openapi.json', 'broken.json'];
  // One report per file, back to back in one run: `{...}{...}`.
  const text = await run(REDOCLY, ['lint', ...extra, '--format', 'json', ...files]);
  const reports: { problems: { ruleId: string; message: string; location: { pointer?: string }[] }[] }[] = JSON.parse(`[${text.replace(/\}\s*\{\s*"totals"/g, '},{"totals"')}]`);
  assert.equal(reports.length, files.length);
  return reports.flatMap((report, i) => report.problems.map((p) => ({ file: files[i]!, rule: p.ruleId, where: p.location[0]?.pointer ?? '', message: p.message })));
}

test('spectral lint (spectral:oas): nothing at all (and it does flag a broken copy)', async () => {
  const findings = await spectral();
  assert.deepEqual(show(of(findings, 'openapi.json')), []);
  assert.ok(of(findings, 'broken.json').some((f) => f.rule === 'operation-operationId'));
});

test('redocly lint (recommended): no errors, no warnings (and it does flag a broken copy)', async () => {
  const findings = await redocly([]);
  assert.deepEqual(show(of(findings, 'openapi.json')), []);
  assert.ok(of(findings, 'broken.json').some((f) => f.rule === 'operation-operationId'));
});

test('redocly lint --extends all: only the findings accepted above, each for its reason', async () => {
  const findings = of(await redocly(['--extends', 'all']), 'openapi.json');
  assert.deepEqual(show(findings.filter((f) => !(f.rule in ACCEPTED))), []);
  // Not about the error bodies: every message is non-empty, and the document says so.
  assert.deepEqual(findings.filter((f) => f.rule.startsWith('required-string') && /Error\w+\/properties\/message/.test(f.where)), []);
});
