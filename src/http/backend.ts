import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorObject, ValidateFunction } from 'ajv';
import OpenAPIBackend, { type Operation, type ParsedRequest, type Request as BackendRequest } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { deprecationHeaders } from '../contract/deprecation';
import { cloneDocument } from '../contract/document';
import { usePrecompiledDocumentCheck } from '../contract/document-check';
import type { ApiVersion } from '../contract/types';
import { responseProblem } from '../contract/conformance';
import { compileNow, compileUsedValidators, createContractAjv, customizeAjv, describeAjvError } from '../contract/validation';
import { ApiError } from '../errors';
import { hashKey, parseBearer } from '../keys';
import type { Logger } from '../logger';
import { andThen, type MaybePromise } from '../maybe-promise';
import type { Store } from '../store';
import { bindHandlers } from './handlers';
import { compileInputReader, type InputReader } from './inputs';
import { negotiateCoding } from './encoding';
import { errorReply, fixedReply, isFixedReply, renderError, sendReply, type Reply } from './reply';
import type { RequestState } from './request-state';
import { compileRequestValidator, mediaTypeOf } from './request-validation';
import { useCompiledRouter, type CompiledRouter, type Operation as RoutedOperation } from './router';
import { compileArrayItems } from './serializers';
import { ItemViolation } from './item-writer';
import { sendJsonArray } from './stream';

/** The methods an `Allow` header lists, in the order it lists them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
const REALM = 'Bearer realm="petstore-orders"';
/** The document's security scheme for API keys: the one the dispatcher checks and names the caller by. */
const BEARER = 'bearerAuth';

const NOT_FOUND = fixedReply(new ApiError('not_found'));
const NO_KEY = fixedReply(new ApiError('unauthorized', undefined, { 'WWW-Authenticate': REALM }));
const INVALID_KEY = fixedReply(new ApiError('unauthorized', undefined, { 'WWW-Authenticate': `${REALM}, error="invalid_token"` }));

/** What the dispatcher needs. */
export interface BackendOptions {
  /** The version the document is served as: its operations answer under `/<version>`. */
  version: ApiVersion;
  document: OpenAPIV3.Document;
  store: Store;
  logger: Logger;
  /** The handler module of each operation (HandlerDefinitions of the version). */
  definitions: Readonly<Record<string, unknown>>;
  /** Handlers that replace their module's, for tests that need a misbehaving one. */
  overrides?: Readonly<Record<string, unknown>> | undefined;
  /** The store's secret, for handlers that sign what they hand out. */
  secret: Buffer;
  /** Items per chunk of a streamed array. */
  chunkItems: number;
  /** Called for every reply the contract check stopped, streamed or not. */
  onViolation?: (operationId: string, version: ApiVersion) => void;
  /** Called for every request to an operation the document marks deprecated. */
  onDeprecatedCall?: (operationId: string, version: ApiVersion) => void;
}

/** The request as the dispatcher sees it: method and raw path, percent-encoding intact. */
export interface RoutedRequest {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  /** The request's state in the pipeline: its id, and the operation the dispatcher matched. */
  state: RequestState;
  /** The request body's bytes, when there were any; parsed only for an operation that declares a body. */
  body?: Buffer | undefined;
}

/**
 * Dispatches one request by operationId and sends a response that has been checked against the
 * spec: at once when every step answered at once, else once the last has settled.
 */
export type Dispatch = (request: RoutedRequest, res: ServerResponse) => MaybePromise<void>;

type SecurityResult = { keyName: string } | { error: 'missing' | 'invalid' | Error };

const keyResult = (keyName: string | null): SecurityResult => (keyName === null ? { error: 'invalid' } : { keyName });
const storeFailed = (err: unknown): SecurityResult => ({ error: err instanceof Error ? err : new Error(String(err)) });

/** An operation's security requirements: the schemes each one names (all must pass), and every scheme they name, once. */
interface Requirements {
  allOf: readonly (readonly string[])[];
  schemes: readonly string[];
}

/**
 * Whether one of the requirements is met: every scheme it names passed (OpenAPI's rule, and
 * openapi-backend's). No requirements at all means the operation is open.
 */
function meetsOne(requirements: Requirements['allOf'], results: ReadonlyMap<string, SecurityResult | undefined>): boolean {
  if (requirements.length === 0) return true;
  for (const names of requirements) {
    let met = true;
    for (const name of names) {
      const result = results.get(name);
      if (result === undefined || 'error' in result) {
        met = false;
        break;
      }
    }
    if (met) return true;
  }
  return false;
}

/** An operation's requirements, as the security step reads them. */
function requirementsOf(operation: Operation): Requirements {
  const allOf = (operation.security ?? []).map((requirement) => Object.keys(requirement));
  return { allOf, schemes: [...new Set(allOf.flat())] };
}

/** What the security step found: each checked scheme's result, and whether one of the operation's requirements is met. */
interface Security {
  results: ReadonlyMap<string, SecurityResult | undefined>;
  authorized: boolean;
}

/**
 * Builds the dispatcher of one version's document on openapi-backend's router and validator:
 * routing by operationId, bearer-key security, request validation, the operation's handler, and a
 * check of every reply against the spec before it is sent.
 */
export async function createDispatcher(options: BackendOptions): Promise<Dispatch> {
  const { version, document, store, logger, chunkItems } = options;
  const apiRoot = `/${version}`;
  const onViolation = options.onViolation ?? (() => undefined);
  const onDeprecatedCall = options.onDeprecatedCall ?? (() => undefined);
  const deprecations = deprecationHeaders(document);
  const passedReplies: PassedReplies = { errors: new Set(), fixed: new WeakMap() };
  const contractAjv = createContractAjv(document);
  const validateError = contractAjv.compile<unknown>(document.components?.schemas?.Error as object);

  const api = new OpenAPIBackend({
    definition: cloneDocument(document),
    apiRoot,
    strict: true,
    customizeAjv,
  });
  usePrecompiledDocumentCheck(api);

  const failure = (operation: Operation | undefined, request: RoutedRequest, err: unknown): Reply =>
    renderError(err, logger, { requestId: request.state.requestId, operationId: operation?.operationId });

  /** A reply with the operation's deprecation headers, when it has them. */
  const withDeprecation = (reply: Reply, deprecation: Record<string, string> | undefined): Reply =>
    deprecation ? { ...reply, headers: { ...reply.headers, ...deprecation } } : reply;

  /** A reply the contract refuses: logged with what was wrong, counted, and never sent. */
  const violation = (
    request: RoutedRequest,
    operationId: string,
    status: number,
    problem: string,
    outcome: string,
    item?: unknown,
  ): void => {
    onViolation(operationId, version);
    const itemId = (item as { id?: unknown } | undefined)?.id;
    logger.error(
      { requestId: request.state.requestId, operationId, status, problem, ...(itemId === undefined ? {} : { itemId }) },
      `response violates the contract; ${outcome}`,
    );
  };

  /**
   * Checks a reply against the contract and sends it: the handler's, or the Error a failure became.
   * A reply the contract refuses is logged with what was wrong, counted, and never sent: the
   * client gets a 500 instead (or, for a streamed list already under way, a cut connection). A
   * reply with a body in hand is sent at once; a streamed one settles when its stream has.
   */
  const checkAndSend = (
    operation: Operation | undefined,
    request: RoutedRequest,
    res: ServerResponse,
    handlerReply: Reply,
  ): MaybePromise<void> => {
    request.state.handledBy = operation?.operationId;
    request.state.apiVersion = version;
    const deprecation = deprecations.get(operation?.operationId ?? '');
    if (deprecation !== undefined) onDeprecatedCall(operation!.operationId!, version);
    const reply = withDeprecation(handlerReply, deprecation);
    const operationId = operation?.operationId ?? 'none';
    const items = reply.stream && arrayItems.get(`${operationId} ${reply.status}`);
    const problem =
      reply.stream && !items
        ? `status ${reply.status} of ${operationId} is not a JSON array that can be streamed`
        : contractProblem(api, validateError, passedReplies, operation, reply);
    if (problem === null && (!reply.stream || !items)) {
      sendReply(res, reply);
      return;
    }
    const internalError = (): void => sendReply(res, withDeprecation(errorReply(new ApiError('internal_error')), deprecation));
    if (problem !== null) {
      const refuse = (): void => {
        violation(request, operationId, reply.status, problem, 'sending 500 instead');
        internalError();
      };
      return reply.stream ? reply.stream.close().then(refuse) : refuse();
    }
    const stream = reply.stream!;
    const writeItem = items!;
    const streamReply = async (): Promise<void> => {
      try {
        await sendJsonArray(res, stream, {
          status: reply.status,
          headers: reply.headers ?? {},
          writeItem,
          chunkItems,
          coding: negotiateCoding(request.headers),
          head: request.method === 'HEAD',
          onError: (err) => {
            if (err instanceof ItemViolation) violation(request, operationId, reply.status, err.problem, 'connection closed', err.item);
            else logger.error({ err, requestId: request.state.requestId, operationId }, 'stream failed; connection closed');
          },
        });
      } catch (err) {
        if (err instanceof ItemViolation) {
          violation(request, operationId, reply.status, err.problem, 'sending 500 instead', err.item);
          internalError();
        } else sendReply(res, withDeprecation(failure(operation, request, err), deprecation));
      }
    };
    return streamReply();
  };

  /** The reply to a request no operation matches: 404, or 405 with the path's methods when only the method is wrong. */
  const missReply = (path: string): Reply => {
    const allow = allowedMethods(router, path).join(', ');
    if (allow === '') return NOT_FOUND;
    let reply = notAllowed.get(allow);
    if (reply === undefined) {
      reply = fixedReply(new ApiError('method_not_allowed', undefined, { Allow: allow }));
      notAllowed.set(allow, reply);
    }
    return reply;
  };
  // One 405 per set of methods a path of the document answers to: as many as its paths, at most.
  const notAllowed = new Map<string, Reply>();

  /**
   * The security handler of each scheme the dispatcher can check: the document's bearer key. A Map,
   * so that a scheme the document names `constructor` or `__proto__` finds no handler, not Object's.
   */
  const securityHandlers = new Map<string, (headers: IncomingMessage['headers']) => MaybePromise<SecurityResult>>([
    [
      BEARER,
      (headers) => {
        const token = parseBearer(headers.authorization);
        if (token === null) return { error: 'missing' };
        // A store that answers in-process answers at once: the request's key check then takes no turn of the event loop.
        let keyName: MaybePromise<string | null>;
        try {
          keyName = store.findActiveKey(hashKey(token));
        } catch (err) {
          return storeFailed(err);
        }
        return keyName instanceof Promise ? keyName.then(keyResult, storeFailed) : keyResult(keyName);
      },
    ],
  ]);

  /**
   * 6. authenticate: each scheme the operation's requirements name is checked once; the request is
   * authorized when every scheme of one requirement passed (OpenAPI's rule, and openapi-backend's).
   * A scheme without a handler fails, so an operation can never be opened by a scheme nobody checks.
   */
  const authenticate = (operation: Operation, headers: IncomingMessage['headers']): MaybePromise<Security> =>
    checkSchemes(requirementsById.get(operation.operationId) ?? requirementsOf(operation), headers, 0, new Map());

  /** One scheme after another from `first`, each handler's answer taken as soon as it has one. */
  const checkSchemes = (
    requirements: Requirements,
    headers: IncomingMessage['headers'],
    first: number,
    results: Map<string, SecurityResult | undefined>,
  ): MaybePromise<Security> => {
    const { schemes } = requirements;
    for (let i = first; i < schemes.length; i += 1) {
      const scheme = schemes[i]!;
      const result = securityHandlers.get(scheme)?.(headers);
      if (result instanceof Promise) {
        return result.then((settled) => {
          results.set(scheme, settled);
          return checkSchemes(requirements, headers, i + 1, results);
        });
      }
      results.set(scheme, result);
    }
    return { results, authorized: meetsOne(requirements.allOf, results) };
  };

  /** The 401 for a request that met none of its operation's requirements; a 503 when the store could not be asked. */
  const unauthorizedReply = (operation: Operation, request: RoutedRequest, security: Security): Reply => {
    const result = security.results.get(BEARER);
    if (result && 'error' in result && result.error instanceof Error) return failure(operation, request, result.error);
    return result && 'error' in result && result.error === 'invalid' ? INVALID_KEY : NO_KEY;
  };

  /**
   * Steps 6 to 8 for a matched operation: authenticate, validate, then its handler with typed
   * inputs. A reply known without waiting (a 401 from a store that answers at once, a 400, a
   * handler's that answered at once) is answered at once; anything else comes as a promise.
   */
  const answer = (operation: RoutedOperation, request: RoutedRequest, routed: BackendRequest): MaybePromise<Reply> =>
    andThen(authenticate(operation, request.headers), (security) => authorized(operation, request, routed, security));

  /** Steps 7 and 8, once the security step has found what it found. */
  const authorized = (
    operation: RoutedOperation,
    request: RoutedRequest,
    routed: BackendRequest,
    security: Security,
  ): MaybePromise<Reply> => {
    if (!security.authorized) return unauthorizedReply(operation, request, security);
    const operationId = operation.operationId!;
    const read = inputReaders.get(operationId);
    const parsed = router.parseRequest(routed, operation);
    // The reader's values as they came: the validator coerces the parsed ones in place.
    const raw = {
      params: { ...(parsed.params as Record<string, unknown>) },
      query: copied(parsed.query as Record<string, unknown>),
      headers: request.headers,
    };
    // 7. validate
    const errors = validateRequest(routed, operation, parsed);
    if (errors) return errorReply(new ApiError('invalid_request', validationMessage(operation, parsed, raw, errors, read)));
    // 8. handle
    const handle = handlers.get(operationId);
    if (handle === undefined) return failure(operation, request, new Error(`no handler is registered for ${operationId}`));
    return handled(operation, request, () => {
      if (read === undefined) throw new Error(`no input reader for ${operationId}`);
      const keyName = (security.results.get(BEARER) as { keyName?: string } | undefined)?.keyName;
      // The inputs are typed per operation in OperationHandler; here, where every operation meets,
      // they are the converted values the reader built from the document.
      return handle({ ...read(raw), body: parsed.requestBody as unknown, keyName } as never);
    });
  };

  /** The handler's reply, at once when it answers at once; whatever it throws or rejects with becomes the Error reply. */
  const handled = (operation: Operation, request: RoutedRequest, call: () => MaybePromise<Reply>): MaybePromise<Reply> => {
    try {
      const reply = call();
      return reply instanceof Promise ? reply.catch((err: unknown) => failure(operation, request, err)) : reply;
    } catch (err) {
      return failure(operation, request, err);
    }
  };

  await api.init();
  compileUsedValidators(api);
  compileNow(validateError);
  const router = useCompiledRouter(api, apiRoot);
  const validateRequest = compileRequestValidator(api, router);
  const { handlers, mocked } = bindHandlers(api.getOperations(), options.definitions, options.overrides ?? {}, {
    store,
    listChunkItems: chunkItems,
    secret: options.secret,
  });
  if (mocked.length > 0) {
    logger.warn({ apiVersion: version, operations: mocked }, 'operations answer mocks from the document until their handlers are written');
  }
  const arrayItems = compileArrayItems(api.getOperations(), contractAjv);
  const inputReaders = new Map(
    api.getOperations().map((operation) => [operation.operationId, compileInputReader(operation, { undeclared: router.undeclaredQuery })]),
  );
  const requirementsById = new Map(api.getOperations().map((operation) => [operation.operationId, requirementsOf(operation)]));

  // The steps after routing (pipeline.ts), run in openapi-backend's order with its router and its
  // validator, but without its request handling, which parsed each request four times and wrapped
  // every step in promises: a 401 cost twice what it does now. A request whose steps all answer at
  // once (a miss, a 401, a 400, a 404 for an order SQLite read) is sent at once.
  return (request, res) => {
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const headers = request.headers as Record<string, string | string[]>;
    // 5. match
    const operation = router.matchOperation({ method, path: request.path, headers });
    if (operation === undefined) return checkAndSend(undefined, request, res, missReply(request.path));
    let reply: MaybePromise<Reply>;
    try {
      const body = request.body !== undefined && request.body.length > 0 ? requestBodyOf(operation, request) : undefined;
      reply = answer(operation, request, { method, path: request.path, query: request.query, headers, body });
    } catch (err) {
      reply = failure(operation, request, err);
    }
    // 9. check, send
    if (reply instanceof Promise) reply = reply.catch((err: unknown) => failure(operation, request, err));
    return andThen(reply, (settled) => checkAndSend(operation, request, res, settled));
  };
}

/** A copy of parsed query values that coercing the original cannot reach (a value may be an array or an object). */
function copied(query: Record<string, unknown>): Record<string, unknown> {
  for (const _ in query) return structuredClone(query);
  return {};
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body an operation gets: parsed JSON when it declares an `application/json` body and the
 * request is JSON (415 when it is another media type, 400 when it does not parse); nothing for an
 * operation that declares no body, which ignores one as v1 always has.
 */
function requestBodyOf(operation: Operation | undefined, request: RoutedRequest): unknown {
  const declared = (operation?.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content;
  if (declared === undefined || request.body === undefined) return undefined;
  const mediaType = mediaTypeOf(request.headers['content-type']);
  if (!Object.keys(declared).some((type) => type.toLowerCase() === mediaType)) {
    throw new ApiError('invalid_request', `The request body must be ${Object.keys(declared).join(' or ')}`, {}, 415);
  }
  if (mediaType !== 'application/json') return request.body.toString('utf8');
  try {
    return JSON.parse(utf8.decode(request.body)) as unknown;
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid JSON');
  }
}

/**
 * A message for a request that failed validation, naming the parameter: the input reader's, when a
 * parameter breaks its type's strict rule (`05` for an id), else the validator's first error.
 */
function validationMessage(
  operation: Operation,
  parsed: ParsedRequest,
  raw: Parameters<InputReader>[0],
  errors: readonly ErrorObject[],
  read: InputReader | undefined,
): string {
  try {
    read?.(raw);
  } catch (err) {
    if (err instanceof ApiError) return err.message;
    throw err;
  }
  const requestBody = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
  if (requestBody?.required && parsed.requestBody === undefined) return 'The request body is required';
  const first = errors[0];
  if (!first) return 'The request is malformed';
  return describeAjvError(first)
    .replace(/^(path|query|header)\./, '')
    .replace(/^requestBody\b/, 'body');
}

/** The methods a path answers to, for the `Allow` header of a 405: in METHODS' order, HEAD after GET. */
function allowedMethods(router: CompiledRouter, path: string): string[] {
  const found = new Set(router.methodsAt(path));
  if (found.has('GET')) found.add('HEAD');
  return METHODS.filter((method) => found.has(method));
}

function errorKey(operation: Operation | undefined, reply: Reply): string | undefined {
  if (!reply.error) return undefined;
  return `${operation?.operationId ?? '-'} ${reply.status} ${reply.error.code} ${JSON.stringify(reply.headers ?? {})}`;
}

/** The replies whose check cannot come out differently the next time, because one like them passed. */
interface PassedReplies {
  /**
   * Error replies made by ApiError differ only in `message`, which the Error schema types as any
   * string: once one (operation, status, code, headers) has passed, every later one conforms.
   */
  readonly errors: Set<string>;
  /** A fixed reply (reply.ts) never changes: once it has passed for an operation, it passes again. */
  readonly fixed: WeakMap<Reply, Set<string>>;
}

/** responseProblem (the spec's check of a reply), skipping the replies `passed` vouches for. */
function contractProblem(
  api: OpenAPIBackend,
  validateError: ValidateFunction,
  passed: PassedReplies,
  operation: Operation | undefined,
  reply: Reply,
): string | null {
  const memory = rememberedAs(passed, operation, reply);
  if (memory?.set.has(memory.key)) return null;
  const problem = responseProblem(api, validateError, operation, reply);
  if (problem === null) memory?.set.add(memory.key);
  return problem;
}

/** Where `passed` remembers a reply like this one, and under what key; undefined for a reply it cannot vouch for. */
function rememberedAs(
  passed: PassedReplies,
  operation: Operation | undefined,
  reply: Reply,
): { set: Set<string>; key: string } | undefined {
  if (isFixedReply(reply)) {
    let set = passed.fixed.get(reply);
    if (set === undefined) passed.fixed.set(reply, (set = new Set()));
    return { set, key: operation?.operationId ?? '-' };
  }
  const key = errorKey(operation, reply);
  return key === undefined ? undefined : { set: passed.errors, key };
}
