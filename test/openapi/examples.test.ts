// The document's response examples: real responses from the bundled data, up to date, and valid
// against the schemas they illustrate.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';
import { COLLECTIONS } from '../../src/resources/types.ts';
import { responseErrors } from '../helpers/openapi-validator.ts';
import { buildExamples, EXAMPLES_FILE, examplesText } from './examples.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('src/http/openapi-examples.json is what the bundled data gives (else: npm run openapi:examples)', async () => {
  assert.equal(await readFile(EXAMPLES_FILE, 'utf8'), examplesText(await buildExamples()));
});

test('every example in the document matches the schema of its response', () => {
  const doc: Json = buildOpenApiDocument();
  let checked = 0;
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [status, response] of Object.entries<Json>(item.get.responses)) {
      const example = response.content?.['application/json']?.example;
      if (example === undefined) continue;
      assert.deepEqual(responseErrors(path.replace('{slug}', example.data?.slug ?? 'x'), Number(status), example), [], `${path} ${status}`);
      checked++;
    }
  }
  assert.equal(checked, COLLECTIONS.length * 2 + 2);
  for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
    for (const example of schema.examples ?? []) {
      assert.equal(example.error, schema.properties.error.const, name);
    }
  }
});
