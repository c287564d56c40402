// This module imports nothing: scripts/scaffold.mjs and scripts/check-documents.mjs load it from
// source, before anything is built, so that the server, the check and the scaffold apply one rule.

/** What the rule reads of an operation: the document's own fields, `$ref`s left as they are. */
export interface OperationShape {
  readonly operationId?: string | undefined;
  readonly parameters?: readonly unknown[] | undefined;
  readonly requestBody?: unknown;
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>> | undefined;
  readonly responses?: Readonly<Record<string, unknown>> | undefined;
}

/** What the rule reads of a document: its operations by path and method, and its default security. */
export interface DocumentShape {
  readonly paths?: Readonly<Record<string, unknown>> | undefined;
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>> | undefined;
}

/** A status the server itself answers for an operation, and why it can. */
export interface FrameworkStatus {
  readonly status: number;
  readonly reason: string;
  /** The declared status that answers in its place when the operation does not declare it, if any may. */
  readonly fallback?: number;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The statuses the server answers for an operation before its handler runs, whatever the handler
 * does: 401 for a secured operation, and 403 and 429 for its key's scopes and rate limit (answered
 * as 401 and 503 where it declares those instead, as v1 and v2 do); 400 for one with parameters or
 * a body, 415 and 413 for one with a body (answered as 400 where the operation declares 400 but not them). Limits hit before
 * any operation is known (408, 431, and a 413 before routing) are the whole document's, not an
 * operation's, and are not listed.
 */
export function frameworkStatuses(operation: OperationShape, documentSecurity: DocumentShape['security']): FrameworkStatus[] {
  const statuses: FrameworkStatus[] = [];
  const security = operation.security ?? documentSecurity ?? [];
  const open = security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
  if (!open) {
    statuses.push({ status: 401, reason: 'it is secured: a missing or refused key' });
    statuses.push({ status: 403, reason: 'it is secured: a key without its scopes', fallback: 401 });
    statuses.push({ status: 429, reason: "it is secured: a key over its rate limit (or 503, v1's and v2's answer)", fallback: 503 });
  }
  const body = operation.requestBody !== undefined;
  if (body || (operation.parameters ?? []).some((parameter) => !isOptionalHeader(parameter))) {
    statuses.push({
      status: 400,
      reason: body ? 'it takes a request body: malformed or invalid' : 'it takes parameters: malformed or invalid',
    });
  }
  if (body) {
    statuses.push({ status: 415, reason: 'it takes a request body: a media type it does not take', fallback: 400 });
    statuses.push({ status: 413, reason: 'it takes a request body: a body over the limit', fallback: 400 });
  }
  return statuses;
}

/**
 * Whether a parameter is a header the client may leave out. Such a header that breaks its schema,
 * sent to an operation that declares no 400, is ignored as if it had not been sent (a conditional
 * `If-None-Match` then gets the whole reply), so it alone does not make an operation answer 400.
 * A parameter given by `$ref` counts as one that can fail.
 */
export function isOptionalHeader(parameter: unknown): boolean {
  if (typeof parameter !== 'object' || parameter === null) return false;
  const { in: location, required } = parameter as { in?: unknown; required?: unknown };
  return location === 'header' && required !== true;
}

/** Whether an operation declares a status: exactly, by its class (`4XX`), or by `default`. */
export function declares(operation: OperationShape, status: number): boolean {
  const responses = operation.responses ?? {};
  return String(status) in responses || `${String(status)[0]}XX` in responses || 'default' in responses;
}

/** A framework status an operation can answer but does not declare, nor any status that may answer in its place. */
export interface UndeclaredStatus {
  readonly operationId: string;
  readonly status: number;
  readonly reason: string;
}

/** Every framework status some operation of the document can answer without declaring it, in document order. */
export function undeclaredFrameworkStatuses(document: DocumentShape): UndeclaredStatus[] {
  const found: UndeclaredStatus[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (typeof item !== 'object' || item === null) continue;
    for (const method of METHODS) {
      const operation = (item as Record<string, OperationShape | undefined>)[method];
      if (operation === undefined) continue;
      for (const { status, reason, fallback } of frameworkStatuses(operation, document.security)) {
        if (declares(operation, status) || (fallback !== undefined && declares(operation, fallback))) continue;
        found.push({ operationId: operation.operationId ?? `${method.toUpperCase()} ${path}`, status, reason });
      }
    }
  }
  return found;
}

/** How the check, the scaffold and the server word one undeclared status. */
export function describeUndeclared({ operationId, status, reason }: UndeclaredStatus): string {
  return `${operationId} can answer ${status} (${reason}) but does not declare it: add a '${status}' response`;
}

/** Throws, naming every operation and status as the check does, when the document leaves a framework status undeclared. */
export function assertStatusesDeclared(document: DocumentShape, name: string): void {
  const found = undeclaredFrameworkStatuses(document);
  if (found.length > 0) throw new Error(`${name} cannot be served: ${found.map(describeUndeclared).join('; ')}`);
}
