// The error registry, code by code (STYLE habit 4): a sane status, the SPEC 7 body, a row in the
// README's error table and a schema in the OpenAPI document. A new code fails here until documented.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES, ERROR_SCOPES, ERRORS, errorBody, ParameterError } from '../src/errors.ts';
import { buildOpenApiDocument } from '../src/http/openapi.ts';
import { errorSchemaName } from '../src/http/openapi-errors.ts';
import { schemaErrors } from './helpers/openapi-validator.ts';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** `| 400 | `CODE` | when |` rows of the README's error table: code -> status. */
const readmeRows = new Map([...README.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \| .+ \|$/gm)].map((m) => [m[2]!, Number(m[1])]));
const doc = buildOpenApiDocument() as { components: { schemas: Record<string, unknown> } };

for (const code of ERROR_CODES) {
  const { status, message, when, scope } = ERRORS[code];
  test(`${code} -> ${status}: registry entry, body, README row, document schema`, () => {
    assert.ok(status >= 400 && status <= 599, 'an error status');
    assert.match(code, /^[A-Z]+(_[A-Z]+)*$/);
    assert.ok(message.length > 0 && when.length > 0);
    assert.ok(ERROR_SCOPES.includes(scope));
    const body = JSON.parse(errorBody(code));
    assert.deepEqual(body, { success: false, error: code, message });
    assert.equal(readmeRows.get(code), status, `README error table: no row '| ${status} | \`${code}\` |'`);
    assert.ok(doc.components.schemas[errorSchemaName(code)], 'no schema in the document');
    if (status !== 429) assert.deepEqual(schemaErrors(errorSchemaName(code), body), []);
  });
}

test('the README table names no code the registry lacks', () => {
  assert.deepEqual([...readmeRows.keys()].filter((c) => !(c in ERRORS)), []);
});

test('a 429 body carries quota; a ParameterError names the parameter', () => {
  const quota = { used: 3, total: 3, resetsOn: '2026-12-01T00:00:00.000Z' };
  assert.deepEqual(schemaErrors(errorSchemaName('QUOTA_EXCEEDED'), JSON.parse(errorBody('QUOTA_EXCEEDED', 'm', quota))), []);
  assert.notDeepEqual(schemaErrors(errorSchemaName('QUOTA_EXCEEDED'), JSON.parse(errorBody('QUOTA_EXCEEDED'))), []);
  const err = new ParameterError('page', 'must be an integer >= 1');
  assert.equal(err.message, "Invalid parameter 'page': must be an integer >= 1");
  assert.equal(ERRORS[err.code].status, 400);
});
