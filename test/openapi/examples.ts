// Builds the response examples of the OpenAPI document from the bundled sample data, through the real
// handlers, so each example is a response the server gives. `npm run openapi:examples` rewrites
// src/http/openapi-examples.json; test/openapi/examples.test.ts fails when it is out of date.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { BUNDLED_DATA } from '../../src/config.ts';
import { loadSnapshot } from '../../src/data/snapshot.ts';
import { detail, listPage } from '../../src/http/handlers.ts';
import type { Examples } from '../../src/http/openapi.ts';
import { COLLECTIONS } from '../../src/resources/types.ts';

export const EXAMPLES_FILE = fileURLToPath(new URL('../../src/http/openapi-examples.json', import.meta.url));

/** The serving day of the examples (celebrity `age` depends on it): fixed, so they never drift by themselves. */
const DAY = 20260101;

export async function buildExamples(): Promise<Examples> {
  const snapshot = await loadSnapshot(BUNDLED_DATA);
  const out = {} as Record<string, { list: unknown; detail: unknown }>;
  for (const c of COLLECTIONS) {
    const index = snapshot.collections[c];
    const list = listPage(index, 'limit=2', DAY);
    if (!list.ok) throw new Error(`${c}: no example page`);
    const page = JSON.parse(list.body.toString('utf8')) as { data: { slug: string }[] };
    const one = detail(index, page.data[0]!.slug, DAY);
    if (!one.ok) throw new Error(`${c}: no example record`);
    out[c] = { list: page, detail: JSON.parse(one.body.toString('utf8')) };
  }
  return out as Examples;
}

export const examplesText = (examples: Examples): string => JSON.stringify(examples, null, 2) + '\n';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(EXAMPLES_FILE, examplesText(await buildExamples()));
  console.log(`wrote ${EXAMPLES_FILE}`);
}
