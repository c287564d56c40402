import type { ServerResponse } from 'node:http';
import type { OpenAPIV3 } from 'openapi-types';
import { undeclaredQueryPolicy } from '../contract/document';
import type { ServiceOptions } from '../config';
import { assertStatusesDeclared } from '../contract/framework-statuses';
import type { ApiVersion } from '../contract/types';
import { assertScopesDeclared } from '../contract/scopes';
import { bearerCheck } from '../keys';
import type { Logger } from '../logger';
import type { AuthRefusalReason } from '../metrics';
import { andThen, type MaybePromise } from '../maybe-promise';
import { createOpenApi } from '../openapi';
import type { PlaceOutcome, Store } from '../store';
import { createErrorReplies } from './error-reply';
import type { EventFeed } from '../feed/event-feed';
import type { Admission } from './admission';
import { bindHandlers } from './binding';
import type { HandlerDefinitions, OperationHandlers } from './define-handler';
import { endResumedTogether, type Reply } from './reply';
import { createReplyCheck } from './reply-check';
import { createRequestCheck } from './request-check';
import { createSecurity } from './security';
import { admit } from './steps/admit';
import { authenticate } from './steps/authenticate';
import { authorize } from './steps/authorize';
import { handle } from './steps/handle';
import { readBody } from './steps/read-body';
import { runSteps, type Resume, type RoutedRequest, type Step } from './steps/step';
import { validate } from './steps/validate';
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
  /** What the service does by the deployment's choice. */
  service: ServiceOptions;
  /** Called for every reply the contract check stopped, streamed or not. */
  onViolation?: (operationId: string, version: ApiVersion) => void;
  /** Called for every request to an operation the document marks deprecated. */
  onDeprecatedCall?: (operationId: string, version: ApiVersion) => void;
  /** Called with what each placement came to. */
  onPlacement?: (outcome: PlaceOutcome['outcome']) => void;
  /** Called for every request refused for its key's sake: the key expired, was revoked, lacks the operation's scope, or spent its limit. */
  onKeyRefused?: (reason: AuthRefusalReason) => void;
}

export type { RoutedRequest } from './steps/step';

/** Answers one request with a reply checked against the document: at once when every step answered at once, else once the last settled. */
export type Dispatch = (request: RoutedRequest, res: ServerResponse) => MaybePromise<void>;

/**
 * Builds the dispatcher of one version's document. A request is matched to its operation, then runs
 * its steps (`steps` below, each in its own module in steps/), then its reply is checked and written.
 * A step that has its answer in hand gives it at once, so a request whose steps all answer at once
 * (a miss, a 401, a 400, a 404 for an order SQLite read) is sent at once.
 *
 *   match          the operation, by method and path; a miss is a 404 or a 405    (openapi/)
 *   steps          read body, authenticate, authorize, validate, admit, handle    (steps/)
 *   check          the reply against the document: a logged 500 when it breaks it  (reply-check.ts)
 *   write          whole, or a JSON array streamed item by item                   (stream.ts)
 *
 * Whatever fails on the way becomes its reply in error-reply.ts, which also counts every refusal
 * of a key for its own sake.
 */
export async function createDispatcher<V extends ApiVersion>(options: DispatcherOptions<V>): Promise<Dispatch> {
  const { version, document, store, logger, service } = options;
  const chunkItems = service.listChunkItems;
  const undeclaredQuery = undeclaredQueryPolicy(document);
  const api = await createOpenApi(document, { apiRoot: `/${version}`, undeclaredQuery });
  const errors = createErrorReplies(api.operations, (path) => api.methodsAt(path), logger, options.onKeyRefused);
  const bearer = bearerCheck(store);
  const security = createSecurity(api.operations, new Map([[BEARER, (headers) => bearer(headers.authorization)]]));
  const requests = createRequestCheck(api, undeclaredQuery);
  const { handlers, mocked } = bindHandlers(api.operations, options.definitions, options.overrides ?? {}, {
    store,
    service,
    secret: options.secret,
    feed: options.feed,
    onPlacement: options.onPlacement ?? (() => undefined),
  });
  assertStatusesDeclared(document, `the ${version} document`);
  assertScopesDeclared(document, `the ${version} document`);
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
  const write = createWriter({ replies, errors, logger, chunkItems, laterTurn: options.admission.laterTurn });

  const authorization = { document, operations: api.operations, store, defaultPolicies: service.rateLimit, errors };
  /** A request's steps after its match, in order: each may refuse it, or go on to the next (steps/step.ts). */
  const steps: readonly Step[] = [
    readBody(requests), // 415, 400; adds body
    authenticate(security, errors), // 401; adds security, and the key to the context
    authorize(authorization), // 403 or 401, 429 or 503; the RateLimit fields of every reply
    validate(requests), // 400; adds inputs
    admit(options.admission, api.operations), // 503 when shed
    handle(handlers), // the reply
  ];

  /**
   * A request resumed after a wait reads with the others resumed in its turn (Store.readTogether),
   * and its reply leaves with theirs once they have run (endResumedTogether).
   */
  const resume: Resume = (run) => {
    endResumedTogether();
    return store.readTogether(run);
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
    return andThen(runSteps(steps, { request, res, operation, method }, errors, resume), (reply) => send(request, res, reply));
  };
}
