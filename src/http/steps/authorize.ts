import { operationScopes } from '../../contract/scopes';
import { missingScopes, quotasOf, rateLimitFields, verdictOf } from '../../keys';
import { andThen } from '../../maybe-promise';
import type { Operation } from '../../openapi';
import type { Policy } from '../../rate-policy';
import type { RateCounter } from '../../store';
import type { ErrorReplies } from '../error-reply';
import type { Step } from './step';

/** What the authorization step of one document needs. */
export interface AuthorizationOptions {
  /** The document: each operation's scopes are read from it (its x-scopes), once. */
  document: Parameters<typeof operationScopes>[0];
  store: RateCounter;
  /** The policies of every key without its own (PETSTORE_RATE_LIMIT); none: no limit. */
  defaultPolicies: readonly Policy[];
  errors: Pick<ErrorReplies, 'insufficientScope' | 'rateLimited'>;
  /** The document's operations: those whose responses declare a `RateLimit` header get the RateLimit fields. */
  operations: readonly Operation[];
}

/**
 * authorize: the scope, then the limit. A request whose key lacks a scope the operation declares
 * is refused before it is counted: 403, or 401 where the operation declares no 403. One whose key
 * (or, without policies of its own, the deployment) has rate-limit policies is counted against them
 * in the store, exactly across instances, and refused, uncounted, when one is spent: 429, or 503
 * where it declares no 429. A key without policies costs no write. Where the operation declares
 * the RateLimit fields (v3), every reply to a counted request gets them, here: the refusal, or the
 * reply of the steps after it.
 */
export function authorize(options: AuthorizationOptions): Step {
  const { store, errors, defaultPolicies } = options;
  const scopes = operationScopes(options.document);
  const fielded = new Set(options.operations.filter(declaresRateLimit));
  return ({ operation, security }, next) => {
    if (security === undefined) throw new Error(`${operation.operationId} reached authorize unauthenticated`);
    const required = scopes.get(operation.operationId);
    if (required !== undefined) {
      const missing = missingScopes(required, security.scopes);
      if (missing.length > 0) return errors.insufficientScope(operation, required, missing);
    }
    const { keyName } = security;
    if (keyName === undefined) return next();
    const policies = security.policies ?? defaultPolicies;
    if (policies.length === 0) return next();
    return andThen(store.countRequest(keyName, quotasOf(policies)), ({ admitted, windows }) => {
      const verdict = verdictOf(policies, admitted, windows);
      const reply = verdict.admitted ? next() : errors.rateLimited(operation, verdict.retryAfter);
      if (!fielded.has(operation)) return reply;
      const fields = rateLimitFields(policies, verdict);
      return andThen(reply, (made) => ({ ...made, headers: { ...made.headers, ...fields } }));
    });
  };
}

/** Whether some response of the operation declares the `RateLimit` header. */
function declaresRateLimit(operation: Operation): boolean {
  return Object.values(operation.responses).some((response) => 'headers' in response && response.headers?.RateLimit !== undefined);
}
