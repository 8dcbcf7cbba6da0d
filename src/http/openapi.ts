// The OpenAPI 3.1 document, generated from the resource definitions, the query limits and the error
// registry (never written by hand twice); built once, served from one cached Buffer.
import type { ErrorScope } from '../errors.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_SEARCH_LENGTH } from '../query/plan.ts';
import { RESOURCE_LIST } from '../resources/index.ts';
import type { CollectionName, FilterDef, ResourceDefinition } from '../resources/types.ts';
import { $ref, errorResponses, errorSchemas } from './openapi-errors.ts';
import EXAMPLES from './openapi-examples.json' with { type: 'json' };
import { recordSchema, SLUG_PATTERN, type JsonSchema } from './openapi-schema.ts';

/** The interface release (SPEC 9), not the package version. */
export const API_VERSION = '1.0.0';

/** Schema names per collection; a Record so that a new collection does not compile until it is named. */
export const SINGULAR: Readonly<Record<CollectionName, string>> = {
  celebrities: 'Celebrity', outfits: 'Outfit', news: 'NewsArticle', movies: 'Movie', reviews: 'Review',
};

const TAGS: Readonly<Record<CollectionName, string>> = {
  celebrities: 'Celebrity profiles; the detail carries the filmography derived from movie casts',
  outfits: 'Outfits worn by celebrities at events, with designer, brand and where to buy',
  news: 'News articles about celebrities',
  movies: 'Movies with their cast, status and where to get tickets',
  reviews: 'Movie reviews with scores; the movie title, poster and details come from the reviewed movie',
};

/** Response examples per collection, cut from the bundled data by the real handlers (test/openapi/examples.ts). */
export type Examples = Readonly<Record<CollectionName, { readonly list: unknown; readonly detail: unknown }>>;
const examples: Examples = EXAMPLES;

/** A digits-only decimal, as the server reads minRating and maxRating (src/query/parse.ts). */
export const DECIMAL_PATTERN = '^[0-9]+(\\.[0-9]+)?$';

const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);
const json = (schema: JsonSchema, example?: unknown) => ({ 'application/json': example === undefined ? { schema } : { schema, example } });
const rateLimitHeaders = () => ({ RateLimit: $ref('headers', 'RateLimit'), 'RateLimit-Policy': $ref('headers', 'RateLimit-Policy') });

/** A tagged 200 and the 304 that answers a matching If-None-Match with the same headers (CONTRACT 11). */
function tagged(description: string, headers: Record<string, unknown>, schema: JsonSchema, example?: unknown): Record<string, JsonSchema> {
  const all = { ...headers, ETag: $ref('headers', 'ETag'), 'Cache-Control': $ref('headers', 'Cache-Control') };
  return {
    200: { description, headers: all, content: json(schema, example) },
    304: { description: 'Not modified: If-None-Match named the current ETag. No body; the headers a 200 would carry. Never counted.', headers: all },
  };
}

function filterParameters(f: FilterDef): JsonSchema[] {
  const q = (name: string, schema: JsonSchema, description: string) => ({ name, in: 'query', required: false, schema, description });
  switch (f.kind) {
    case 'text':
      return [q(f.param, { type: 'string', minLength: 1 }, 'Whole-value match, case- and accent-insensitive; an array field matches if any element does. Empty or blank: 400')];
    case 'slug':
      return [q(f.param, { type: 'string', pattern: SLUG_PATTERN }, 'Exact slug of the referenced record; anything that is not a slug: 400')];
    case 'enum':
      return [q(f.param, { type: 'string', enum: [...f.values] }, 'One of the listed values, else 400')];
    case 'boolean':
      return [q(f.param, { type: 'boolean' }, '`true`: only flagged records; `false`: only the records whose flag is false. Anything else: 400')];
    case 'range': {
      // Digits with an optional fraction, compared as written: `.5`, `5.`, `1e1` and 10.0000000000000001 are 400s.
      const rule = `a decimal from ${f.lowest} to ${f.highest} written as digits with an optional fraction (7, 7.5; not .5, 5. or 1e1), ${f.minParam} <= ${f.maxParam}`;
      const bound = (d: number) => ({ type: 'string', pattern: DECIMAL_PATTERN, default: String(d), examples: ['7', '7.5'] });
      return [q(f.minParam, bound(f.lowest), `Lowest value included: ${rule}`), q(f.maxParam, bound(f.highest), `Highest value included: ${rule}`)];
    }
  }
}

/** The scopes of src/errors.ts that each kind of operation serves. */
const SCOPES = {
  list: ['any', 'api', 'keyed', 'list'],
  detail: ['any', 'api', 'keyed', 'detail'],
  document: ['any', 'api'],
  health: ['any'],
} as const satisfies Record<string, readonly ErrorScope[]>;

interface OperationSpec {
  readonly id: string;
  readonly tag: string;
  readonly summary: string;
  readonly description: string;
  readonly parameters: readonly unknown[];
  readonly scopes: readonly ErrorScope[];
  /** The 200 response (and any other non-error one), with a body. */
  readonly ok: Record<string, JsonSchema>;
  readonly public?: boolean;
}

/** GET and its HEAD twin (CONTRACT 1: HEAD is answered like GET without a body). */
function getAndHead(spec: OperationSpec, responses: Record<string, unknown>): Record<string, unknown> {
  const op = (head: boolean) => ({
    ...(spec.public ? { security: [] } : {}),
    operationId: head ? `head${capital(spec.id)}` : spec.id,
    tags: [spec.tag],
    summary: head ? `Headers only: ${spec.summary[0]!.toLowerCase()}${spec.summary.slice(1)}` : spec.summary,
    description: head ? `The same as GET ${spec.summary.toLowerCase()}, without a body: the same status and headers, Content-Length included.` : spec.description,
    ...(spec.parameters.length > 0 ? { parameters: spec.parameters } : {}),
    responses: {
      ...(head ? Object.fromEntries(Object.entries(spec.ok).map(([s, r]) => [s, { description: r.description, ...(r.headers ? { headers: r.headers } : {}) }])) : spec.ok),
      ...errorResponses(spec.scopes, responses, head),
    },
  });
  return { get: op(false), head: op(true) };
}

function operations(def: ResourceDefinition, responses: Record<string, unknown>): Record<string, unknown> {
  const name = SINGULAR[def.name];
  const ok = (schema: string, description: string, example: unknown) =>
    tagged(description, { 'X-Request-Id': $ref('headers', 'X-Request-Id'), ...rateLimitHeaders() }, $ref('schemas', schema), example);
  const sort = {
    name: 'sort', in: 'query', required: false,
    schema: { type: 'string', enum: def.sorts.map((s) => s.name), default: def.sorts[0]!.name },
    description: 'Order of the records; ties break on _id ascending, so paging never repeats or skips a record',
  };
  const filters = def.filters.flatMap((f) => (f.kind === 'range' ? [f.minParam, f.maxParam] : [f.param]));
  return {
    [`/api/v1/${def.name}`]: getAndHead(
      {
        id: `list${capital(def.name)}`,
        tag: def.name,
        summary: `List ${def.name}`,
        description:
          `A page of ${def.name} in the list shape. Filters: ${filters.join(', ')}; \`search\` is a substring match. ` +
          'A recognised parameter given twice is a 400; unknown parameters are ignored. A 200 counts against the monthly quota.',
        parameters: [
          $ref('parameters', 'Page'), $ref('parameters', 'Limit'), sort, $ref('parameters', 'Search'), ...def.filters.flatMap(filterParameters),
          $ref('parameters', 'IfNoneMatch'),
        ],
        scopes: SCOPES.list,
        ok: ok(`${name}List`, `A page of ${def.name} (list shape)`, examples[def.name].list),
      },
      responses,
    ),
    [`/api/v1/${def.name}/{slug}`]: getAndHead(
      {
        id: `get${name}`,
        tag: def.name,
        summary: `One ${name} by slug`,
        description: `One ${name} in the detail shape, found by its slug. A 200 counts against the monthly quota.`,
        parameters: [$ref('parameters', 'Slug'), $ref('parameters', 'IfNoneMatch')],
        scopes: SCOPES.detail,
        ok: ok(`${name}Response`, `One ${name} (detail shape)`, examples[def.name].detail),
      },
      responses,
    ),
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
  const what = list ? `A page of ${def.name}` : `One ${SINGULAR[def.name]}`;
  return { type: 'object', description: `${what} in the success envelope`, properties, required: Object.keys(properties), additionalProperties: false };
}

function components(): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = {};
  for (const def of RESOURCE_LIST) {
    const name = SINGULAR[def.name];
    schemas[`${name}ListItem`] = { description: `${name}, list shape`, ...recordSchema(def, def.listFields) };
    schemas[`${name}Detail`] = { description: `${name}, detail shape`, ...recordSchema(def, def.detailFields) };
    schemas[`${name}List`] = envelope(def, true);
    schemas[`${name}Response`] = envelope(def, false);
  }
  const count = (min: number, description: string, max?: number) => ({ type: 'integer', minimum: min, ...(max ? { maximum: max } : {}), description });
  schemas.Pagination = {
    type: 'object',
    description: 'Where a page stands in the whole result',
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
    description: 'The monthly quota of the account, on a 429',
    properties: {
      used: { type: 'integer', minimum: 0, description: 'Requests counted this month; equals total on a 429' },
      total: { type: 'integer', minimum: 0, description: "The plan's monthly quota" },
      resetsOn: { type: 'string', format: 'date-time', description: 'The first instant of the next UTC month' },
    },
    required: ['used', 'total', 'resetsOn'],
    additionalProperties: false,
  };
  Object.assign(schemas, errorSchemas());
  const integer = (min: number, def: number, max?: number) => ({ type: 'integer', minimum: min, ...(max ? { maximum: max } : {}), default: def });
  return {
    schemas,
    responses: {},
    parameters: {
      Page: { name: 'page', in: 'query', required: false, description: 'Decimal integer from 1; a page past the last is empty, with the true total and pages', schema: integer(1, 1, Number.MAX_SAFE_INTEGER) },
      Limit: { name: 'limit', in: 'query', required: false, description: `Decimal integer from 1; above ${MAX_LIMIT} it is served as ${MAX_LIMIT} (pagination.limit says so)`, schema: integer(1, DEFAULT_LIMIT) },
      Search: { name: 'search', in: 'query', required: false, description: 'Trimmed, case- and accent-insensitive substring of the name or title (reviews: the movie title); empty means no filter', schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH } },
      IfNoneMatch: {
        name: 'If-None-Match', in: 'header', required: false,
        description: 'ETags of representations you hold (or *): when one is current the answer is a 304 without a body, which does not count against the quota',
        schema: { type: 'string' },
      },
      Slug: { name: 'slug', in: 'path', required: true, description: 'The record slug; anything that is not a slug is a 404', schema: { type: 'string', pattern: SLUG_PATTERN } },
    },
    headers: {
      'X-Request-Id': { description: 'Names the request in the server log', schema: { type: 'string' } },
      ETag: {
        description: 'Strong entity tag of this answer: it changes when the data, the request or (celebrities, for `age`) the UTC day does. Send it back in If-None-Match',
        schema: { type: 'string', pattern: '^"[^"]+"$' },
      },
      'Cache-Control': { description: '`private, no-cache` on a tagged answer: keep it, and revalidate it with If-None-Match before use', schema: { const: 'private, no-cache' } },
      RateLimit: { description: 'draft-ietf-httpapi-ratelimit-headers: `"monthly";r=<remaining>;t=<seconds to reset>` (absent on unlimited plans)', schema: { type: 'string' } },
      'RateLimit-Policy': { description: '`"monthly";q=<quota>;w=<seconds in the month>` (absent on unlimited plans)', schema: { type: 'string' } },
      'Retry-After': { description: 'Seconds to wait before trying again: until the quota resets (429), or until the service is back (503)', schema: { type: 'integer', minimum: 0 } },
    },
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'cel_ followed by at least 32 base62 characters; shown once when created' } },
  };
}

/** Builds the document (a fresh object each call; the server uses openapiBody()). */
export function buildOpenApiDocument(): Record<string, unknown> {
  const parts = components();
  const responses = parts.responses as Record<string, unknown>;
  const paths: Record<string, unknown> = {};
  for (const def of RESOURCE_LIST) Object.assign(paths, operations(def, responses));
  paths['/api/v1/openapi.json'] = getAndHead(
    {
      id: 'getOpenApiDocument', tag: 'meta', public: true, parameters: [$ref('parameters', 'IfNoneMatch')], scopes: SCOPES.document,
      summary: 'This document', description: 'The OpenAPI document of this API. Needs no key and is never counted.',
      ok: tagged('The OpenAPI document', { 'X-Request-Id': $ref('headers', 'X-Request-Id') }, { type: 'object' }),
    },
    responses,
  );
  const store = {
    type: 'object',
    description:
      'The store behind the quota counts: the state directory\'s `files` (`memory` when embedded without one), or Redis as one server ' +
      '(`single`), a `cluster` or a `sentinel`-managed primary. `node` is the host:port of the Redis primary that answered last ' +
      '(or failed to): given to loopback clients and on `--admin-port` only, the clients `/metrics` answers.',
    properties: { mode: { enum: ['files', 'memory', 'single', 'cluster', 'sentinel'] }, node: { type: 'string', examples: ['10.0.0.7:6379'] } },
    required: ['mode'],
    additionalProperties: false,
  };
  const health = (...status: string[]) => ({ type: 'object', properties: { status: { enum: status }, store }, required: ['status'], additionalProperties: false });
  paths['/healthz'] = getAndHead(
    {
      id: 'getHealth', tag: 'meta', public: true, parameters: [], scopes: SCOPES.health,
      summary: 'Liveness and readiness', description: 'For load balancers: needs no key, answers on any transport, never counted.',
      ok: {
        200: { description: 'Serving', content: json(health('ok'), { status: 'ok', store: { mode: 'sentinel', node: '10.0.0.7:6379' } }) },
        503: {
          description: 'Not serving: shutting down (`draining`), or the quota store is unreachable (`unavailable`); send traffic elsewhere',
          content: json(health('draining', 'unavailable'), { status: 'unavailable', store: { mode: 'cluster' } }),
        },
      },
    },
    responses,
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Celebrity media data API',
      version: API_VERSION,
      summary: 'Read-only celebrity profiles, outfits, news, movies and reviews',
      description:
        'Every /api/v1 resource needs the x-api-key header and HTTPS. Only 200 responses count against the monthly quota ' +
        '(free 100, starter 1000, pro 10000, enterprise unlimited), which resets at 00:00 UTC on the 1st. Every error is ' +
        '`{success: false, error, message}` with a code that never changes.',
      contact: { name: 'The operator of this instance' },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: '{origin}',
        description: 'The instance you run (`npm start` serves https://localhost:8443)',
        variables: { origin: { default: 'https://localhost:8443', description: 'Scheme, host and port of your instance' } },
      },
    ],
    security: [{ apiKey: [] }],
    tags: [
      ...RESOURCE_LIST.map((d) => ({ name: d.name, description: TAGS[d.name] })),
      { name: 'meta', description: 'The document itself and the health check' },
    ],
    paths,
    components: parts,
  };
}

let body: Buffer | null = null;

/** The served body: built on first use, then the same Buffer for every request. */
export function openapiBody(): Buffer {
  body ??= Buffer.from(JSON.stringify(buildOpenApiDocument()));
  return body;
}
