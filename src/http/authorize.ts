import { operationScopes } from '../contract/scopes';
import { missingScopes, quotasOf, rateLimitFields, verdictOf } from '../keys';
import { andThen, type MaybePromise } from '../maybe-promise';
import type { Operation } from '../openapi';
import type { Policy } from '../rate-policy';
import type { Store } from '../store';
import type { ErrorReplies } from './error-reply';
import type { Reply } from './reply';
import type { RequestContext } from './request-context';
import type { Security } from './security';

/** What the authorization step of one document needs. */
export interface AuthorizationOptions {
  /** The document: each operation's scopes are read from it (its x-scopes), once. */
  document: Parameters<typeof operationScopes>[0];
  store: Pick<Store, 'countRequest'>;
  /** The policies of every key without its own (PETSTORE_RATE_LIMIT); none: no limit. */
  defaultPolicies: readonly Policy[];
  errors: Pick<ErrorReplies, 'insufficientScope' | 'rateLimited'>;
  /** The document's operations: those whose responses declare a `RateLimit` header get the RateLimit fields. */
  operations: readonly Operation[];
}

/**
 * The step after the key's: the scope, then the limit. A request whose key lacks a scope the
 * operation declares is refused before it is counted; one whose key (or, without policies of its
 * own, the deployment) has rate-limit policies is counted against them in the store, exactly
 * across instances, and refused, uncounted, when one is spent. A key without policies costs no
 * write. Where the operation declares the RateLimit fields (v3), a counted request's context
 * gets them, for every reply to it. Answers the refusal, or undefined when the request may go on:
 * at once unless the count must wait for the store.
 */
export function createAuthorization(
  options: AuthorizationOptions,
): (operation: Operation, security: Security, context: RequestContext) => MaybePromise<Reply | undefined> {
  const { store, errors, defaultPolicies } = options;
  const scopes = operationScopes(options.document);
  const fielded = new Set(options.operations.filter(declaresRateLimit));
  return (operation, security, context) => {
    const required = scopes.get(operation.operationId);
    if (required !== undefined) {
      const missing = missingScopes(required, security.scopes);
      if (missing.length > 0) return errors.insufficientScope(operation, required, missing);
    }
    const { keyName } = security;
    if (keyName === undefined) return undefined;
    const policies = security.policies ?? defaultPolicies;
    if (policies.length === 0) return undefined;
    return andThen(store.countRequest(keyName, quotasOf(policies)), ({ admitted, windows }) => {
      const verdict = verdictOf(policies, admitted, windows);
      if (fielded.has(operation)) context.rateLimit = rateLimitFields(policies, verdict);
      if (verdict.admitted) return undefined;
      return errors.rateLimited(operation, verdict.retryAfter);
    });
  };
}

/** Whether some response of the operation declares the `RateLimit` header. */
function declaresRateLimit(operation: Operation): boolean {
  return Object.values(operation.responses).some((response) => 'headers' in response && response.headers?.RateLimit !== undefined);
}
