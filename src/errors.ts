// The one registry of error codes (CONTRACT 2). Codes and statuses never change; messages may.

export const ERRORS = {
  INVALID_PARAMETER: { status: 400, message: 'A query parameter is invalid' },
  INVALID_API_KEY: { status: 401, message: 'API key is invalid or has been revoked' },
  HTTPS_REQUIRED: {
    status: 403,
    message: 'HTTPS is required. A key sent over plain HTTP must be treated as leaked: revoke it and create a new one',
  },
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Only GET and HEAD are allowed' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large' },
  BAD_REQUEST: { status: 400, message: 'The request could not be parsed' },
  URI_TOO_LONG: { status: 414, message: 'The request target is too long' },
  EXPECTATION_FAILED: { status: 417, message: 'The only expectation this server meets is Expect: 100-continue' },
  QUOTA_EXCEEDED: { status: 429, message: 'Monthly quota exceeded' },
  INTERNAL_ERROR: { status: 500, message: 'An unexpected error occurred' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Requests cannot be counted right now, and nothing is served uncounted. Retry shortly' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

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
