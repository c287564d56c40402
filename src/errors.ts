import type { ErrorBody, ErrorCode } from './contract/types';
import { StoreUnavailableError } from './store/errors';
import { StacklessError } from './thrown';

/** The HTTP status and default message of every error code; the one registry of errors. */
export const ERRORS: { readonly [C in ErrorCode]: { readonly status: number; readonly message: string } } = {
  invalid_request: { status: 400, message: 'The request is malformed' },
  unauthorized: { status: 401, message: 'A valid API key is required' },
  order_not_found: { status: 404, message: 'The order was not found' },
  pet_not_found: { status: 404, message: 'The pet was not found' },
  not_found: { status: 404, message: 'No operation exists at this path' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path' },
  order_already_shipped: { status: 409, message: 'The order has already shipped and cannot be cancelled' },
  internal_error: { status: 500, message: 'Internal server error' },
  service_unavailable: { status: 503, message: 'The order store is unavailable' },
};

/** The one error type handlers throw; it carries a code from the spec's closed set. */
export class ApiError extends StacklessError {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers, such as `WWW-Authenticate` or `Allow`. */
  readonly headers: Readonly<Record<string, string>>;

  /** `status` differs from the code's own only for the request limits (408, 413, 431), all `invalid_request`. */
  constructor(code: ErrorCode, message?: string, headers: Record<string, string> = {}, status = ERRORS[code].status) {
    super(message ?? ERRORS[code].message);
    this.code = code;
    this.status = status;
    this.headers = headers;
  }

  /** The spec's `Error` object for this error. */
  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/**
 * Maps anything thrown to the ApiError a client may see. Only ApiErrors keep their message;
 * everything else becomes a generic 500 (or 503 for an unreachable store) and must be logged by the caller.
 */
export function toApiError(err: unknown): { error: ApiError; expected: boolean } {
  if (err instanceof ApiError) return { error: err, expected: true };
  if (err instanceof StoreUnavailableError) return { error: new ApiError('service_unavailable'), expected: false };
  return { error: new ApiError('internal_error'), expected: false };
}
