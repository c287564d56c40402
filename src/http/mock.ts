import type { Operation } from 'openapi-backend';
import { exampleResponse } from '../contract/examples';
import type { AnyOperationHandler } from './handlers';
import type { Reply } from './reply';

/** The header that marks a reply as a mock built from the document, not an answer from the store. */
export const MOCK_HEADER = 'X-Mock';

/**
 * A handler that answers `operation` with the reply the document describes for its first success
 * status (see exampleResponse), marked `X-Mock: true`. The reply is built on the first call, and
 * goes through the same response check as any other: a document whose example contradicts its own
 * schema gets a 500 and a logged violation, not a wrong mock.
 */
export function mockHandler(operation: Operation): AnyOperationHandler {
  let reply: Reply | undefined;
  return async () => {
    if (reply === undefined) {
      const example = exampleResponse(operation);
      reply = { ...example, headers: { ...example.headers, [MOCK_HEADER]: 'true' } };
    }
    return reply;
  };
}
