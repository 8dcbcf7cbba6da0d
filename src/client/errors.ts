// The client's errors: one class per code a caller handles differently, all under CelebrityApiError,
// which carries the status, the code of the registry (src/errors.ts) and the request id to quote.
import type { ErrorCode } from '../errors.ts';
import type { ErrorBody, Quota } from './types.ts';

/** Any answer other than a 200 (or a 304 the client resolved from its cache), or no answer at all. */
export class CelebrityApiError extends Error {
  override readonly name: string = 'CelebrityApiError';
  constructor(
    message: string,
    /** The HTTP status; 0 when no answer came (ConnectionError). */
    readonly status: number,
    /** The `error` of the body; CONNECTION_FAILED when no answer came. */
    readonly code: ErrorCode | 'CONNECTION_FAILED',
    /** X-Request-Id of the answer, to quote to the operator. */
    readonly requestId: string | null,
    /** Seconds the server asked to wait (Retry-After), if it did. */
    readonly retryAfter: number | null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** 401: the key is missing, unknown or revoked. */
export class InvalidApiKeyError extends CelebrityApiError {
  override readonly name = 'InvalidApiKeyError';
}

/** 429: the month's quota is used up; `quota.resetsOn` says when it comes back (as does `retryAfter`). */
export class QuotaExceededError extends CelebrityApiError {
  override readonly name = 'QuotaExceededError';
  constructor(
    message: string,
    status: number,
    requestId: string | null,
    retryAfter: number | null,
    readonly quota: Quota,
  ) {
    super(message, status, 'QUOTA_EXCEEDED', requestId, retryAfter);
  }
}

/** 400 INVALID_PARAMETER: the message names the parameter and its rule. */
export class InvalidParameterError extends CelebrityApiError {
  override readonly name = 'InvalidParameterError';
}

/** 404: no record with that slug. */
export class NotFoundError extends CelebrityApiError {
  override readonly name = 'NotFoundError';
}

/** 503: the server cannot count requests right now; try again after `retryAfter` seconds. */
export class ServiceUnavailableError extends CelebrityApiError {
  override readonly name = 'ServiceUnavailableError';
}

/** No answer: the connection failed or was dropped. `cause` holds fetch's error. */
export class ConnectionError extends CelebrityApiError {
  override readonly name = 'ConnectionError';
}

const BY_CODE: Partial<Record<ErrorCode, typeof CelebrityApiError>> = {
  INVALID_API_KEY: InvalidApiKeyError,
  INVALID_PARAMETER: InvalidParameterError,
  NOT_FOUND: NotFoundError,
  SERVICE_UNAVAILABLE: ServiceUnavailableError,
};

/** The error for an answer that is not a 200: its class by code, from the body when it is ours. */
export function errorFromResponse(status: number, text: string, requestId: string | null, retryAfter: number | null): CelebrityApiError {
  let body: Partial<ErrorBody> = {};
  try {
    body = JSON.parse(text) as Partial<ErrorBody>;
  } catch {
    // not JSON (a proxy in between): the status alone speaks
  }
  const code = typeof body.error === 'string' ? body.error : 'INTERNAL_ERROR';
  const message = typeof body.message === 'string' ? body.message : `HTTP ${status}`;
  if (code === 'QUOTA_EXCEEDED' && body.quota) return new QuotaExceededError(message, status, requestId, retryAfter, body.quota);
  const Class = BY_CODE[code] ?? CelebrityApiError;
  return new Class(message, status, code, requestId, retryAfter);
}
