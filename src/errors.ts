// The one registry of error codes (CONTRACT 2). Codes and statuses never change; messages may.
// The OpenAPI document and the README's error table are checked against it, code by code.

/**
 * Which requests a code can answer, so the OpenAPI document lists it on exactly those operations:
 * `any` every request (sent before or regardless of routing), `api` every /api/ path, `keyed` the
 * paths that need a key, `list` and `detail` the resource endpoints of that kind.
 */
export const ERROR_SCOPES = ['any', 'api', 'keyed', 'list', 'detail'] as const;
export type ErrorScope = (typeof ERROR_SCOPES)[number];

interface ErrorSpec {
  readonly status: number;
  /** The default `message` of the body. */
  readonly message: string;
  /** When it is sent, for the document and the README. */
  readonly when: string;
  readonly scope: ErrorScope;
}

export const ERRORS = {
  BAD_REQUEST: {
    status: 400,
    message: 'The request could not be parsed',
    when: 'The request is not well-formed HTTP (RFC 9112): a malformed request line or header, conflicting framing, a missing or repeated Host',
    scope: 'any',
  },
  INVALID_PARAMETER: {
    status: 400,
    message: 'A query parameter is invalid',
    when: 'A query parameter breaks its rule; the message names the parameter and the rule',
    scope: 'list',
  },
  INVALID_API_KEY: {
    status: 401,
    message: 'API key is invalid or has been revoked',
    when: 'The x-api-key header is missing, malformed, unknown or revoked (one identical body for all)',
    scope: 'keyed',
  },
  HTTPS_REQUIRED: {
    status: 403,
    message: 'HTTPS is required. A key sent over plain HTTP must be treated as leaked: revoke it and create a new one',
    when: 'An /api/ request arrived over plain HTTP; a key sent that way must be treated as leaked',
    scope: 'api',
  },
  NOT_FOUND: { status: 404, message: 'Not found', when: 'No record with that slug, or no such route', scope: 'detail' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    message: 'Only GET and HEAD are allowed',
    when: 'Any method but GET and HEAD; the Allow header lists them',
    scope: 'any',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: 'The request took too long to arrive',
    when: 'The request headers took more than 10 s, or the whole request more than 30 s, to arrive',
    scope: 'any',
  },
  URI_TOO_LONG: {
    status: 414,
    message: 'The request target is too long',
    when: 'The request target (path and query) is longer than 8 KiB',
    scope: 'any',
  },
  EXPECTATION_FAILED: {
    status: 417,
    message: 'The only expectation this server meets is Expect: 100-continue',
    when: 'An Expect header other than 100-continue (RFC 9110 10.1.1)',
    scope: 'any',
  },
  QUOTA_EXCEEDED: {
    status: 429,
    message: 'Monthly quota exceeded',
    when: "The plan's monthly quota is used up until the first instant of the next UTC month; Retry-After says how long",
    scope: 'keyed',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'The request headers are too large',
    when: 'The request headers are larger than 16 KiB',
    scope: 'any',
  },
  INTERNAL_ERROR: {
    status: 500,
    message: 'An unexpected error occurred',
    when: 'A bug: logged on the server with the X-Request-Id, never described in the body',
    scope: 'any',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'Requests cannot be counted right now, and nothing is served uncounted. Retry shortly',
    when: 'The request cannot be counted (the shared quota store is unreachable, or the usage log disk refuses in strict mode), so nothing is served uncounted (CONTRACT 9); Retry-After says when to try again',
    scope: 'keyed',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** Every code, in registry order. */
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export interface QuotaInfo {
  readonly used: number;
  readonly total: number;
  readonly resetsOn: string;
}

/** The JSON body of SPEC section 7: `{success:false, error, message}` plus `quota` on 429 only. */
export function errorBody(code: ErrorCode, message: string = ERRORS[code].message, quota?: QuotaInfo): string {
  return JSON.stringify(quota ? { success: false, error: code, message, quota } : { success: false, error: code, message });
}

/** A query parameter broke its rule: 400 naming the parameter and the rule (CONTRACT 3). */
export class ParameterError extends Error {
  readonly code = 'INVALID_PARAMETER' as const;
  constructor(
    readonly param: string,
    rule: string,
  ) {
    super(`Invalid parameter '${param}': ${rule}`);
  }
}
