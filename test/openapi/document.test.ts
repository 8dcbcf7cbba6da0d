// The OpenAPI document: valid OpenAPI 3.1, and generated from the definitions (paths, parameters,
// sorts, filters, shapes, errors), so a change to a definition shows up in it by construction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import { buildOpenApiDocument, openapiBody, SINGULAR } from '../../src/http/openapi.ts';
import { errorSchemaName } from '../../src/http/openapi-errors.ts';
import { SLUG_PATTERN } from '../../src/http/openapi-schema.ts';
import { MOVIE_STATUSES } from '../../src/resources/movies.ts';
import { COLLECTIONS, RESOURCE_LIST } from '../../src/resources/index.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc: Json = buildOpenApiDocument();
const names = (fields: readonly (string | { name: string })[]) => fields.map((f) => (typeof f === 'string' ? f : f.name));

test('validates against the OpenAPI 3.1 schema', async () => {
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.deepEqual(result, { valid: true });
  assert.equal(validator.version, '3.1');
});

test('the validator does reject a broken document (the check above can fail)', async () => {
  const broken = buildOpenApiDocument() as Json;
  broken.paths['/api/v1/movies'].get.responses['200'] = { content: {} }; // a response needs a description
  assert.equal((await new Validator().validate(broken)).valid, false);
});

test('paths: the ten resource endpoints of SPEC 4, the document itself and /healthz', () => {
  const expected = COLLECTIONS.flatMap((c) => [`/api/v1/${c}`, `/api/v1/${c}/{slug}`]).concat('/api/v1/openapi.json', '/healthz');
  assert.deepEqual(Object.keys(doc.paths).sort(), expected.sort());
  for (const path of Object.keys(doc.paths)) assert.deepEqual(Object.keys(doc.paths[path]), ['get', 'head'], path);
});

test('HEAD: every GET has a HEAD twin with the same parameters, statuses and headers, and no body', () => {
  const resolve = (r: Json): Json => (r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r);
  const ids = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    const { get, head } = item;
    assert.deepEqual(head.parameters, get.parameters, path);
    assert.deepEqual(Object.keys(head.responses), Object.keys(get.responses), path);
    for (const [status, response] of Object.entries<Json>(head.responses)) {
      assert.equal(response.content, undefined, `${path} HEAD ${status}`);
      assert.deepEqual(response.headers, resolve(get.responses[status]).headers, `${path} HEAD ${status}`);
    }
    for (const op of [get, head]) {
      assert.ok(!ids.has(op.operationId), op.operationId);
      ids.add(op.operationId);
      assert.ok(op.description.length > 20 && op.tags.length === 1, op.operationId);
    }
  }
});

test('security: x-api-key header everywhere but the document and /healthz', () => {
  assert.deepEqual(doc.components.securitySchemes.apiKey, { ...doc.components.securitySchemes.apiKey, type: 'apiKey', in: 'header', name: 'x-api-key' });
  assert.deepEqual(doc.security, [{ apiKey: [] }]);
  assert.deepEqual(doc.paths['/api/v1/openapi.json'].get.security, []);
  assert.deepEqual(doc.paths['/healthz'].get.security, []);
});

for (const def of RESOURCE_LIST) {
  test(`${def.name}: list parameters come from the definition's sorts and filters`, () => {
    const params: Json[] = doc.paths[`/api/v1/${def.name}`].get.parameters;
    const resolved = params.map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p));
    const filterParams = def.filters.flatMap((f) => (f.kind === 'range' ? [f.minParam, f.maxParam] : [f.param]));
    assert.deepEqual(resolved.map((p) => p.name), ['page', 'limit', 'sort', 'search', ...filterParams, 'If-None-Match']);
    const sort = resolved.find((p) => p.name === 'sort')!;
    assert.deepEqual(sort.schema.enum, def.sorts.map((s) => s.name));
    assert.equal(sort.schema.default, 'latest');
    for (const p of resolved) assert.equal(p.in, p.name === 'If-None-Match' ? 'header' : 'query');
  });

  test(`${def.name}: record schemas list exactly the L and D fields, all required, nothing else`, () => {
    for (const [schema, fields] of [['ListItem', def.listFields], ['Detail', def.detailFields]] as const) {
      const s = doc.components.schemas[SINGULAR[def.name] + schema];
      assert.deepEqual(Object.keys(s.properties), names(fields));
      assert.deepEqual(s.required, names(fields));
      assert.equal(s.additionalProperties, false);
    }
  });
}

test('movies: status is an enum of the three values; limits and search carry their rules', () => {
  const status = doc.paths['/api/v1/movies'].get.parameters.find((p: Json) => p.name === 'status');
  assert.deepEqual(status.schema.enum, [...MOVIE_STATUSES]);
  assert.deepEqual(doc.components.parameters.Limit.schema, { ...doc.components.parameters.Limit.schema, type: 'integer', minimum: 1, default: 20 });
  assert.equal(doc.components.parameters.Search.schema.maxLength, 200);
  assert.equal(doc.components.schemas.Pagination.properties.limit.maximum, 50);
  assert.equal(doc.components.parameters.Page.schema.maximum, Number.MAX_SAFE_INTEGER);
  const params: Json[] = doc.paths['/api/v1/reviews'].get.parameters;
  for (const [name, bound] of [['minRating', '0'], ['maxRating', '10']]) {
    const schema = params.find((p) => p.name === name)!.schema;
    // Digits only, as the server reads them: a number schema would let `.5` and `1e1` through.
    assert.deepEqual([schema.type, schema.pattern, schema.default], ['string', '^[0-9]+(\\.[0-9]+)?$', bound]);
    const pattern = new RegExp(schema.pattern, 'u');
    assert.deepEqual(['7', '7.5', '10', '.5', '5.', '1e1', '-1'].map((v) => pattern.test(v)), [true, true, true, false, false, false, false]);
  }
  const celebrity = doc.paths['/api/v1/outfits'].get.parameters.find((p: Json) => p.name === 'celebrity');
  assert.equal(celebrity.schema.pattern, SLUG_PATTERN);
});

test('nullability: optional fields and objects may be null; required ones, derived from required references, and arrays never', () => {
  const c = doc.components.schemas.CelebrityDetail.properties;
  assert.equal(c.slug.type, 'string');
  assert.deepEqual(c.nationality.type, ['string', 'null']);
  assert.deepEqual(c.age.type, ['integer', 'null']);
  assert.equal(c.occupation.type, 'array');
  assert.deepEqual(c.socialMedia.type, ['object', 'null']); // an object the data lacks is null, never {}
  const film = c.filmography.items.properties;
  assert.deepEqual([film.title.type, film.slug.type, film.releaseDate.type, film.role.type], ['string', 'string', 'string', ['string', 'null']]);
  assert.equal(doc.components.schemas.OutfitListItem.properties.celebrity.type, 'object'); // a required reference
  assert.deepEqual(doc.components.schemas.MovieDetail.properties.status.enum, [...MOVIE_STATUSES]); // required: no null
  const review = doc.components.schemas.ReviewDetail.properties;
  assert.equal(review.movieTitle.type, 'string');
  assert.equal(review.movieDetails.type, 'object');
  assert.equal(review.movieDetails.properties.releaseYear.type, 'integer');
  assert.deepEqual(review.movieDetails.properties.runtime.type, ['integer', 'null']);
  assert.deepEqual(review.poster.type, ['string', 'null']);
  for (const name of ['scores', 'stats', 'author']) assert.deepEqual(review[name].type, ['object', 'null'], name);
  assert.equal(JSON.stringify(doc).includes('maxProperties'), false); // no `{}` alternative left anywhere
});

/** The codes an operation documents: each error response's schema is one code's schema or a oneOf of them. */
function documentedCodes(operation: Json): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [status, ref] of Object.entries<Json>(operation.responses)) {
    if (!ref.$ref) continue;
    const schema = doc.components.responses[ref.$ref.split('/').pop()].content['application/json'].schema;
    const refs: Json[] = schema.oneOf ?? [schema];
    out.set(status, refs.map((r) => doc.components.schemas[r.$ref.split('/').pop()].properties.error.const));
  }
  return out;
}

// [path, codes that operation can send]: the scope column of the registry, spelled out once here.
const SENT: [string, ErrorCode[]][] = [
  ['/api/v1/celebrities', ['BAD_REQUEST', 'INVALID_PARAMETER', 'INVALID_API_KEY', 'HTTPS_REQUIRED', 'METHOD_NOT_ALLOWED', 'REQUEST_TIMEOUT', 'URI_TOO_LONG', 'EXPECTATION_FAILED', 'QUOTA_EXCEEDED', 'HEADERS_TOO_LARGE', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']],
  ['/api/v1/reviews/{slug}', ['BAD_REQUEST', 'INVALID_API_KEY', 'HTTPS_REQUIRED', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'REQUEST_TIMEOUT', 'URI_TOO_LONG', 'EXPECTATION_FAILED', 'QUOTA_EXCEEDED', 'HEADERS_TOO_LARGE', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']],
  ['/api/v1/openapi.json', ['BAD_REQUEST', 'HTTPS_REQUIRED', 'METHOD_NOT_ALLOWED', 'REQUEST_TIMEOUT', 'URI_TOO_LONG', 'EXPECTATION_FAILED', 'HEADERS_TOO_LARGE', 'INTERNAL_ERROR']],
  ['/healthz', ['BAD_REQUEST', 'METHOD_NOT_ALLOWED', 'REQUEST_TIMEOUT', 'URI_TOO_LONG', 'EXPECTATION_FAILED', 'HEADERS_TOO_LARGE', 'INTERNAL_ERROR']],
];
for (const [path, expected] of SENT) {
  test(`errors: ${path} documents exactly the codes it can send, each under its status`, () => {
    const codes = documentedCodes(doc.paths[path].get);
    assert.deepEqual([...codes.values()].flat().sort(), [...expected].sort());
    for (const [status, list] of codes) for (const code of list) assert.equal(ERRORS[code as ErrorCode].status, Number(status), code);
  });
}

test('errors: every code of the registry has its schema, is sent by some operation, with quota on 429 only', () => {
  const everywhere = new Set(Object.values<Json>(doc.paths).flatMap((item) => [...documentedCodes(item.get).values()].flat()));
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const schema = doc.components.schemas[errorSchemaName(code)];
    assert.equal(schema.properties.error.const, code);
    assert.deepEqual(schema.required, ERRORS[code].status === 429 ? ['success', 'error', 'message', 'quota'] : ['success', 'error', 'message']);
    assert.ok(everywhere.has(code), `${code} is on no operation`);
  }
  assert.deepEqual(doc.components.schemas.Quota.required, ['used', 'total', 'resetsOn']);
  assert.deepEqual(Object.keys(doc.components.responses.QuotaExceeded.headers).sort(), ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id']);
  assert.ok(doc.components.responses.ServiceUnavailable.headers['Retry-After']);
  const list = doc.paths['/api/v1/celebrities'].get.responses;
  assert.deepEqual(Object.keys(list['200'].headers).sort(), ['Cache-Control', 'ETag', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id']);
});

test('conditional requests: every 200 of /api/v1 has an ETag and a 304 twin with the same headers and no body', () => {
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    if (!path.startsWith('/api/v1/')) continue;
    const { 200: ok, 304: notModified } = item.get.responses;
    assert.ok(ok.headers.ETag, path);
    assert.deepEqual(notModified.headers, ok.headers, path);
    assert.equal(notModified.content, undefined, path);
    assert.ok(item.get.parameters.some((p: Json) => p.$ref === '#/components/parameters/IfNoneMatch'), path);
  }
});

test('the served body is built once: the same Buffer every time, equal to the document', () => {
  const body = openapiBody();
  assert.equal(openapiBody(), body);
  assert.deepEqual(JSON.parse(body.toString('utf8')), doc);
});
