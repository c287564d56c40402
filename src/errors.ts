import type { ErrorBody, ErrorCode } from './contract/types';
import { StoreUnavailableError } from './store/errors';
import { StacklessError } from './thrown';

/** The HTTP status and default message of every error code; the one registry of errors. */
export const ERRORS: { readonly [C in ErrorCode]: { readonly status: number; readonly message: string } } = {
  invalid_request: { status: 400, message: 'The request is malformed' },
  unauthorized: { status: 401, message: 'A valid API key is required' },
  insufficient_scope: { status: 403, message: 'The API key lacks a scope the operation requires' },
  order_not_found: { status: 404, message: 'The order was not found' },
  pet_not_found: { status: 404, message: 'The pet was not found' },
  not_found: { status: 404, message: 'No operation exists at this path' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path' },
  webhook_endpoint_not_found: { status: 404, message: 'The webhook endpoint was not found' },
  order_already_shipped: { status: 409, message: 'The order has already shipped and cannot be cancelled' },
  idempotency_key_in_use: { status: 409, message: 'A placement with this Idempotency-Key is still running' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with another request body' },
  rate_limited: { status: 429, message: "The API key's rate limit has been reached" },
  internal_error: { status: 500, message: 'Internal server error' },
  service_unavailable: { status: 503, message: 'The order store is unavailable' },
};

/** The one error type handlers throw; it carries a code one of the documents lists. */
export class ApiError extends StacklessError {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers, such as `WWW-Authenticate` or `Allow`. */
  readonly headers: Readonly<Record<string, string>>;

  /** `status` differs from the code's own only for the request limits (408, 413, 431), all `invalid_request`. */
  constructor(code: ErrorCode, message?: string, headers: Record<string, string> = {}, status = ERRORS[code].status) {
    super(message === undefined ? ERRORS[code].message : printable(message));
    this.code = code;
    this.status = status;
    this.headers = headers;
  }

  /** The spec's `Error` object for this error. */
  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** The longest `message` an Error carries: the bound v3's document gives it. */
export const MESSAGE_LIMIT = 1024;
// C0 controls and DEL: what a message quoting a client's input (a query value) may carry. Tested
// for before the global replace: a message without one, nearly every message, costs half as much.
const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROLS = /[\u0000-\u001f\u007f]/g;

/**
 * A message as an Error carries it: a control character a client sent, quoted in it, shown as its
 * `\uXXXX` escape, and the whole cut to MESSAGE_LIMIT characters, so that every message keeps
 * within the `Error` schema whatever input it quotes.
 */
function printable(message: string): string {
  const shown = CONTROL.test(message) ? message.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : message;
  return shown.length <= MESSAGE_LIMIT ? shown : `${shown.slice(0, MESSAGE_LIMIT - 1)}…`;
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
