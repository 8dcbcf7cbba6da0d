// The OpenAPI 3.1 document, generated from the resource definitions, the query limits and the error
// registry (never written by hand twice); built once, served from one cached Buffer.
import { ERRORS, type ErrorCode } from '../errors.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_SEARCH_LENGTH } from '../query/plan.ts';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { CollectionName, FilterDef, ResourceDefinition } from '../resources/types.ts';
import { recordSchema, SLUG_PATTERN, type JsonSchema } from './openapi-schema.ts';

/** The interface release (SPEC 9), not the package version. */
export const API_VERSION = '1.0.0';

/** Schema names per collection; a Record so that a new collection does not compile until it is named. */
export const SINGULAR: Readonly<Record<CollectionName, string>> = {
  celebrities: 'Celebrity', outfits: 'Outfit', news: 'NewsArticle', movies: 'Movie', reviews: 'Review',
};

const $ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** The error responses by status, with the codes the registry gives each (CONTRACT 2). */
export const ERROR_RESPONSES = {
  400: ['BadRequest', 'A query parameter breaks its rule; the message names it and the rule'],
  401: ['Unauthorized', 'The x-api-key header is missing, unknown or revoked'],
  403: ['HttpsRequired', 'The request arrived over plain HTTP: a key sent that way must be treated as leaked'],
  404: ['NotFound', 'No record with that slug, or no such route'],
  405: ['MethodNotAllowed', 'Any method but GET and HEAD (the Allow header lists them)'],
  429: ['QuotaExceeded', "The plan's monthly quota is used up until the first instant of the next UTC month"],
  500: ['InternalError', 'An unexpected error; logged on the server with the X-Request-Id, never described here'],
} as const;
export type ErrorStatus = keyof typeof ERROR_RESPONSES;

function errorSchema(status: ErrorStatus): JsonSchema {
  const codes = (Object.keys(ERRORS) as ErrorCode[]).filter((c) => ERRORS[c].status === status);
  const properties: Record<string, JsonSchema> = {
    success: { const: false },
    error: codes.length === 1 ? { const: codes[0] } : { enum: codes },
    message: { type: 'string' },
  };
  if (status === 429) properties.quota = $ref('schemas', 'Quota');
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function errorResponse(status: ErrorStatus): JsonSchema {
  const headers: Record<string, unknown> = { 'X-Request-Id': $ref('headers', 'X-Request-Id') };
  if (status === 429) Object.assign(headers, { 'Retry-After': $ref('headers', 'Retry-After'), ...rateLimitHeaders() });
  if (status === 405) headers.Allow = { schema: { const: 'GET, HEAD' } };
  return { description: ERROR_RESPONSES[status][1], headers, content: json($ref('schemas', `Error${status}`)) };
}

const rateLimitHeaders = () => ({ RateLimit: $ref('headers', 'RateLimit'), 'RateLimit-Policy': $ref('headers', 'RateLimit-Policy') });

function filterParameters(f: FilterDef): JsonSchema[] {
  const q = (name: string, schema: JsonSchema, description: string) => ({ name, in: 'query', required: false, schema, description });
  switch (f.kind) {
    case 'text':
      return [q(f.param, { type: 'string' }, 'Whole-value match, case- and accent-insensitive; an array field matches if any element does')];
    case 'slug':
      return [q(f.param, { type: 'string', pattern: SLUG_PATTERN }, 'Exact slug of the referenced record')];
    case 'enum':
      return [q(f.param, { type: 'string', enum: [...f.values] }, 'One of the listed values, else 400')];
    case 'boolean':
      return [q(f.param, { type: 'boolean' }, '`true`: only flagged records; `false`: only the others')];
    case 'range': {
      const bound = (d: number) => ({ type: 'number', minimum: f.lowest, maximum: f.highest, default: d });
      const rule = `decimal in [${f.lowest}, ${f.highest}], ${f.minParam} <= ${f.maxParam}`;
      return [q(f.minParam, bound(f.lowest), `Lowest value included; ${rule}`), q(f.maxParam, bound(f.highest), `Highest value included; ${rule}`)];
    }
  }
}

function operations(def: ResourceDefinition): Record<string, unknown> {
  const name = SINGULAR[def.name];
  const errors = (statuses: ErrorStatus[]) => Object.fromEntries(statuses.map((s) => [s, $ref('responses', ERROR_RESPONSES[s][0])]));
  const ok = (schema: string, description: string) => ({
    description,
    headers: { 'X-Request-Id': $ref('headers', 'X-Request-Id'), ...rateLimitHeaders() },
    content: json($ref('schemas', schema)),
  });
  const sort = {
    name: 'sort', in: 'query', required: false,
    schema: { type: 'string', enum: def.sorts.map((s) => s.name), default: def.sorts[0]!.name },
    description: 'Order of the records; ties break on _id ascending',
  };
  return {
    [`/api/v1/${def.name}`]: {
      get: {
        operationId: `list${capital(def.name)}`,
        tags: [def.name],
        summary: `List ${def.name}`,
        parameters: [$ref('parameters', 'Page'), $ref('parameters', 'Limit'), sort, $ref('parameters', 'Search'), ...def.filters.flatMap(filterParameters)],
        responses: { 200: ok(`${name}List`, `A page of ${def.name} (list shape)`), ...errors([400, 401, 403, 405, 429, 500]) },
      },
    },
    [`/api/v1/${def.name}/{slug}`]: {
      get: {
        operationId: `get${name}`,
        tags: [def.name],
        summary: `One ${name} by slug`,
        parameters: [$ref('parameters', 'Slug')],
        responses: { 200: ok(`${name}Response`, `One ${name} (detail shape)`), ...errors([401, 403, 404, 405, 429, 500]) },
      },
    },
  };
}

function envelope(def: ResourceDefinition, list: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    success: { const: true },
    version: { const: 'v1' },
    resource: { const: def.name },
    ...(list ? { pagination: $ref('schemas', 'Pagination') } : {}),
    data: list ? { type: 'array', items: $ref('schemas', `${SINGULAR[def.name]}ListItem`) } : $ref('schemas', `${SINGULAR[def.name]}Detail`),
  };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function components(): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = {};
  for (const def of RESOURCE_LIST) {
    const name = SINGULAR[def.name];
    schemas[`${name}ListItem`] = recordSchema(def, def.listFields);
    schemas[`${name}Detail`] = recordSchema(def, def.detailFields);
    schemas[`${name}List`] = envelope(def, true);
    schemas[`${name}Response`] = envelope(def, false);
  }
  const count = (min: number, description: string, max?: number) => ({ type: 'integer', minimum: min, ...(max ? { maximum: max } : {}), description });
  schemas.Pagination = {
    type: 'object',
    properties: {
      page: count(1, 'Current page, from 1'),
      limit: count(1, `Items per page; a larger limit is served as ${MAX_LIMIT}`, MAX_LIMIT),
      total: count(0, 'Matching records'),
      pages: count(0, 'ceil(total / limit)'),
    },
    required: ['page', 'limit', 'total', 'pages'],
    additionalProperties: false,
  };
  schemas.Quota = {
    type: 'object',
    properties: { used: { type: 'integer', minimum: 0 }, total: { type: 'integer', minimum: 0 }, resetsOn: { type: 'string', format: 'date-time' } },
    required: ['used', 'total', 'resetsOn'],
    additionalProperties: false,
  };
  const responses: Record<string, unknown> = {};
  for (const status of Object.keys(ERROR_RESPONSES).map(Number) as ErrorStatus[]) {
    schemas[`Error${status}`] = errorSchema(status);
    responses[ERROR_RESPONSES[status][0]] = errorResponse(status);
  }
  const integer = (min: number, def: number, description: string) => ({ type: 'integer', minimum: min, default: def, description });
  return {
    schemas,
    responses,
    parameters: {
      Page: { name: 'page', in: 'query', required: false, schema: integer(1, 1, 'Decimal integer from 1; a page past the last is empty') },
      Limit: { name: 'limit', in: 'query', required: false, schema: integer(1, DEFAULT_LIMIT, `Decimal integer from 1; above ${MAX_LIMIT} it is clamped to ${MAX_LIMIT}`) },
      Search: { name: 'search', in: 'query', required: false, schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH }, description: 'Trimmed, case- and accent-insensitive substring' },
      Slug: { name: 'slug', in: 'path', required: true, schema: { type: 'string', pattern: SLUG_PATTERN } },
    },
    headers: {
      'X-Request-Id': { description: 'Names the request in the server log', schema: { type: 'string' } },
      RateLimit: { description: 'draft-ietf-httpapi-ratelimit-headers: `"monthly";r=<remaining>;t=<seconds to reset>` (absent on unlimited plans)', schema: { type: 'string' } },
      'RateLimit-Policy': { description: '`"monthly";q=<quota>;w=<seconds in the month>` (absent on unlimited plans)', schema: { type: 'string' } },
      'Retry-After': { description: 'Seconds until the quota resets', schema: { type: 'integer', minimum: 0 } },
    },
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'cel_ followed by at least 32 base62 characters' } },
  };
}

const PUBLIC = { security: [] as never[] };

/** Builds the document (a fresh object each call; the server uses openapiBody()). */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const def of RESOURCE_LIST) Object.assign(paths, operations(def));
  paths['/api/v1/openapi.json'] = {
    get: {
      ...PUBLIC, operationId: 'getOpenApiDocument', tags: ['meta'], summary: 'This document; needs no key and is never counted',
      responses: { 200: { description: 'The OpenAPI document', content: json({ type: 'object' }) }, 403: $ref('responses', 'HttpsRequired'), 405: $ref('responses', 'MethodNotAllowed') },
    },
  };
  const health = (status: string) => ({ type: 'object', properties: { status: { const: status } }, required: ['status'], additionalProperties: false });
  paths['/healthz'] = {
    get: {
      ...PUBLIC, operationId: 'getHealth', tags: ['meta'], summary: 'Liveness and readiness; needs no key, any transport',
      responses: { 200: { description: 'Serving', content: json(health('ok')) }, 503: { description: 'Shutting down', content: json(health('draining')) }, 405: $ref('responses', 'MethodNotAllowed') },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Celebrity media data API',
      version: API_VERSION,
      summary: 'Read-only celebrity profiles, outfits, news, movies and reviews',
      description: 'Every /api/v1 resource needs the x-api-key header and HTTPS. Only 200 responses count against the monthly quota (free 100, starter 1000, pro 10000, enterprise unlimited), which resets at 00:00 UTC on the 1st.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    security: [{ apiKey: [] }],
    tags: [...RESOURCE_LIST.map((d) => ({ name: d.name })), { name: 'meta' }],
    paths,
    components: components(),
  };
}

let body: Buffer | null = null;

/** The served body: built on first use, then the same Buffer for every request. */
export function openapiBody(): Buffer {
  body ??= Buffer.from(JSON.stringify(buildOpenApiDocument()));
  return body;
}
