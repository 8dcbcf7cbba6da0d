// The error part of the OpenAPI document, generated from the error registry (src/errors.ts): one
// schema per code, and per operation the codes its scopes can send, grouped by status. A code added
// to the registry appears on every operation that can send it without touching this file.
import { ERROR_CODES, ERRORS, type ErrorCode, type ErrorScope } from '../errors.ts';
import type { JsonSchema } from './openapi-schema.ts';

export const $ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** INVALID_PARAMETER -> InvalidParameter. */
const pascal = (code: string) => code.toLowerCase().replace(/(?:^|_)([a-z])/g, (_, c: string) => c.toUpperCase());

/** The component schema of one code's body. */
export const errorSchemaName = (code: ErrorCode) => `Error${pascal(code)}`;

const EXAMPLE_QUOTA = { used: 100, total: 100, resetsOn: '2026-12-01T00:00:00.000Z' };

/** `{success: false, error, message}`, plus `quota` on 429 (SPEC 7), for every code of the registry. */
export function errorSchemas(): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  for (const code of ERROR_CODES) {
    const { status, message, when } = ERRORS[code];
    const properties: Record<string, JsonSchema> = {
      success: { const: false, description: 'Always false on an error' },
      error: { const: code, description: 'The machine-readable code; codes never change' },
      message: { type: 'string', minLength: 1, description: 'Human-readable; may change between releases' },
    };
    const example: Record<string, unknown> = { success: false, error: code, message };
    if (status === 429) {
      properties.quota = $ref('schemas', 'Quota');
      example.quota = EXAMPLE_QUOTA;
    }
    schemas[errorSchemaName(code)] = {
      type: 'object',
      description: `${status} ${code}: ${when}`,
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
      examples: [example],
    };
  }
  return schemas;
}

/** The codes an operation serving requests of `scopes` can send, by status. */
function codesByStatus(scopes: readonly ErrorScope[]): Map<number, ErrorCode[]> {
  const out = new Map<number, ErrorCode[]>();
  for (const code of ERROR_CODES) {
    if (!(scopes as readonly string[]).includes(ERRORS[code].scope)) continue;
    const status = ERRORS[code].status;
    out.set(status, [...(out.get(status) ?? []), code]);
  }
  return new Map([...out].sort(([a], [b]) => a - b));
}

/** Headers a response with these codes carries besides X-Request-Id. */
function errorHeaders(codes: readonly ErrorCode[]): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'X-Request-Id': $ref('headers', 'X-Request-Id') };
  for (const code of codes) {
    if (code === 'QUOTA_EXCEEDED') {
      Object.assign(headers, { 'Retry-After': $ref('headers', 'Retry-After'), RateLimit: $ref('headers', 'RateLimit'), 'RateLimit-Policy': $ref('headers', 'RateLimit-Policy') });
    }
    if (code === 'SERVICE_UNAVAILABLE') headers['Retry-After'] = $ref('headers', 'Retry-After');
    if (code === 'METHOD_NOT_ALLOWED') headers.Allow = { description: 'The methods there are (RFC 9110 15.5.6)', schema: { const: 'GET, HEAD' } };
  }
  return headers;
}

/** The response of one status sending any of `codes`: described, with headers and the body schema. */
function errorResponse(status: number, codes: readonly ErrorCode[], withBody: boolean): JsonSchema {
  const description = codes.length === 1 ? ERRORS[codes[0]!].when : codes.map((c) => `${c}: ${ERRORS[c].when}`).join('. ');
  const refs = codes.map((c) => $ref('schemas', errorSchemaName(c)));
  const response: JsonSchema = { description: `${status}. ${description}`, headers: errorHeaders(codes) };
  if (withBody) response.content = json(refs.length === 1 ? refs[0]! : { oneOf: refs });
  return response;
}

/**
 * The error responses of an operation, as refs to shared components (added to `components` on first
 * use, named after their codes), or inline without a body for HEAD.
 */
export function errorResponses(scopes: readonly ErrorScope[], components: Record<string, unknown>, head: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, codes] of codesByStatus(scopes)) {
    if (head) {
      out[status] = errorResponse(status, codes, false);
      continue;
    }
    const name = codes.map(pascal).join('Or');
    components[name] ??= errorResponse(status, codes, true);
    out[status] = $ref('responses', name);
  }
  return out;
}
