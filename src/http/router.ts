import { OpenAPIRouter, type Operation as AnyOperation, type ParsedRequest, type Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';

type Operation = AnyOperation<OpenAPIV3.Document>;

/**
 * openapi-backend's router with its per-request work done once. The stock router rebuilds the list
 * of operations (a lodash chain over the whole document) and compiles a RegExp per path template on
 * every request, and the dispatcher parses each request three times. The document never changes
 * after start-up, so this router builds the operations and their patterns once, and parses a
 * request at most once per operation. Matching follows the stock router exactly: exact paths
 * first, then templates by specificity, 404 outside the API root or for no path, 405 for a path
 * without the method.
 */
export class CompiledRouter extends OpenAPIRouter<OpenAPIV3.Document> {
  private operations: Operation[] | undefined;
  private templates: Array<{ operation: Operation; pattern: RegExp; specificity: number }> | undefined;
  private readonly root: string;
  private readonly parsed = new WeakMap<Request, Map<Operation | undefined, ParsedRequest>>();

  constructor(opts: { definition: OpenAPIV3.Document; apiRoot: string }) {
    super(opts);
    this.root = opts.apiRoot.replace(/\/$/, '');
  }

  override getOperations(): Operation[] {
    this.operations ??= super.getOperations();
    return this.operations;
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict = false): Operation | undefined {
    const { path: rawPath, method } = this.normalizeRequest(req);
    const fail = (message: string): undefined => {
      if (strict) throw new Error(message);
      return undefined;
    };
    if (this.root !== '' && rawPath !== this.root && !rawPath.startsWith(`${this.root}/`)) {
      return fail('404-notFound: no route matches request');
    }
    const path = this.normalizePath(rawPath);
    const operations = this.getOperations();
    const exact = operations.find((op) => op.path === path && op.method === method);
    if (exact) return exact;
    const matching = this.compiledTemplates().filter(({ pattern }) => pattern.test(path));
    if (matching.length === 0) return fail('404-notFound: no route matches request');
    const match = matching.find(({ operation }) => operation.method === method);
    return match ? match.operation : fail('405-methodNotAllowed: this method is not registered for the route');
  }

  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    let byOperation = this.parsed.get(req);
    if (!byOperation) {
      byOperation = new Map();
      this.parsed.set(req, byOperation);
    }
    let parsed = byOperation.get(operation);
    if (!parsed) {
      parsed = super.parseRequest(req, operation);
      byOperation.set(operation, parsed);
    }
    // Each caller gets its own parameter objects: the validator coerces them in place, and a
    // coerced value must never reach a handler that parses the raw string strictly.
    return {
      ...parsed,
      params: { ...parsed.params },
      query: { ...parsed.query },
      headers: { ...parsed.headers },
      cookies: { ...parsed.cookies },
    };
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

function templatePattern(path: string): string {
  const literal = (part: string): string => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `^${path.replace(/\{[^}]+\}/g, '\0').split('\0').map(literal).join('[^/]+')}$`;
}
