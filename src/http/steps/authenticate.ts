import type { IncomingHttpHeaders } from 'node:http';
import { andThen, type MaybePromise } from '../../maybe-promise';
import type { Operation } from '../../openapi';
import type { ErrorReplies } from '../error-reply';
import type { Security } from '../security';
import type { Step } from './step';

/**
 * authenticate: the operation's security requirements (security.ts); 401 when none is met. Adds
 * `security`, and the key to the request's context for its log line.
 */
export function authenticate(
  check: (operation: Operation, headers: IncomingHttpHeaders) => MaybePromise<Security>,
  errors: Pick<ErrorReplies, 'unauthorized'>,
): Step {
  return (exchange, next) =>
    andThen(check(exchange.operation, exchange.request.headers), (security) => {
      const { context } = exchange.request;
      if (!security.authenticated) return errors.unauthorized(context, security.refusal);
      if (security.keyName !== undefined) context.key = { name: security.keyName };
      exchange.security = security;
      return next();
    });
}
