import { exampleResponse } from '../contract/examples';
import type { ApiVersion, OperationIdOf } from '../contract/types';
import type { Operation } from '../openapi';
import type { OperationHandler } from './define-handler';
import type { SuccessReply } from './reply';

/** The header that marks a reply as a mock built from the document, not an answer from the store. */
export const MOCK_HEADER = 'X-Mock';

/**
 * A handler that answers `operation` with the reply the document describes for its first success
 * status (see exampleResponse), marked `X-Mock: true`. The reply is built on the first call, and
 * goes through the same response check as any other: a document whose example contradicts its own
 * schema gets a 500 and a logged violation, not a wrong mock.
 */
export function mockHandler<V extends ApiVersion, K extends OperationIdOf<V>>(operation: Operation): OperationHandler<V, K> {
  let reply: unknown;
  return async () => {
    if (reply === undefined) {
      const example = exampleResponse(operation);
      reply = { ...example, headers: { ...example.headers, [MOCK_HEADER]: 'true' } };
    }
    // The document's own example of a declared success of K, which is what the generated
    // SuccessReply<V, K> describes; the response check holds it to the document like any reply.
    return reply as SuccessReply<V, K>;
  };
}
