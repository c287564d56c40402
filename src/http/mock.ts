import type { Operation } from 'openapi-backend';
import { exampleResponse } from '../contract/examples';
import type { OperationId } from '../contract/types';
import type { OperationHandler } from './handlers';
import type { Reply, SuccessReply } from './reply';

/** The header that marks a reply as a mock built from the document, not an answer from the store. */
export const MOCK_HEADER = 'X-Mock';

/**
 * A handler that answers `operation` with the reply the document describes for its first success
 * status (see exampleResponse), marked `X-Mock: true`. The reply is built on the first call, and
 * goes through the same response check as any other: a document whose example contradicts its own
 * schema gets a 500 and a logged violation, not a wrong mock.
 */
export function mockHandler<K extends OperationId>(operation: Operation): OperationHandler<K> {
  let reply: Reply | undefined;
  return async () => {
    if (reply === undefined) {
      const example = exampleResponse(operation);
      reply = { ...example, headers: { ...example.headers, [MOCK_HEADER]: 'true' } };
    }
    // The document built it, so it has the shape the generated types give this operation's reply.
    return reply as SuccessReply<K>;
  };
}
