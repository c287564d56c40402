import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpenAPIV3 } from 'openapi-types';
import { undeclaredQueryPolicy } from '../contract/document';
import { DEFAULT_IDEMPOTENCY_HOURS } from '../config';
import { assertStatusesDeclared } from '../contract/framework-statuses';
import type { ApiVersion } from '../contract/types';
import { assertScopesDeclared } from '../contract/scopes';
import { bearerCheck } from '../keys';
import type { Logger } from '../logger';
import type { AuthRefusalReason } from '../metrics';
import { andThen, type MaybePromise } from '../maybe-promise';
import { createOpenApi, type Operation } from '../openapi';
import type { Policy } from '../rate-policy';
import type { PlaceOutcome, Store } from '../store';
import { createErrorReplies } from './error-reply';
import type { EventFeed } from '../feed/event-feed';
import { isExpensive, type Admission } from './admission';
import { createAuthorization } from './authorize';
import { bindHandlers, type BoundHandler } from './binding';
import type { HandlerDefinitions, OperationHandlers } from './define-handler';
import type { Reply } from './reply';
import { createReplyCheck } from './reply-check';
import { createRequestCheck, type RequestInputs } from './request-check';
import type { RequestContext } from './request-context';
import { createSecurity } from './security';
import { createWriter } from './stream';

/** The document's security scheme for API keys: the one the dispatcher checks. */
const BEARER = 'bearerAuth';

/** What the dispatcher of version V needs. */
export interface DispatcherOptions<V extends ApiVersion> {
  /** The version the document is served as: its operations answer under `/<version>`. */
  version: V;
  document: OpenAPIV3.Document;
  store: Store;
  logger: Logger;
  /** The handler module of each operation of the version (and of any operation a test's document adds). */
  definitions: Partial<HandlerDefinitions<V>>;
  /** Handlers that replace their module's, for tests that need a misbehaving one. */
  overrides?: Partial<OperationHandlers<V>> | undefined;
  /** The store's secret, for handlers that sign what they hand out. */
  secret: Buffer;
  /** The change feed's waiting requests and retention. */
  feed: EventFeed;
  /** The instance's admission of expensive work (lists, pages), shared by every version. */
  admission: Admission;
  /** Items per chunk of a streamed array. */
  chunkItems: number;
  /** Called for every reply the contract check stopped, streamed or not. */
  onViolation?: (operationId: string, version: ApiVersion) => void;
  /** Called for every request to an operation the document marks deprecated. */
  onDeprecatedCall?: (operationId: string, version: ApiVersion) => void;
  /** The rate-limit policies of every key without its own (PETSTORE_RATE_LIMIT); none when absent. */
  rateLimit?: readonly Policy[] | undefined;
  /** Hours a placement's Idempotency-Key is kept (DEFAULT_IDEMPOTENCY_HOURS when absent). */
  idempotencyHours?: number | undefined;
  /** Called with what each placement came to. */
  onPlacement?: (outcome: PlaceOutcome['outcome']) => void;
  /** Called for every request refused for its key's sake: the key expired, was revoked, lacks the operation's scope, or spent its limit. */
  onKeyRefused?: (reason: AuthRefusalReason) => void;
}

/** The request as the dispatcher sees it: method and raw path, percent-encoding intact. */
export interface RoutedRequest {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  /** The request's context: its id, and what each step learns of it (the version, the operation, the key). */
  context: RequestContext;
  /** The request body's bytes, when there were any; parsed only for an operation that declares a body. */
  body?: Buffer | undefined;
}

/** Answers one request with a reply checked against the document: at once when every step answered at once, else once the last settled. */
export type Dispatch = (request: RoutedRequest, res: ServerResponse) => MaybePromise<void>;

/**
 * Builds the dispatcher of one version's document. Each request runs these steps, in this order,
 * each in its own module; a step that has its answer in hand gives it at once, so a request whose
 * steps all answer at once (a miss, a 401, a 400, a 404 for an order SQLite read) is sent at once.
 *
 *   match          the operation, by method and path; a miss is a 404 or a 405    (openapi/)
 *   read body      a declared body, parsed: 415, 400                              (request-check.ts)
 *   authenticate   the operation's security requirements: 401                     (security.ts)
 *   authorize      the key's scopes (x-scopes): 403, or 401 where the operation    (authorize.ts)
 *                  declares no 403; then its rate limit: 429, or 503 where it
 *                  declares no 429; RateLimit fields where it declares them
 *   validate       parameters and body against the document, inputs converted: 400 (request-check.ts)
 *   admit          a list or a page waits for its turn, or is shed: 503           (admission.ts)
 *   handle         the operation's handler, given its typed inputs                (binding.ts)
 *   check          the reply against the document: a logged 500 when it breaks it  (reply-check.ts)
 *   write          whole, or a JSON array streamed item by item                   (stream.ts)
 *
 * Each step records what it learns in the request's context (request-context.ts): the version
 * and operation once matched, the key once authenticated. Whatever fails on the way becomes its
 * reply in error-reply.ts.
 */
export async function createDispatcher<V extends ApiVersion>(options: DispatcherOptions<V>): Promise<Dispatch> {
  const { version, document, store, logger, chunkItems } = options;
  const undeclaredQuery = undeclaredQueryPolicy(document);
  const api = await createOpenApi(document, { apiRoot: `/${version}`, undeclaredQuery });
  const errors = createErrorReplies(api.operations, (path) => api.methodsAt(path), logger, options.onKeyRefused);
  const bearer = bearerCheck(store);
  const authenticate = createSecurity(api.operations, new Map([[BEARER, (headers) => bearer(headers.authorization)]]));
  const requests = createRequestCheck(api, undeclaredQuery);
  const { handlers, mocked } = bindHandlers(api.operations, options.definitions, options.overrides ?? {}, {
    store,
    listChunkItems: chunkItems,
    secret: options.secret,
    feed: options.feed,
    idempotencyHours: options.idempotencyHours ?? DEFAULT_IDEMPOTENCY_HOURS,
    onPlacement: options.onPlacement ?? (() => undefined),
  });
  assertStatusesDeclared(document, `the ${version} document`);
  assertScopesDeclared(document, `the ${version} document`);
  const authorize = createAuthorization({
    document,
    operations: api.operations,
    store,
    defaultPolicies: options.rateLimit ?? [],
    errors,
  });
  if (mocked.length > 0)
    logger.warn({ apiVersion: version, operations: mocked }, 'operations answer mocks from the document until their handlers are written');
  const replies = createReplyCheck({
    api,
    document,
    errors,
    logger,
    onViolation: (operationId) => options.onViolation?.(operationId, version),
    onDeprecatedCall: (operationId) => options.onDeprecatedCall?.(operationId, version),
  });
  const write = createWriter({ replies, errors, logger, chunkItems });

  // The operations whose work grows with the store wait for admission; the rest never do.
  const expensive = new Set(api.operations.filter(isExpensive));

  /** Read body, authenticate, validate, admit, handle: the operation's reply, or the Error a step ended it with. */
  const respond = (operation: Operation, request: RoutedRequest, method: string, res: ServerResponse): MaybePromise<Reply> => {
    const { context } = request;
    const body = requests.body(operation, request);
    return andThen(authenticate(operation, request.headers), (security) => {
      if (!security.authenticated) return errors.unauthorized(context, security.refusal);
      if (security.keyName !== undefined) context.key = { name: security.keyName };
      return andThen(
        authorize(operation, security, context),
        (refusal) => refusal ?? proceed(operation, request, method, res, body, security.keyName),
      );
    });
  };

  /** Validate, admit, handle: the reply of a request that passed its key, scope and limit. */
  const proceed = (
    operation: Operation,
    request: RoutedRequest,
    method: string,
    res: ServerResponse,
    body: unknown,
    keyName: string | undefined,
  ): MaybePromise<Reply> => {
    const { context } = request;
    const handler = handlers.get(operation.operationId);
    if (handler === undefined) throw new Error(`no handler is registered for ${operation.operationId}`);
    const raw = { method, path: request.path, query: request.query, headers: request.headers, body };
    const inputs = requests.inputs(operation, raw, keyName);
    const admitted = expensive.has(operation) ? options.admission.admit(operation, res) : undefined;
    if (admitted === undefined) return handle(context, handler, inputs);
    return admitted.then(
      () => handle(context, handler, inputs),
      (err: unknown) => errors.thrown(err, context),
    );
  };

  /**
   * The handler's reply. What it throws (an ApiError for a 404, say) becomes its Error reply here,
   * where it is thrown: unwinding the steps above to the dispatcher's own catch costs a small
   * request a measurable share of its time (docs/performance.md, "Where the time goes").
   */
  const handle = (context: RequestContext, handler: BoundHandler, inputs: RequestInputs): MaybePromise<Reply> => {
    try {
      const reply = handler(inputs);
      return reply instanceof Promise ? reply.catch((err: unknown) => errors.thrown(err, context)) : reply;
    } catch (err) {
      return errors.thrown(err, context);
    }
  };

  /** Check, then write: the reply as the contract allows it, on the wire. */
  const send = (request: RoutedRequest, res: ServerResponse, reply: Reply): MaybePromise<void> => {
    const checked = replies.check(request.context, reply);
    return checked instanceof Promise ? checked.then((allowed) => write(request, res, allowed)) : write(request, res, checked);
  };

  return (request, res) => {
    const { context } = request;
    context.version = version;
    // match
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const operation = api.match({ method, path: request.path, headers: request.headers });
    if (operation === undefined) return send(request, res, errors.miss(request.path));
    context.operation = operation;
    context.handledBy = operation.operationId;
    let reply: MaybePromise<Reply>;
    try {
      reply = respond(operation, request, method, res);
    } catch (err) {
      reply = errors.thrown(err, context);
    }
    if (reply instanceof Promise) reply = reply.catch((err: unknown) => errors.thrown(err, context));
    return andThen(reply, (settled) => send(request, res, withRateLimit(settled, context.rateLimit)));
  };
}

/** A reply with the RateLimit fields its request's key earned (authorize.ts), when it earned them. */
function withRateLimit(reply: Reply, fields: RequestContext['rateLimit']): Reply {
  return fields === undefined ? reply : { ...reply, headers: { ...reply.headers, ...fields } };
}
