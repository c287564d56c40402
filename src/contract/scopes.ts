// This module imports nothing: scripts/check-documents.mjs loads it from source, before anything is
// built, so that the server and the check apply one rule.

/**
 * The operation's extension that names the scopes a key must hold to call it, every one of them.
 * OpenAPI 3.0 allows scopes in a security requirement only for OAuth 2 and OpenID Connect schemes,
 * not for a bearer API key, so the documents declare them here; the server reads them from here
 * and keeps no table of its own.
 */
export const SCOPES_EXTENSION = 'x-scopes';

/** A scope as the documents and the CLI write it: lower-case words joined by `:` (`orders:read`). */
const SCOPE = /^[a-z][a-z0-9_-]*(?::[a-z][a-z0-9_-]*)*$/;

/** Whether `value` is a scope's name. */
export function isScope(value: unknown): value is string {
  return typeof value === 'string' && SCOPE.test(value);
}

/** What the rule reads of an operation. */
export interface ScopedOperation {
  readonly operationId?: string | undefined;
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>> | undefined;
  readonly [SCOPES_EXTENSION]?: unknown;
}

/** What the rule reads of a document. */
export interface ScopedDocument {
  readonly paths?: Readonly<Record<string, unknown>> | undefined;
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>> | undefined;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The scopes an operation declares, or undefined when it declares none or not as a non-empty list of scopes. */
export function declaredScopes(operation: ScopedOperation): readonly string[] | undefined {
  const scopes = operation[SCOPES_EXTENSION];
  return Array.isArray(scopes) && scopes.length > 0 && scopes.every(isScope) ? scopes : undefined;
}

/** Whether security requirements leave an operation open: none at all, or an empty one among them (a key is then optional). */
function isOpen(security: ReadonlyArray<Readonly<Record<string, readonly string[]>>>): boolean {
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
}

/**
 * The scopes a request's key must hold for each secured operation of the document, by operationId:
 * those it declares. An open operation has none: a request it allows without a key is not refused
 * for the key it sent.
 */
export function operationScopes(document: ScopedDocument): Map<string, readonly string[]> {
  const scopes = new Map<string, readonly string[]>();
  for (const { operation } of operationsOf(document)) {
    const declared = declaredScopes(operation);
    if (operation.operationId !== undefined && declared !== undefined && !isOpen(operation.security ?? document.security ?? [])) {
      scopes.set(operation.operationId, declared);
    }
  }
  return scopes;
}

/** Every operation of a document, with its path and method. */
function* operationsOf(document: ScopedDocument): Generator<{ name: string; operation: ScopedOperation }> {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (typeof item !== 'object' || item === null) continue;
    for (const method of METHODS) {
      const operation = (item as Record<string, ScopedOperation | undefined>)[method];
      if (operation !== undefined) yield { name: operation.operationId ?? `${method.toUpperCase()} ${path}`, operation };
    }
  }
}

/**
 * Each secured operation that does not declare its scopes, worded for the operator: a key's scopes
 * are checked only against what the document declares, so an operation without a declaration
 * would be open to every key, and the server does not start with one.
 */
export function undeclaredScopes(document: ScopedDocument): string[] {
  const found: string[] = [];
  for (const { name, operation } of operationsOf(document)) {
    if (isOpen(operation.security ?? document.security ?? []) || declaredScopes(operation) !== undefined) continue;
    found.push(
      `${name} requires a key but declares no scopes: add '${SCOPES_EXTENSION}', a list of scopes like orders:read (lower-case words joined by ':')`,
    );
  }
  return found;
}

/** Every scope some operation of the documents declares, in the order first declared: the scopes a key can be given. */
export function scopesOf(documents: readonly ScopedDocument[]): string[] {
  const scopes = new Set<string>();
  for (const document of documents) {
    for (const { operation } of operationsOf(document)) for (const scope of declaredScopes(operation) ?? []) scopes.add(scope);
  }
  return [...scopes];
}

/** Throws, naming every operation as the check does, when a secured operation of the document declares no scopes. */
export function assertScopesDeclared(document: ScopedDocument, name: string): void {
  const found = undeclaredScopes(document);
  if (found.length > 0) throw new Error(`${name} cannot be served: ${found.join('; ')}`);
}
