// Checks any response (path, status, JSON body) against the OpenAPI document's response schema with
// a JSON Schema 2020-12 validator, so every HTTP test also proves the document tells the truth.
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ERROR_CODES, ERRORS } from '../../src/errors.ts';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';
import { errorSchemaName } from '../../src/http/openapi-errors.ts';

// ajv-formats is CommonJS: under NodeNext its default import is the module object at type level.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DOC_ID = 'urn:celebrity-api:openapi';
const document: Json = buildOpenApiDocument();

/** Component refs point into the document; ajv holds the component schemas as $defs of one resource. */
const rewrite = <T>(value: T): T =>
  JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${DOC_ID}#/$defs/`)) as T;

// strict: an unknown keyword in a generated schema is an error here, not silently ignored.
const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true });
addFormats(ajv);
ajv.addSchema({ $id: DOC_ID, $defs: rewrite(document.components.schemas) });

const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** Any registry code of a status, for paths the document does not list (unknown /api/ routes still get errors). */
const byStatus = new Map<string, Json>();
for (const code of ERROR_CODES) {
  const status = String(ERRORS[code].status);
  const ref = { $ref: `#/components/schemas/${errorSchemaName(code)}` };
  const oneOf = [...(byStatus.get(status)?.content['application/json'].schema.oneOf ?? []), ref];
  byStatus.set(status, { content: { 'application/json': { schema: { oneOf } } } });
}

const compiled = new Map<string, ValidateFunction>();

function resolveResponse(response: Json): Json {
  if (typeof response.$ref !== 'string') return response;
  return document.components.responses[response.$ref.split('/').pop()!];
}

/** The documented template of a request path (without query), or null when no path matches. */
export function documentedPath(path: string): string | null {
  const bare = path.split('?', 1)[0]!;
  return templates.find((t) => t.pattern.test(bare))?.template ?? null;
}

/** Problems of one response against the document; [] when it matches. */
export function responseErrors(path: string, status: number, body: unknown, method = 'get'): string[] {
  const template = documentedPath(path);
  let response: Json | undefined;
  if (template === null) {
    response = byStatus.get(String(status));
    if (!response) return [`${path}: not a documented path, and ${status} is no documented error status`];
  } else {
    const operation = document.paths[template][method.toLowerCase()] ?? document.paths[template].get;
    const listed = operation.responses[String(status)] ?? operation.responses.default;
    if (!listed) return [`${method.toUpperCase()} ${template}: status ${status} is not documented`];
    response = resolveResponse(listed);
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return [`${path} ${status}: no JSON body documented`];
  const key = `${template ?? '*'} ${status}`;
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(rewrite(schema))));
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${path} ${status}: ${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Problems of a value against one component schema (e.g. 'MovieDetail'); [] when it matches. */
export function schemaErrors(name: string, value: unknown): string[] {
  const key = `#${name}`;
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile({ $ref: `${DOC_ID}#/$defs/${name}` })));
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${name}: ${e.instancePath || '(value)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Fails the test with every problem when the response does not match the document. */
export function assertMatchesDocument(path: string, status: number, body: unknown, method = 'get'): void {
  const problems = responseErrors(path, status, body, method);
  assert.deepEqual(problems, [], `response does not match the OpenAPI document:\n  ${problems.join('\n  ')}`);
}

export interface CheckedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Json;
}

/** fetch + JSON parse + assertMatchesDocument: what an HTTP test calls for every request it makes. */
export async function fetchChecked(url: string | URL, init?: RequestInit): Promise<CheckedResponse> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  const method = init?.method ?? 'GET';
  const body = method === 'HEAD' ? null : (JSON.parse(text) as Json);
  if (method !== 'HEAD') assertMatchesDocument(new URL(url).pathname, res.status, body, method);
  return { status: res.status, headers: res.headers, body: body as Json };
}

/** The document these checks use, for tests that look at it directly. */
export const openapiDocument: Readonly<Json> = document;
