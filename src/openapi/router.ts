import { OpenAPIRouter, type OpenAPIBackend, type Operation as AnyOperation, type ParsedRequest, type Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { StacklessError } from '../thrown';
import { isRecord } from '../records';

/** What a document does with query parameters its operations do not declare: ignore them, or refuse the request. */
export type UndeclaredQuery = 'ignore' | 'reject';

/** An operation of an OpenAPI 3.0 document, as the router matches it. */
export type Operation = AnyOperation<OpenAPIV3.Document>;

/**
 * openapi-backend's router with its per-request work done once. The stock router rebuilds the list
 * of operations (a lodash chain over the whole document) and compiles a RegExp per path template on
 * every request, and parses every request with lodash, `cookie` and `qs` even when it has no
 * cookies and no query. The document never changes after start-up, so this router builds the
 * operations and their patterns once, and parses the common request directly. Matching follows the stock router exactly: exact paths
 * first, then templates by specificity, 404 outside the API root or for no path, 405 for a path
 * without the method.
 */
export class CompiledRouter extends OpenAPIRouter<OpenAPIV3.Document> {
  private operations: Operation[] | undefined;
  private templates: Array<{ operation: Operation; pattern: RegExp; specificity: number }> | undefined;
  private readonly root: string;
  private readonly queryNames = new Map<Operation, Set<string>>();
  private readonly extractors = new Map<Operation, (path: string) => Record<string, string> | null>();

  /** What the document does with query parameters its operations do not declare. */
  readonly undeclaredQuery: UndeclaredQuery;

  /** `undeclaredQuery` is `ignore` unless given, as the stock router does. */
  constructor(opts: { definition: OpenAPIV3.Document; apiRoot: string; undeclaredQuery?: UndeclaredQuery }) {
    super(opts);
    this.root = opts.apiRoot.replace(/\/$/, '');
    this.undeclaredQuery = opts.undeclaredQuery ?? 'ignore';
  }

  /**
   * The stock normalisation (method lower case; path trimmed, with a leading slash and without a
   * query string), as a literal: the stock spread of the request over keys it already has sent V8
   * down its slow path, twice per request.
   */
  override normalizeRequest(req: Request): Request {
    return {
      method: req.method.trim().toLowerCase(),
      path: requestPath(req.path),
      headers: req.headers,
      query: req.query,
      body: bodyOf(req),
    };
  }

  /** The stock path normalisation (apiRoot stripped on a segment boundary, trailing slashes removed), with the root found once. */
  override normalizePath(pathInput: string): string {
    let path = pathInput.trim();
    if (this.root !== '') {
      if (path === this.root) path = '/';
      else if (path.startsWith(`${this.root}/`)) path = path.slice(this.root.length) || '/';
    }
    while (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    return path;
  }

  override getOperations(): Operation[] {
    this.operations ??= super.getOperations();
    return this.operations;
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict = false): Operation | undefined {
    const { path: rawPath, method } = this.normalizeRequest(req);
    // A miss is an expected answer (404, 405), and openapi-backend reads only the message of what
    // is thrown: no stack to capture, which costs more than the rest of the match.
    const fail = (message: string): undefined => {
      if (strict) throw new StacklessError(message);
      return undefined;
    };
    if (!this.underRoot(rawPath)) return fail('404-notFound: no route matches request');
    const path = this.normalizePath(rawPath);
    const operations = this.getOperations();
    const exact = operations.find((op) => op.path === path && op.method === method);
    if (exact) return exact;
    const matching = this.compiledTemplates().filter(({ pattern }) => pattern.test(path));
    if (matching.length === 0) return fail('404-notFound: no route matches request');
    const match = matching.find(({ operation }) => operation.method === method);
    return match ? match.operation : fail('405-methodNotAllowed: this method is not registered for the route');
  }

  /** Whether a raw path is the API root or below it (on a segment boundary). */
  private underRoot(rawPath: string): boolean {
    return this.root === '' || rawPath === this.root || rawPath.startsWith(`${this.root}/`);
  }

  /**
   * The methods the path `requested` answers to: those of the operations whose path is it or whose template
   * matches it, which are exactly the methods matchOperation finds an operation for (without asking
   * once per method). Upper case, in the document's order; empty outside the API root.
   */
  methodsAt(requested: string): string[] {
    const rawPath = requestPath(requested);
    if (!this.underRoot(rawPath)) return [];
    const path = this.normalizePath(rawPath);
    const methods = new Set<string>();
    for (const operation of this.getOperations()) if (operation.path === path) methods.add(operation.method);
    for (const { operation, pattern } of this.compiledTemplates()) if (pattern.test(path)) methods.add(operation.method);
    return [...methods].map((method) => method.toUpperCase());
  }

  /**
   * Parses a request as the stock router does, without its per-request lodash passes, cookie and
   * query parsing when there is nothing to parse, or recompiling the path template. Requests with
   * a body, a query string or cookies go to the stock parser, which handles every style.
   */
  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    const query = req.query;
    // A query string comes apart from the path, or (as the stock parser also reads it) within it.
    const hasQuery = (typeof query === 'string' ? query !== '' && query !== '?' : query !== undefined) || req.path.includes('?');
    const headers: Record<string, string | string[]> = {};
    for (const name of Object.keys(req.headers)) {
      const value = req.headers[name];
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
    if (bodyOf(req) !== undefined || hasQuery || Object.hasOwn(headers, 'cookie')) {
      const parsed = super.parseRequest(req, operation);
      const query: unknown = parsed.query;
      // A document that rejects undeclared parameters keeps them, for the input reader to name.
      return operation && this.undeclaredQuery === 'ignore' ? { ...parsed, query: this.declaredQuery(operation, query) } : parsed;
    }
    const { method, path } = this.normalizeRequest(req);
    const params = operation ? (this.paramsOf(operation, this.normalizePath(path)) ?? {}) : {};
    // A literal, not a spread of the request: spreading an object over keys it already has sends V8
    // down its slow path, which costs more than the rest of the parse together.
    return { method, path, params, headers, query: {}, cookies: {}, requestBody: undefined, body: undefined };
  }

  /**
   * Only the query parameters the operation declares: the others are ignored, as v1's API
   * description promises, rather than failing validation (a cache-busting `?_=1` is not an error).
   */
  private declaredQuery(operation: Operation, query: unknown): Record<string, unknown> {
    let names = this.queryNames.get(operation);
    if (!names) {
      names = new Set(
        (operation.parameters ?? []).filter((p): p is OpenAPIV3.ParameterObject => !('$ref' in p) && p.in === 'query').map((p) => p.name),
      );
      this.queryNames.set(operation, names);
    }
    const declared: Record<string, unknown> = {};
    if (!isRecord(query)) return declared;
    for (const [name, value] of Object.entries(query)) if (names.has(name)) declared[name] = value;
    return declared;
  }

  /** The path parameters of `path` under `operation`'s template, percent-decoded, as the stock parser gives them. */
  private paramsOf(operation: Operation, path: string): Record<string, string> | null {
    let extract = this.extractors.get(operation);
    if (!extract) {
      extract = paramExtractor(operation.path);
      this.extractors.set(operation, extract);
    }
    return extract(path);
  }

  /** Every operation's path template as a RegExp, most specific first, as the stock router orders them. */
  private compiledTemplates(): Array<{ operation: Operation; pattern: RegExp; specificity: number }> {
    this.templates ??= this.getOperations()
      .map((operation) => ({
        operation,
        pattern: new RegExp(templatePattern(operation.path)),
        specificity: operation.path.replace(/\{.*?\}/g, '').length,
      }))
      .sort((a, b) => b.specificity - a.specificity);
    return this.templates;
  }
}

/** A request's body as the library holds it: typed `any` there, it is whatever the caller parsed. */
export function bodyOf(req: Request): unknown {
  return req.body;
}

/** A request's path as the stock normalisation gives it: trimmed, with a leading slash, without a query string. */
function requestPath(path: string | undefined): string {
  let normalized = path?.trim() || '';
  if (!normalized.startsWith('/')) normalized = `/${normalized}`;
  const query = normalized.indexOf('?');
  return query === -1 ? normalized : normalized.slice(0, query);
}

function literal(part: string): string {
  return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function templatePattern(path: string): string {
  return `^${path
    .replace(/\{[^}]+\}/g, '\0')
    .split('\0')
    .map(literal)
    .join('[^/]+')}$`;
}

/**
 * What the stock parser (bath) does with a template: `{name}` matches any run of characters
 * other than `/`, and each value is percent-decoded. A value that cannot be decoded, or a name
 * given two different values, is no match.
 */
function paramExtractor(template: string): (path: string) => Record<string, string> | null {
  const names: string[] = [];
  const source = template
    .split(/(\{[A-Za-z0-9_-]+\})/)
    .map((part, i) => {
      if (i % 2 === 0) return literal(part);
      names.push(part.slice(1, -1));
      return '([^/]*)';
    })
    .join('');
  const pattern = new RegExp(`^${source}$`);
  return (path) => {
    const match = pattern.exec(path);
    if (match === null) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i += 1) {
      const name = names[i];
      const raw = match[i + 1];
      if (name === undefined || raw === undefined) return null;
      let value: string;
      try {
        value = decodeURIComponent(raw);
      } catch {
        return null;
      }
      if (Object.hasOwn(params, name) && params[name] !== value) return null;
      params[name] = value;
    }
    return params;
  };
}

/**
 * Puts a CompiledRouter in place of an initialised backend's stock router, for its routing and its
 * validator, and returns it. openapi-backend has no option for a router of one's own, so this sets
 * the two fields it reads (`api.router`, `api.validator.router`); that is why openapi-backend is
 * pinned exactly, and tests/openapi/router.test.ts checks that this router matches the stock one.
 */
export function useCompiledRouter(
  api: OpenAPIBackend<OpenAPIV3.Document>,
  apiRoot: string,
  undeclaredQuery?: UndeclaredQuery,
): CompiledRouter {
  const router = new CompiledRouter({ definition: api.definition, apiRoot, undeclaredQuery });
  api.router = router;
  api.validator.router = router;
  return router;
}
