import type { IncomingHttpHeaders } from 'node:http';
import type { Policy } from '../rate-policy';
import type { BearerResult, KeyRefusal } from '../keys';
import type { MaybePromise } from '../maybe-promise';
import type { Operation } from '../openapi';

/** What one security scheme's check found: a key's name, or why there is none (a store's failure included). */
export type SchemeResult = BearerResult;

/** The check of one security scheme of the document, given the request's headers. */
export type SchemeCheck = (headers: IncomingHttpHeaders) => MaybePromise<SchemeResult>;

/**
 * What the security step found for a request: whether one of the operation's requirements is met
 * (who is asking is known; whether the key may do this is steps/authorize.ts's question), and the key.
 */
export interface Security {
  readonly authenticated: boolean;
  /** The name of the key that authenticated the request, when one did. */
  readonly keyName: string | undefined;
  /** That key's scopes (none when no key authenticated the request). */
  readonly scopes: ReadonlySet<string>;
  /** That key's rate-limit policies; null for the deployment's, or when no key authenticated the request. */
  readonly policies: readonly Policy[] | null;
  /** Why the request was refused: no credential, a refused one, or the store's failure. */
  readonly refusal: KeyRefusal | Error | undefined;
}

/** An operation's requirements: the schemes each names (all must pass), and every scheme they name, once. */
interface Requirements {
  readonly allOf: readonly (readonly string[])[];
  readonly schemes: readonly string[];
}

/**
 * The security step of a document: each operation's requirements read once, and the checks of the
 * schemes the server knows. A request is authenticated when every scheme of one of its operation's
 * requirements passed (OpenAPI's rule, and openapi-backend's); no requirement means it is open. A
 * scheme without a check fails, so an operation is never opened by a scheme nobody checks; the
 * checks are a Map, so a scheme the document names `constructor` finds none.
 */
export function createSecurity(
  operations: readonly Operation[],
  schemes: ReadonlyMap<string, SchemeCheck>,
): (operation: Operation, headers: IncomingHttpHeaders) => MaybePromise<Security> {
  const requirements = new Map(operations.map((operation) => [operation.operationId, requirementsOf(operation)]));

  /** One scheme after another from `first`, each check's answer taken as soon as it has one. */
  const checkFrom = (
    required: Requirements,
    headers: IncomingHttpHeaders,
    first: number,
    results: Map<string, SchemeResult | undefined>,
  ): MaybePromise<Security> => {
    for (let i = first; i < required.schemes.length; i += 1) {
      const scheme = required.schemes[i];
      if (scheme === undefined) break;
      const result = schemes.get(scheme)?.(headers);
      if (result instanceof Promise) {
        return result.then((settled) => {
          results.set(scheme, settled);
          return checkFrom(required, headers, i + 1, results);
        });
      }
      results.set(scheme, result);
    }
    return verdict(required, results);
  };

  return (operation, headers) => checkFrom(requirements.get(operation.operationId) ?? requirementsOf(operation), headers, 0, new Map());
}

const NO_SCOPES: ReadonlySet<string> = new Set();

/** Whether every scheme one requirement names passed. */
function allPassed(names: readonly string[], results: ReadonlyMap<string, SchemeResult | undefined>): boolean {
  for (const name of names) {
    const result = results.get(name);
    if (result === undefined || !('keyName' in result)) return false;
  }
  return true;
}

function requirementsOf(operation: Operation): Requirements {
  const allOf = operation.security.map((requirement) => Object.keys(requirement));
  return { allOf, schemes: [...new Set(allOf.flat())] };
}

/** The security step's finding, once every scheme has been checked. */
function verdict(required: Requirements, results: ReadonlyMap<string, SchemeResult | undefined>): Security {
  let authenticated = required.allOf.length === 0;
  for (let i = 0; !authenticated && i < required.allOf.length; i += 1) authenticated = allPassed(required.allOf[i] ?? [], results);
  let keyName: string | undefined;
  let scopes: ReadonlySet<string> = NO_SCOPES;
  let policies: readonly Policy[] | null = null;
  let refusal: Security['refusal'];
  for (const result of results.values()) {
    if (result === undefined) continue;
    if ('keyName' in result) {
      if (keyName === undefined) ({ keyName, scopes, policies } = result);
    } else if (refusal === undefined || result.error instanceof Error || (refusal === 'missing' && result.error !== 'missing'))
      refusal = result.error;
  }
  return { authenticated, keyName, scopes, policies, refusal };
}
