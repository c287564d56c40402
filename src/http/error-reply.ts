import { STATUS_CODES } from 'node:http';
import { declares, frameworkStatuses } from '../contract/framework-statuses';
import { ApiError, ERRORS, toApiError } from '../errors';
import type { KeyRefusal } from '../keys';
import type { Logger } from '../logger';
import type { AuthRefusalReason } from '../metrics';
import type { Operation } from '../openapi';
import { fixed, serialize, type Reply } from './reply';
import type { RequestContext } from './request-context';

/**
 * The one place where anything becomes an Error reply: a thrown ApiError, a refused key, a request
 * no operation matches, a reply the contract refused, a failure, and a client error at the socket.
 * Every other module asks it; nothing else builds an Error body.
 */

/** The reply that renders an ApiError: the spec's Error body, its status, and its headers. */
function errorReply(error: ApiError): Reply {
  return { status: error.status, body: error.toBody(), headers: { ...error.headers }, error };
}

/** An Error reply that never varies, made once and sent as it is to every request that gets it. */
export function fixedErrorReply(error: ApiError): Reply {
  return fixed(errorReply(Object.freeze(error)));
}

/**
 * The reply to anything thrown while answering a request: an ApiError renders as itself; anything
 * else is logged with the request's id (and operation) and becomes the generic 500 (503 for an
 * unreachable store).
 */
export function thrownReply(err: unknown, logger: Logger, context: RequestContext): Reply {
  const { error, expected } = toApiError(err);
  if (!expected) logger.error({ err, requestId: context.id, operationId: context.operation?.operationId }, 'request failed');
  return errorReply(error);
}

/**
 * An Error as raw HTTP/1.1 bytes, for a connection whose request never became one (Node's
 * `clientError`): the head sendReply writes, the common headers, and `Connection: close`.
 */
export function rawErrorResponse(error: ApiError): string {
  const { headers, payload } = serialize(errorReply(error), undefined);
  const head = { ...headers, Connection: 'close' };
  const lines = Object.entries(head).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${lines.join('')}\r\n${payload ?? ''}`;
}

/** The methods an `Allow` header lists, in the order it lists them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
const REALM = 'Bearer realm="petstore-orders"';
const NOT_FOUND = fixedErrorReply(new ApiError('not_found'));
const NO_KEY = fixedErrorReply(new ApiError('unauthorized', undefined, { 'WWW-Authenticate': REALM }));
const INVALID_KEY = fixedErrorReply(new ApiError('unauthorized', undefined, { 'WWW-Authenticate': `${REALM}, error="invalid_token"` }));
const EXPIRED_KEY = fixedErrorReply(
  new ApiError('unauthorized', 'The API key has expired', { 'WWW-Authenticate': `${REALM}, error="invalid_token"` }),
);
const INTERNAL_ERROR = fixedErrorReply(new ApiError('internal_error'));

/** The Error replies of one document's operations. */
export interface ErrorReplies {
  /**
   * The reply to anything thrown while answering a request (to the operation its context matched,
   * if any), as thrownReply makes it, with its status fitted to what the operation declares.
   */
  thrown(err: unknown, context: RequestContext): Reply;
  /** The 401 for a request that met none of its operation's requirements; the 503 when the store could not be asked. */
  unauthorized(context: RequestContext, refusal: KeyRefusal | Error | undefined): Reply;
  /**
   * The refusal of a key that lacks some (`missing`) of the scopes an operation requires
   * (`required`), with the challenge of RFC 6750 §3.1 naming the scopes the operation requires and
   * a message that names the missing ones: `403 insufficient_scope` where the operation declares a
   * 403 (v3), else `401 unauthorized`, the status v1 and v2 give a refused key.
   */
  insufficientScope(operation: Operation, required: readonly string[], missing: readonly string[]): Reply;
  /**
   * The refusal of a request whose key has spent its rate limit, to be retried after `retryAfter`
   * seconds, with `Retry-After`: `429 rate_limited` where the operation declares a 429 (v3), else
   * `503 service_unavailable`, the status v1 and v2 give a request the service cannot take now.
   */
  rateLimited(operation: Operation, retryAfter: number): Reply;
  /** The reply to a request no operation matches: 404, or 405 with the path's methods when only the method is wrong. */
  miss(path: string): Reply;
  /** The 500 sent in place of a reply the contract refused. */
  readonly internal: Reply;
}

/**
 * The Error replies of a document's operations. A status the server makes itself (frameworkStatuses)
 * that the operation does not declare is answered with the status the rule names in its place
 * (a 415 or a 413 as the operation's 400), with the same code and message; the server does not
 * start with a document where a status has no such place (see refuseUndeclaredStatuses). Every
 * refusal of a key for its own sake (expired, revoked, lacking a scope, over its limit) is made
 * here, and so counted here, once: `onKeyRefused`.
 */
export function createErrorReplies(
  operations: readonly Operation[],
  methodsAt: (path: string) => readonly string[],
  logger: Logger,
  onKeyRefused: (reason: AuthRefusalReason) => void = () => undefined,
): ErrorReplies {
  const fallbacks = new Map(operations.map((operation) => [operation.operationId, fallbacksOf(operation)]));
  // One 405 per set of methods a path of the document answers to: as many as its paths, at most.
  const notAllowed = new Map<string, Reply>();
  // One refusal per set of required and missing scopes: as many as the operations' scopes allow.
  const scopeRefusals = new Map<string, Reply>();

  const fitted = (reply: Reply, operation: Operation | undefined): Reply => {
    const status = operation && reply.error ? fallbacks.get(operation.operationId)?.get(reply.status) : undefined;
    if (status === undefined || reply.error === undefined) return reply;
    return errorReply(new ApiError(reply.error.code, reply.error.message, reply.error.headers, status));
  };

  return {
    thrown: (err, context) => fitted(thrownReply(err, logger, context), context.operation),
    unauthorized: (context, refusal) => {
      if (refusal instanceof Error) return fitted(thrownReply(refusal, logger, context), context.operation);
      if (refusal === 'expired' || refusal === 'revoked') onKeyRefused(refusal);
      if (refusal === 'expired') return EXPIRED_KEY;
      return refusal === 'invalid' || refusal === 'revoked' ? INVALID_KEY : NO_KEY;
    },
    insufficientScope: (operation, required, missing) => {
      onKeyRefused('scope');
      const code = declares(operation, 403) ? 'insufficient_scope' : 'unauthorized';
      const key = `${code} ${required.join(' ')},${missing.join(' ')}`;
      let reply = scopeRefusals.get(key);
      if (reply === undefined) {
        const challenge = `${REALM}, error="insufficient_scope", scope="${required.join(' ')}"`;
        const message = `The API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
        reply = fixedErrorReply(new ApiError(code, message, { 'WWW-Authenticate': challenge }));
        scopeRefusals.set(key, reply);
      }
      return reply;
    },
    rateLimited: (operation, retryAfter) => {
      onKeyRefused('limit');
      return errorReply(
        new ApiError(declares(operation, 429) ? 'rate_limited' : 'service_unavailable', ERRORS.rate_limited.message, {
          'Retry-After': String(retryAfter),
        }),
      );
    },
    miss: (path) => {
      const allow = allowed(methodsAt(path)).join(', ');
      if (allow === '') return NOT_FOUND;
      let reply = notAllowed.get(allow);
      if (reply === undefined) {
        reply = fixedErrorReply(new ApiError('method_not_allowed', undefined, { Allow: allow }));
        notAllowed.set(allow, reply);
      }
      return reply;
    },
    internal: INTERNAL_ERROR,
  };
}

/** The statuses the server makes that `operation` answers with another: each one it does not declare, by the one it declares in its place. */
function fallbacksOf(operation: Operation): ReadonlyMap<number, number> {
  const map = new Map<number, number>();
  for (const { status, fallback } of frameworkStatuses(operation, undefined)) {
    if (fallback !== undefined && !declares(operation, status) && declares(operation, fallback)) map.set(status, fallback);
  }
  return map;
}

/** The methods of a path, for the `Allow` header of a 405: in METHODS' order, HEAD after GET. */
function allowed(methods: readonly string[]): string[] {
  const found = new Set(methods);
  if (found.has('GET')) found.add('HEAD');
  return METHODS.filter((method) => found.has(method));
}
